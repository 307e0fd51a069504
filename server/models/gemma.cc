// Gemma, Gemma-2 and Gemma-3's text model: transformers' GemmaModel /
// GemmaForCausalLM (modeling_gemma.py), Gemma2Model / Gemma2ForCausalLM
// (modeling_gemma2.py) and Gemma3TextModel / Gemma3ForCausalLM over a
// Gemma3TextConfig (modeling_gemma3.py, 4.51.3; model_type "gemma3_text"):
// a head_dim of their own, attention biases where attention_bias, lm_head
// tied by default; Gemma-2 adds a norm before and after the MLP; Gemma-3
// keeps those and adds q_norm and k_norm to the attention.

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// Any of them: a layer is self_attn (q, k, v, o all with attention_bias;
// for Gemma-3, q_norm and k_norm), mlp, input_layernorm,
// post_attention_layernorm and, from Gemma-2 on, pre_feedforward_layernorm
// and post_feedforward_layernorm.
absl::Status BuildGemma(const HfConfig& cfg, absl::string_view architecture,
                        int generation, ParamBuilder& b, ModelDescription& d) {
  // The config classes keep a null num_key_value_heads or head_dim as
  // None, which their attention cannot size (no fallback): refused.
  CHUNKPLAN_RETURN_IF_ERROR(cfg.Size("num_key_value_heads").status());
  CHUNKPLAN_RETURN_IF_ERROR(cfg.Size("head_dim").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(bool bias, cfg.Flag("attention_bias"));
  const LayerStyle style{.qkv_bias = bias,
                         .o_bias = bias,
                         .qk_norm = generation >= 3,
                         .feed_forward_norms = generation >= 2};
  CHUNKPLAN_RETURN_IF_ERROR(BuildGatedDecoder(cfg, architecture, style,
                                              /*mlp_bias=*/false, b, d));
  if (generation == 1) {  // Gemma-2's soft-capping and Gemma-3's layers: not
                          // modelled
    ModelLlamaLayer(cfg, "gelu_pytorch_tanh", d);
    d.traits.norm = "gemma_rms";
    d.traits.embed_scale = true;  // GemmaModel's normalizer
  } else {
    d.traits.not_estimated = absl::StrCat(
        "Gemma-", generation,
        "'s layer (soft-capped scores, four norms) is not modelled");
  }
  return absl::OkStatus();
}

absl::Status BuildGemma1(const HfConfig& cfg, absl::string_view architecture,
                         ParamBuilder& b, ModelDescription& d) {
  return BuildGemma(cfg, architecture, /*generation=*/1, b, d);
}

absl::Status BuildGemma2(const HfConfig& cfg, absl::string_view architecture,
                         ParamBuilder& b, ModelDescription& d) {
  return BuildGemma(cfg, architecture, /*generation=*/2, b, d);
}

absl::Status BuildGemma3(const HfConfig& cfg, absl::string_view architecture,
                         ParamBuilder& b, ModelDescription& d) {
  return BuildGemma(cfg, architecture, /*generation=*/3, b, d);
}

}  // namespace

// GemmaConfig's defaults (configuration_gemma.py: Gemma 7B).
const Family& GemmaFamily() {
  static const Family family{"gemma",
                             {"GemmaForCausalLM", "GemmaModel"},
                             R"({
        "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576,
        "num_hidden_layers": 28, "num_attention_heads": 16,
        "num_key_value_heads": 16, "head_dim": 256, "attention_bias": false,
        "tie_word_embeddings": true})",
                             &BuildGemma1};
  return family;
}

// Gemma2Config's defaults (configuration_gemma2.py: Gemma-2 2B).
const Family& Gemma2Family() {
  static const Family family{"gemma2",
                             {"Gemma2ForCausalLM", "Gemma2Model"},
                             R"({
        "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
        "num_hidden_layers": 26, "num_attention_heads": 8,
        "num_key_value_heads": 4, "head_dim": 256, "attention_bias": false,
        "tie_word_embeddings": true})",
                             &BuildGemma2};
  return family;
}

// Gemma3TextConfig's defaults (configuration_gemma3.py, 4.51.3: Gemma-3's
// 2B-like text shape, a vocabulary of 262,208).
const Family& Gemma3TextFamily() {
  static const Family family{"gemma3_text",
                             {"Gemma3ForCausalLM", "Gemma3TextModel"},
                             R"({
        "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
        "num_hidden_layers": 26, "num_attention_heads": 8,
        "num_key_value_heads": 4, "head_dim": 256, "attention_bias": false,
        "tie_word_embeddings": true})",
                             &BuildGemma3};
  return family;
}

}  // namespace chunkplan::models
