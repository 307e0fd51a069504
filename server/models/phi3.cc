// Phi-3: transformers' Phi3Model and Phi3ForCausalLM (modeling_phi3.py,
// 4.51.3): q, k and v fused in one qkv_proj, registered after o_proj, and
// the MLP's gate and up fused in one gate_up_proj; RoPE over
// int(head_dim * partial_rotary_factor) dimensions; resid_pdrop's dropout
// on each branch.

#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// Phi3DecoderLayer.forward's operations: input_layernorm, qkv_proj (q, k,
// v its slices), o_proj, post_attention_layernorm, gate_up_proj,
// down_proj.
constexpr absl::string_view kPhi3LayerOps[] = {
    "input_layernorm",          "self_attn.qkv_proj", "self_attn.o_proj",
    "post_attention_layernorm", "mlp.gate_up_proj",   "mlp.down_proj"};

// RoPE's width: Phi3RotaryEmbedding's dim = int(head_dim *
// partial_rotary_factor), its inv_freq over arange(0, dim, 2), so cos and
// sin 2 ceil(dim / 2) wide; the reason where that is not from 1 to
// head_dim.
absl::StatusOr<uint64_t> RotaryWidth(const HfConfig& cfg, uint64_t head_dim) {
  CHUNKPLAN_ASSIGN_OR_RETURN(double factor,
                             cfg.Number("partial_rotary_factor", 1.0));
  const double dim = static_cast<double>(head_dim) * factor;
  if (dim >= 1.0 && dim < static_cast<double>(head_dim) + 1.0) {
    const uint64_t width = (static_cast<uint64_t>(dim) + 1) / 2 * 2;
    if (width <= head_dim) return width;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("partial_rotary_factor: the rotary width must be from 1 "
                   "to head_dim (",
                   head_dim, ")"));
}

// The layer the activation estimate models: LLaMA's (ModelLlamaLayer) with
// the fused projections, resid_pdrop's dropouts and the rotary width.
void ModelPhi3Layer(const HfConfig& cfg, uint64_t head_dim,
                    ModelDescription& d) {
  ModelLlamaLayer(cfg, "silu", d);
  d.traits.fused_qkv = d.traits.fused_gate_up = true;
  if (!d.traits.not_estimated.empty()) return;
  const absl::StatusOr<bool> dropout = cfg.NonZeroProbability("resid_pdrop");
  if (!dropout.ok()) {
    d.traits.not_estimated = std::string(dropout.status().message());
    return;
  }
  d.traits.hidden_dropout = *dropout;
  const absl::StatusOr<uint64_t> width = RotaryWidth(cfg, head_dim);
  if (!width.ok()) {
    d.traits.not_estimated = std::string(width.status().message());
    return;
  }
  d.traits.rotary_dim = *width;
}

// Phi3DecoderLayer: self_attn (o_proj, then qkv_proj), mlp (gate_up_proj,
// down_proj), input_layernorm, post_attention_layernorm.
absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(Decoder decoder, ReadDecoder(cfg, architecture));
  const HeadDims& dims = decoder.dims;
  // kv_width <= q_width: 3 * q_width bounds the fused width.
  CHUNKPLAN_RETURN_IF_ERROR(
      Product({3, dims.q_width}, "3 * num_attention_heads * head_dim")
          .status());
  const uint64_t qkv = dims.q_width + 2 * dims.kv_width;
  CHUNKPLAN_ASSIGN_OR_RETURN(
      uint64_t gate_up, Product({2, decoder.inter}, "2 * intermediate_size"));
  SetDecoderFacts(decoder.shape, dims, decoder.inter, d);
  const uint64_t h = decoder.shape.hidden;
  CausalLm(
      b, architecture, decoder.shape,
      [&](uint64_t) {
        b.In("self_attn", [&] {
          Linear(b, "o_proj", dims.q_width, h, /*bias=*/false);
          Linear(b, "qkv_proj", h, qkv, /*bias=*/false);
        });
        b.In("mlp", [&] {
          Linear(b, "gate_up_proj", h, gate_up, /*bias=*/false);
          Linear(b, "down_proj", decoder.inter, h, /*bias=*/false);
        });
        Norms(b, h, {"input_layernorm", "post_attention_layernorm"});
        for (absl::string_view op : kPhi3LayerOps) b.Op({op});
      },
      /*operations=*/true);
  ModelPhi3Layer(cfg, dims.head_dim, d);
  return absl::OkStatus();
}

}  // namespace

// Phi3Config's defaults (configuration_phi3.py: Phi-3-mini).
const Family& Phi3Family() {
  static const Family family{"phi3",
                             {"Phi3ForCausalLM", "Phi3Model"},
                             R"({
        "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192,
        "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": null, "head_dim": null,
        "tie_word_embeddings": false})",
                             &Build};
  return family;
}

}  // namespace chunkplan::models
