// Gemma and Gemma-2: transformers' GemmaModel / GemmaForCausalLM
// (modeling_gemma.py) and Gemma2Model / Gemma2ForCausalLM
// (modeling_gemma2.py): a head_dim of their own, attention biases where
// attention_bias, lm_head tied by default; Gemma-2 adds a norm before and
// after the MLP.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// GemmaConfig's defaults (configuration_gemma.py: Gemma 7B).
const nlohmann::json& GemmaDefaults() {
  static const nlohmann::json* const defaults =
      new nlohmann::json{{"vocab_size", 256000},
                         {"hidden_size", 3072},
                         {"intermediate_size", 24576},
                         {"num_hidden_layers", 28},
                         {"num_attention_heads", 16},
                         {"num_key_value_heads", 16},
                         {"head_dim", 256},
                         {"attention_bias", false},
                         {"tie_word_embeddings", true}};
  return *defaults;
}

// Gemma2Config's defaults (configuration_gemma2.py: Gemma-2 2B).
const nlohmann::json& Gemma2Defaults() {
  static const nlohmann::json* const defaults =
      new nlohmann::json{{"vocab_size", 256000},
                         {"hidden_size", 2304},
                         {"intermediate_size", 9216},
                         {"num_hidden_layers", 26},
                         {"num_attention_heads", 8},
                         {"num_key_value_heads", 4},
                         {"head_dim", 256},
                         {"attention_bias", false},
                         {"tie_word_embeddings", true}};
  return *defaults;
}

// Either family: a layer is self_attn (q, k, v, o all with attention_bias),
// mlp, then input_layernorm, post_attention_layernorm and, for Gemma-2,
// pre_feedforward_layernorm and post_feedforward_layernorm.
absl::Status BuildGemma(const HfConfig& cfg, absl::string_view architecture,
                        bool gemma2, ParamBuilder& b, ModelDescription& d) {
  // The config classes keep a null num_key_value_heads or head_dim as
  // None, which their attention cannot size (no fallback): refused.
  CHUNKPLAN_RETURN_IF_ERROR(cfg.Size("num_key_value_heads").status());
  CHUNKPLAN_RETURN_IF_ERROR(cfg.Size("head_dim").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(DecoderShape shape, ReadDecoderShape(cfg));
  CHUNKPLAN_ASSIGN_OR_RETURN(HeadDims dims, ReadHeadDims(cfg, shape.hidden));
  CHUNKPLAN_ASSIGN_OR_RETURN(uint64_t inter, cfg.Size("intermediate_size"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool bias, cfg.Flag("attention_bias"));
  SetDecoderFacts(shape, dims, inter, d);
  const uint64_t h = shape.hidden;
  CausalLm(b, architecture, shape, [&](uint64_t) {
    Attention(b, dims, h, bias, bias);
    b.In("mlp", [&] { GatedMlp(b, h, inter, /*bias=*/false); });
    Norms(b, h, {"input_layernorm", "post_attention_layernorm"});
    if (gemma2) {
      Norms(b, h, {"pre_feedforward_layernorm", "post_feedforward_layernorm"});
    }
  });
  return absl::OkStatus();
}

absl::Status BuildGemma1(const nlohmann::json& config,
                         absl::string_view architecture, ParamBuilder& b,
                         ModelDescription& d) {
  return BuildGemma(HfConfig(config, GemmaDefaults()), architecture,
                    /*gemma2=*/false, b, d);
}

absl::Status BuildGemma2(const nlohmann::json& config,
                         absl::string_view architecture, ParamBuilder& b,
                         ModelDescription& d) {
  return BuildGemma(HfConfig(config, Gemma2Defaults()), architecture,
                    /*gemma2=*/true, b, d);
}

}  // namespace

const Family& GemmaFamily() {
  static const Family family{
      "gemma", {"GemmaForCausalLM", "GemmaModel"}, &BuildGemma1};
  return family;
}

const Family& Gemma2Family() {
  static const Family family{
      "gemma2", {"Gemma2ForCausalLM", "Gemma2Model"}, &BuildGemma2};
  return family;
}

}  // namespace chunkplan::models
