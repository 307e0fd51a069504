// LLaMA, LLaMA-2 and LLaMA-3/3.x (model_type "llama"): transformers'
// LlamaModel and LlamaForCausalLM (modeling_llama.py); LLaMA-3.2's small
// models tie lm_head to embed_tokens through tie_word_embeddings.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// LlamaConfig's defaults (configuration_llama.py: LLaMA-7B's shape).
const nlohmann::json& Defaults() {
  static const nlohmann::json* const defaults = new nlohmann::json{
      {"vocab_size", 32000},        {"hidden_size", 4096},
      {"intermediate_size", 11008}, {"num_hidden_layers", 32},
      {"num_attention_heads", 32},  {"num_key_value_heads", nullptr},
      {"head_dim", nullptr},        {"attention_bias", false},
      {"mlp_bias", false},          {"tie_word_embeddings", false}};
  return *defaults;
}

absl::Status Build(const nlohmann::json& config, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  const HfConfig cfg(config, Defaults());
  CHUNKPLAN_ASSIGN_OR_RETURN(DecoderShape shape, ReadDecoderShape(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(HeadDims dims, ReadHeadDims(cfg, shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inter, cfg.Size("intermediate_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool attention_bias, cfg.Flag("attention_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool mlp_bias, cfg.Flag("mlp_bias"));
  SetDecoderFacts(shape, dims, inter, d);
  // LlamaDecoderLayer: self_attn (o_proj too takes attention_bias), mlp,
  // input_layernorm, post_attention_layernorm.
  CausalLm(b, architecture, shape, [&](uint64_t) {
    Attention(b, dims, shape.hidden, attention_bias, attention_bias);
    b.In("mlp", [&] { GatedMlp(b, shape.hidden, inter, mlp_bias); });
    Norms(b, shape.hidden, {"input_layernorm", "post_attention_layernorm"});
  });
  return absl::OkStatus();
}

}  // namespace

const Family& LlamaFamily() {
  static const Family family{
      "llama", {"LlamaForCausalLM", "LlamaModel"}, &Build};
  return family;
}

}  // namespace chunkplan::models
