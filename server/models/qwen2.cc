// Qwen2 and Qwen2.5 (model_type "qwen2"): transformers' Qwen2Model and
// Qwen2ForCausalLM (modeling_qwen2.py), LLaMA's layer with biases on q, k
// and v (none on o_proj); Qwen2.5's small models tie lm_head.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// Qwen2Config's defaults (configuration_qwen2.py).
const nlohmann::json& Defaults() {
  static const nlohmann::json* const defaults = new nlohmann::json{
      {"vocab_size", 151936},       {"hidden_size", 4096},
      {"intermediate_size", 22016}, {"num_hidden_layers", 32},
      {"num_attention_heads", 32},  {"num_key_value_heads", 32},
      {"head_dim", nullptr},        {"tie_word_embeddings", false}};
  return *defaults;
}

absl::Status Build(const nlohmann::json& config, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  const HfConfig cfg(config, Defaults());
  CHUNKPLAN_ASSIGN_OR_RETURN(DecoderShape shape, ReadDecoderShape(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(HeadDims dims, ReadHeadDims(cfg, shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inter, cfg.Size("intermediate_size"));
  SetDecoderFacts(shape, dims, inter, d);
  // Qwen2DecoderLayer: self_attn, mlp, input_layernorm,
  // post_attention_layernorm.
  CausalLm(b, architecture, shape, [&](uint64_t) {
    Attention(b, dims, shape.hidden, /*qkv_bias=*/true, /*o_bias=*/false);
    b.In("mlp", [&] { GatedMlp(b, shape.hidden, inter, /*bias=*/false); });
    Norms(b, shape.hidden, {"input_layernorm", "post_attention_layernorm"});
  });
  return absl::OkStatus();
}

}  // namespace

const Family& Qwen2Family() {
  static const Family family{
      "qwen2", {"Qwen2ForCausalLM", "Qwen2Model"}, &Build};
  return family;
}

}  // namespace chunkplan::models
