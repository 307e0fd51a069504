// Gemma, Gemma-2 and Gemma-3's text model: transformers' GemmaModel /
// GemmaForCausalLM (modeling_gemma.py), Gemma2Model / Gemma2ForCausalLM
// (modeling_gemma2.py) and Gemma3TextModel / Gemma3ForCausalLM over a
// Gemma3TextConfig (modeling_gemma3.py, 4.51.3; model_type "gemma3_text"):
// a head_dim of their own, attention biases where attention_bias, lm_head
// tied by default; Gemma-2 adds a norm before and after the MLP; Gemma-3
// keeps those and adds q_norm and k_norm to the attention.

#include <optional>
#include <span>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// Gemma2DecoderLayer.forward's operations: input_layernorm, q_proj,
// k_proj, v_proj, o_proj, post_attention_layernorm (of o_proj's output),
// pre_feedforward_layernorm, gate_proj, up_proj, down_proj,
// post_feedforward_layernorm.
constexpr absl::string_view kGemma2LayerOps[] = {"input_layernorm",
                                                 "self_attn.q_proj",
                                                 "self_attn.k_proj",
                                                 "self_attn.v_proj",
                                                 "self_attn.o_proj",
                                                 "post_attention_layernorm",
                                                 "pre_feedforward_layernorm",
                                                 "mlp.gate_proj",
                                                 "mlp.up_proj",
                                                 "mlp.down_proj",
                                                 "post_feedforward_layernorm"};

// Gemma-2's layer as the activation estimate models it: Gemma's norms and
// normalizer, four norms a layer, the MLP's act from hidden_activation, the
// eager scores and the logits soft-capped where attn_logit_softcapping and
// final_logit_softcapping are not null (Gemma2Config: 50.0, 30.0).
void ModelGemma2Layer(const HfConfig& cfg, ModelDescription& d) {
  ModelLlamaLayer(cfg, "gelu_pytorch_tanh", d, "hidden_activation");
  d.traits.norm = "gemma_rms";
  d.traits.embed_scale = d.traits.four_norms = true;
  if (!d.traits.not_estimated.empty()) return;
  for (const auto& [key, trait] :
       {std::pair{"attn_logit_softcapping", &d.traits.attn_softcap},
        std::pair{"final_logit_softcapping", &d.traits.final_softcap}}) {
    const absl::StatusOr<bool> set = cfg.NumberNotNull(key, /*absent=*/true);
    if (!set.ok()) {
      d.traits.not_estimated = std::string(set.status().message());
      return;
    }
    *trait = *set;
  }
}

// Gemma3DecoderLayer.forward's operations: Gemma-2's, with q_norm and
// k_norm (Gemma3Attention: after q_proj, k_proj and v_proj, before RoPE).
constexpr absl::string_view kGemma3LayerOps[] = {"input_layernorm",
                                                 "self_attn.q_proj",
                                                 "self_attn.k_proj",
                                                 "self_attn.v_proj",
                                                 "self_attn.q_norm",
                                                 "self_attn.k_norm",
                                                 "self_attn.o_proj",
                                                 "post_attention_layernorm",
                                                 "pre_feedforward_layernorm",
                                                 "mlp.gate_proj",
                                                 "mlp.up_proj",
                                                 "mlp.down_proj",
                                                 "post_feedforward_layernorm"};

// Gemma-3's layer (modeling_gemma3.py, 4.51.3) as the activation estimate
// models it: Gemma-2's four norms and act, q_norm and k_norm (GemmaRMSNorms
// per head), two rotary tables (the global one and rope_local_base_freq's
// for the sliding layers, layer i sliding where (i + 1) %
// sliding_window_pattern != 0, default 6), the logits soft-capped where
// final_logit_softcapping is not null (Gemma3TextConfig: None). 4.51.3's
// Gemma3Attention passes no softcap to the attention function:
// attn_logit_softcapping changes nothing.
void ModelGemma3Layer(const HfConfig& cfg, uint64_t layers,
                      ModelDescription& d) {
  ModelLlamaLayer(cfg, "gelu_pytorch_tanh", d, "hidden_activation");
  d.traits.norm = "gemma_rms";
  d.traits.four_norms = d.traits.qk_norm = d.traits.local_rotary = true;
  // Gemma3TextScaledWordEmbedding's embed_scale is a buffer (model state),
  // what its mul keeps: no activation of its own.
  d.traits.embed_scale = false;
  if (!d.traits.not_estimated.empty()) return;
  const absl::StatusOr<std::optional<uint64_t>> pattern =
      cfg.OptionalSize("sliding_window_pattern");
  const absl::StatusOr<bool> softcap =
      cfg.NumberNotNull("final_logit_softcapping", /*absent=*/false);
  for (const absl::Status& st : {pattern.status(), softcap.status()}) {
    if (!st.ok()) {
      d.traits.not_estimated = std::string(st.message());
      return;
    }
  }
  // (sliding_window changes the sliding layers' mask values only: read,
  // no term)
  cfg.Has("sliding_window");
  const uint64_t step = pattern->value_or(6);
  d.traits.both_rotary_used = step > 1 && layers >= step;
  d.traits.final_softcap = *softcap;
}

// GemmaDecoderLayer.forward (modeling_gemma.py, 4.51.3) runs LLaMA's
// operations in LLaMA's order (kLlamaLayerOps): input_layernorm (GemmaRMSNorm
// takes its weight in `1.0 + self.weight.float()`), q_proj, k_proj, v_proj,
// o_proj, post_attention_layernorm, GemmaMLP's gate_proj, up_proj, down_proj;
// GemmaModel's normalizer is a tensor made in forward, no parameter.
//
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
  const LayerStyle style{
      .qkv_bias = bias,
      .o_bias = bias,
      .qk_norm = generation >= 3,
      .feed_forward_norms = generation >= 2,
      .forward_ops = generation == 2
                         ? std::span<const absl::string_view>(kGemma2LayerOps)
                     : generation == 3
                         ? std::span<const absl::string_view>(kGemma3LayerOps)
                         : std::span<const absl::string_view>(kLlamaLayerOps)};
  CHUNKPLAN_RETURN_IF_ERROR(BuildGatedDecoder(cfg, architecture, style,
                                              /*mlp_bias=*/false, b, d));
  if (generation == 1) {
    ModelLlamaLayer(cfg, "gelu_pytorch_tanh", d);
    d.traits.norm = "gemma_rms";
    d.traits.embed_scale = true;  // GemmaModel's normalizer
  } else if (generation == 2) {
    ModelGemma2Layer(cfg, d);
  } else {
    ModelGemma3Layer(cfg, d.num_layers, d);
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
