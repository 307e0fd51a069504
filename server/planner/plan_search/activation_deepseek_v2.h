#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_DEEPSEEK_V2_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_DEEPSEEK_V2_H_

// DeepSeek-V2's layer and loss in the activation estimate (docs/plan.md,
// "DeepSeek-V2"): where the model's remote code (modeling_deepseek.py of
// deepseek-ai/DeepSeek-V2) saves for backward, under torch >= 2.2, other
// than DeepSeek-V3's latent attention (activation_mla.h). Internal to the
// planner.

#include "chunkplan/planner/workload_types.h"
#include "server/planner/plan_search/activation_arith.h"

namespace chunkplan::planner::activation {

// Each layer's own RoPE tables, gathered by position_ids: cos and sin,
// (1, s, qk_rope_head_dim) 16-bit, kept by RoPE's multiplications.
Checked DeepseekV2RopeSaved(const TransformerShape& t, const Dims& d);

// What DeepseekV2MoE's training branch saves, its input aside: MoEGate's
// fp32 copies of its input and weight, softmax's scores, the top-k int64
// indices (group_limited_greedy: masked_fill's bool mask too), with
// norm_topk_prob and top-k > 1 div's fp32 numerator and divisor, the
// auxiliary loss's fp32 ce (b x E per sequence, else E); every expert's
// two bool masks over the b s k repeated tokens; per token-expert pair
// the token's state, the expert's gated MLP, y (the index_put_ output)
// and the fp32 weight; the shared experts' gated MLP.
Checked DeepseekV2MoeSaved(const TransformerShape& t, const Dims& d);

// DeepseekV2MoE's backward above its saves and the residual stream's
// gradient, at the bound that every token reaches the expert whose
// backward runs first: `shared_step` (the shared experts' MLP step, run
// first), then, less their saves `shared_saves`, the weighted sum's mul
// (the fp32 gradient of the sum, both fp32 product gradients, y's 16-bit
// cast), or the index_put_ chain's two P x h gradients beside the expert's
// `routed_step` over all b s tokens, or three P x h gradients at the
// repeated tokens' scatter (P = b s k pairs).
Checked DeepseekV2MoeBackward(const TransformerShape& t, const Dims& d,
                              Checked shared_step, Checked routed_step,
                              Checked shared_saves);

// Re-running DeepseekV2MoE under checkpointing, at the weighted sum: the
// repeated tokens (16-bit), the fp32 product and its fp32 sum.
Checked DeepseekV2MoeForward(const TransformerShape& t, const Dims& d);

// DeepseekV2ForCausalLM's loss saves: log_softmax's fp32 result over
// b (s - 1) rows, the targets (a copy of b (s - 1); at b = 1 the labels'
// own s) and total_weight.
Checked DeepseekV2LossSaved(const Dims& d);

// The loss's backward above the saves and the held fp32 logits:
// log_softmax's two fp32 gradients over b (s - 1) rows, or the slice's
// zero-filled b s x V fp32 gradient and its 16-bit cast once the
// log-probabilities are released.
Checked DeepseekV2LossBackward(const Dims& d);

}  // namespace chunkplan::planner::activation

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_DEEPSEEK_V2_H_
