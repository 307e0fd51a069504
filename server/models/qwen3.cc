// Qwen3 (model_type "qwen3"): transformers' Qwen3Model and Qwen3ForCausalLM
// (modeling_qwen3.py, 4.51.3): LLaMA's layer with q_norm and k_norm (RMS
// norms of head_dim) after o_proj where Qwen2 has q, k and v biases; every
// projection biased where attention_bias; the small models tie lm_head.

#include "common/status_macros.h"
#include "server/models/decoder.h"
#include "server/models/family.h"

namespace chunkplan::models {
namespace {

// Qwen3Attention.forward: q_norm(q_proj(x)), k_norm(k_proj(x)), v_proj(x),
// then o_proj; the layer around it in LLaMA's order.
constexpr absl::string_view kLayerOps[] = {
    "input_layernorm",  "self_attn.q_proj",
    "self_attn.q_norm", "self_attn.k_proj",
    "self_attn.k_norm", "self_attn.v_proj",
    "self_attn.o_proj", "post_attention_layernorm",
    "mlp.gate_proj",    "mlp.up_proj",
    "mlp.down_proj"};

// Qwen3DecoderLayer: self_attn (q, k, v, o, q_norm, k_norm), mlp,
// input_layernorm, post_attention_layernorm.
absl::Status Build(const HfConfig& cfg, absl::string_view architecture,
                   ParamBuilder& b, ModelDescription& d) {
  // Qwen3Config keeps a null head_dim as None, which Qwen3Attention cannot
  // size (it falls back to hidden / heads only where the key is missing,
  // and the config class always sets it): refused.
  CHUNKPLAN_RETURN_IF_ERROR(cfg.Size("head_dim").status());
  CHUNKPLAN_ASSIGN_OR_RETURN(bool bias, cfg.Flag("attention_bias"));
  const LayerStyle style{.qkv_bias = bias,
                         .o_bias = bias,
                         .qk_norm = true,
                         .forward_ops = kLayerOps};
  CHUNKPLAN_RETURN_IF_ERROR(
      BuildGatedDecoder(cfg, architecture, style, /*mlp_bias=*/false, b, d));
  ModelLlamaLayer(cfg, "silu", d);
  d.traits.qk_norm = true;  // Qwen3Attention: q_norm, k_norm per head
  return absl::OkStatus();
}

}  // namespace

// Qwen3Config's defaults (configuration_qwen3.py, 4.51.3).
const Family& Qwen3Family() {
  // ColossalAI's Qwen3Policy (shardformer/policies/qwen3.py): lm_head is a
  // plain Linear1D_Col (no vocabulary padding); q_norm, k_norm stay whole.
  static const TpPolicy tp{
      .file = "qwen3",
      .rules = DecoderTpRules(TpLayer::kColumn),
      .kv_heads_key = "num_key_value_heads",
      // get_lm_forward_with_dist_cross_entropy
      // (modeling/qwen3.py): as Qwen2's.
      .causal_lm = {.modelled = true,
                    .logits_fp32 = true,
                    .loss_fp32 = true,
                    .sp_group_assert = "qwen3.py:479-481"}};
  static const Family family{"qwen3",
                             {"Qwen3ForCausalLM", "Qwen3Model"},
                             R"({
        "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
        "num_hidden_layers": 32, "num_attention_heads": 32,
        "num_key_value_heads": 32, "head_dim": 128, "attention_bias": false,
        "tie_word_embeddings": false})",
                             &Build,
                             &tp};
  return family;
}

}  // namespace chunkplan::models
