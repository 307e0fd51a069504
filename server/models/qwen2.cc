// Qwen2 and Qwen2.5 (model_type "qwen2"): transformers' Qwen2Model and
// Qwen2ForCausalLM (modeling_qwen2.py), LLaMA's layer with biases on q, k
// and v (none on o_proj); Qwen2.5's small models tie lm_head.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// Qwen2DecoderLayer: self_attn, mlp, input_layernorm,
// post_attention_layernorm; forward in LLaMA's order (kLlamaLayerOps).
absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_RETURN_IF_ERROR(BuildGatedDecoder(
      cfg, architecture, {.qkv_bias = true, .forward_ops = kLlamaLayerOps},
      /*mlp_bias=*/false, b, d));
  ModelLlamaLayer(cfg, "silu", d);
  return absl::OkStatus();
}

}  // namespace

// Qwen2Config's defaults (configuration_qwen2.py).
const Family& Qwen2Family() {
  // ColossalAI's Qwen2Policy (shardformer/policies/qwen2.py).
  static const TpPolicy tp{
      .file = "qwen2",
      .rules = DecoderTpRules(TpLayer::kVocab),
      .kv_heads_key = "num_key_value_heads",
      // get_lm_forward_with_dist_cross_entropy
      // (modeling/qwen2.py): logits.float(), the
      // loss in logits.dtype (fp32).
      .causal_lm = {.modelled = true,
                    .logits_fp32 = true,
                    .loss_fp32 = true,
                    .sp_group_assert = "qwen2.py:493-495"}};
  static const Family family{"qwen2",
                             {"Qwen2ForCausalLM", "Qwen2Model"},
                             R"({
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
        "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 32, "head_dim": null,
        "tie_word_embeddings": false})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
