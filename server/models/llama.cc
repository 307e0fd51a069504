// LLaMA, LLaMA-2 and LLaMA-3/3.x (model_type "llama"): transformers'
// LlamaModel and LlamaForCausalLM (modeling_llama.py); LLaMA-3.2's small
// models tie lm_head to embed_tokens through tie_word_embeddings.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// LlamaDecoderLayer: self_attn (o_proj too takes attention_bias), mlp
// (mlp_bias), input_layernorm, post_attention_layernorm; forward runs them
// in kLlamaLayerOps' order (the norms first and between).
absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  CHUNKPLAN_ASSIGN_OR_RETURN(bool attention_bias, cfg.Flag("attention_bias"));
  CHUNKPLAN_ASSIGN_OR_RETURN(bool mlp_bias, cfg.Flag("mlp_bias"));
  const LayerStyle style{.qkv_bias = attention_bias,
                         .o_bias = attention_bias,
                         .forward_ops = kLlamaLayerOps};
  CHUNKPLAN_RETURN_IF_ERROR(
      BuildGatedDecoder(cfg, architecture, style, mlp_bias, b, d));
  ModelLlamaLayer(cfg, "silu", d);
  return absl::OkStatus();
}

}  // namespace

// LlamaConfig's defaults (configuration_llama.py: LLaMA-7B's shape).
const Family& LlamaFamily() {
  // ColossalAI's LlamaPolicy (shardformer/policies/llama.py).
  static const TpPolicy tp{
      .file = "llama",
      .rules = DecoderTpRules(TpLayer::kVocab),
      .kv_heads_key = "num_key_value_heads",
      .kv_heads_at_least_tp = true,
      // llama_for_causal_lm_forward
      // (modeling/llama.py): 16-bit logits, the
      // model's dtype for the loss.
      .causal_lm = {.modelled = true, .sp_group_assert = "llama.py:503-505"}};
  static const Family family{"llama",
                             {"LlamaForCausalLM", "LlamaModel"},
                             R"({
        "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
        "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": null, "head_dim": null, "attention_bias": false,
        "mlp_bias": false, "tie_word_embeddings": false})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
