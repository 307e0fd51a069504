#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_MLA_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_MLA_H_

// DeepSeek-V3's layer in the activation estimate (docs/plan.md,
// "DeepSeek-V3"): what multi-head latent attention and DeepseekV3MoE save
// for backward under torch >= 2.2, as transformers 4.51.3's
// modeling_deepseek_v3.py runs them. Internal to the planner.

#include "absl/status/status.h"
#include "chunkplan/planner/workload_types.h"
#include "server/planner/plan_search/activation_arith.h"

namespace chunkplan::planner::activation {

// Where shape.kv_lora_rank is set (the layer's attention is MLA):
// INVALID_ARGUMENT naming shape.v_head_dim where it is 0, or
// shape.qk_rope_head_dim where it exceeds `head_dim` (q's and k's width,
// qk_nope_head_dim + qk_rope_head_dim). OK otherwise.
absl::Status CheckMla(const TransformerShape& shape, Wide head_dim);

// What the latent attention saves, its input (the input norm's output)
// aside: q_a_layernorm's saves and output (with q_lora_rank),
// kv_a_layernorm's saves and output, then the attention's own for
// `attention` (resolved: eager, sdpa or flash_attention_2) with q and k
// d wide and v and the output v_head_dim wide.
Checked MlaAttentionSaved(const TransformerShape& t, const Dims& d,
                          Attention attention);

// What DeepseekV3MoE saves, its input aside: the router's fp32 copies of
// its input and weight, sigmoid's result, gather's int64 indices (and,
// with norm_topk_prob, div_'s divisor and the weights' fp32 clone); per
// token-expert pair the nonzero indices, the token's state, the expert's
// gated MLP, its output, the fp32 weight and the fp32 weighted output
// index_add_ keeps; the shared experts' gated MLP.
Checked DeepseekMoeSaved(const TransformerShape& t, const Dims& d);

// The shared experts' saves (their gated MLP over every token).
Checked DeepseekSharedSaved(const TransformerShape& t, const Dims& d);

}  // namespace chunkplan::planner::activation

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_MLA_H_
