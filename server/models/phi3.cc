// Phi-3: transformers' Phi3Model and Phi3ForCausalLM (modeling_phi3.py):
// q, k and v fused in one qkv_proj, registered after o_proj, and the MLP's
// gate and up fused in one gate_up_proj.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"
#include "server/models/layers.h"

namespace chunkplan::models {
namespace {

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
  CausalLm(b, architecture, decoder.shape, [&](uint64_t) {
    b.In("self_attn", [&] {
      Linear(b, "o_proj", dims.q_width, h, /*bias=*/false);
      Linear(b, "qkv_proj", h, qkv, /*bias=*/false);
    });
    b.In("mlp", [&] {
      Linear(b, "gate_up_proj", h, gate_up, /*bias=*/false);
      Linear(b, "down_proj", decoder.inter, h, /*bias=*/false);
    });
    Norms(b, h, {"input_layernorm", "post_attention_layernorm"});
  });
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
