// Phi-3: transformers' Phi3Model and Phi3ForCausalLM (modeling_phi3.py):
// q, k and v fused in one qkv_proj, registered after o_proj, and the MLP's
// gate and up fused in one gate_up_proj.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

// Phi3Config's defaults (configuration_phi3.py: Phi-3-mini).
const nlohmann::json& Defaults() {
  static const nlohmann::json* const defaults = new nlohmann::json{
      {"vocab_size", 32064},       {"hidden_size", 3072},
      {"intermediate_size", 8192}, {"num_hidden_layers", 32},
      {"num_attention_heads", 32}, {"num_key_value_heads", nullptr},
      {"head_dim", nullptr},       {"tie_word_embeddings", false}};
  return *defaults;
}

absl::Status Build(const nlohmann::json& config, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  const HfConfig cfg(config, Defaults());
  CHUNKPLAN_ASSIGN_OR_RETURN(DecoderShape shape, ReadDecoderShape(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(HeadDims dims, ReadHeadDims(cfg, shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inter, cfg.Size("intermediate_size"));
  // kv_width <= q_width: 3 * q_width bounds the sum.
  CHUNKPLAN_RETURN_IF_ERROR(
      Product({3, dims.q_width}, "3 * num_attention_heads * head_dim")
          .status());
  const uint64_t qkv = dims.q_width + 2 * dims.kv_width;
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t gate_up,
                             Product({2, inter}, "2 * intermediate_size"));
  SetDecoderFacts(shape, dims, inter, d);
  const uint64_t h = shape.hidden;
  // Phi3DecoderLayer: self_attn (o_proj, then qkv_proj), mlp (gate_up_proj,
  // down_proj), input_layernorm, post_attention_layernorm.
  CausalLm(b, architecture, shape, [&](uint64_t) {
    b.In("self_attn", [&] {
      Linear(b, "o_proj", dims.q_width, h, /*bias=*/false);
      Linear(b, "qkv_proj", h, qkv, /*bias=*/false);
    });
    b.In("mlp", [&] {
      Linear(b, "gate_up_proj", h, gate_up, /*bias=*/false);
      Linear(b, "down_proj", inter, h, /*bias=*/false);
    });
    Norms(b, h, {"input_layernorm", "post_attention_layernorm"});
  });
  return absl::OkStatus();
}

}  // namespace

const Family& Phi3Family() {
  static const Family family{"phi3", {"Phi3ForCausalLM", "Phi3Model"}, &Build};
  return family;
}

}  // namespace chunkplan::models
