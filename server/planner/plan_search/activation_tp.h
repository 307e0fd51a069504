#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_TP_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_TP_H_

// One tensor-parallel rank's share of the activation estimate under
// ColossalAI's ShardFormer without sequence parallelism (docs/
// tensor-parallelism.md, "Activations"): the per-rank sizes every layer
// term reads, and the terms the policy's own layers replace (the vocab-
// parallel embedding, lm_head, dist_cross_entropy). Tp rank 0 is the most
// loaded: it keeps the most valid vocabulary columns. Internal to the
// planner.

#include <initializer_list>

#include "absl/status/status.h"
#include "chunkplan/planner/workload_types.h"
#include "server/planner/plan_search/activation_arith.h"

namespace chunkplan::planner::activation {

// lm_head's backward from the logits' gradient `grad` on, its largest
// step: each of `widths` (0: no such step) a 16-bit gradient of b s x that
// many columns allocated beside the one before it (the upcast's copy, the
// padding slice's rows, the gather's split), then lm_head's input (e wide:
// OPT's word_embed_proj_dim, else h) and weight (`rows` x e) gradients
// beside the last, and the bias's (`rows`) where `bias`. The whole model's
// head is the case of no widths and the vocabulary's rows.
Checked HeadSteps(const Dims& d, Checked grad,
                  std::initializer_list<Wide> widths, Wide rows, bool bias);

// Whether `tp` splits the activations: tp_size > 1 and not_split empty.
bool SplitByTp(const TensorParallelShape& tp);

// `d` at one tp rank: the query and key/value heads / tp (the policy's
// attribute_replacement), the MLP width / tp (Linear1D_Col and _Row keep a
// layer whole where its features are below tp); the tokens, the hidden
// size and head_dim unchanged. INVALID_ARGUMENT naming the field where tp
// does not divide the heads or the key/value heads, or shape.tp
// .padded_vocab is below the vocabulary or not a multiple of tp.
absl::Status ToTpRank(const TensorParallelShape& tp, Dims* d);

// The terms of a tp rank that replace the whole model's, at rank sizes
// `d` (ToTpRank's).
struct TpTerms {
  Wide embedding_rows = 0;  // padded_vocab / tp
  // The embedding's extra save beside its int64 ids: the bool mask of
  // the ids outside the rank's rows (index_put_'s).
  Checked embedding_mask;
  // DistCrossEntropy's saves over b (s - 1) rows: exp_logits in the loss's
  // dtype, the bool mask, the int64 masked target.
  Checked loss;
  // The model's output: the fp32 copy of the logits where the forward
  // upcasts, the 16-bit valid columns where it holds their contiguous
  // copy (OPT), else lm_head's 16-bit output with its padded rows.
  Checked held_logits;
  // Backward, each above the estimate's total and less the loss's saves:
  // the logits' gradient beside the rows' (the loss's); then the upcast's,
  // the padding slice's and lm_head's steps (the head's; with `head_bias`,
  // the rank's bias gradient beside its weight's).
  Checked loss_backward;
  Checked head_backward;
};
TpTerms TpRankTerms(const TensorParallelShape& tp, const Dims& d,
                    bool head_bias);

// lm_head's backward where it gathers its output (tp.gathered_head: the
// loss and the logits are the whole model's), less `loss` (the whole
// model's saves, released by then): the upcast's 16-bit copy beside the
// fp32 gradient where tp.logits_fp32, the padding slice's full rows (a
// vocab head), the gather's split (a clone of the rank's columns beside
// the gathered gradient), then the rank's input and weight gradients
// (and its bias's where `head_bias`: GPT-J).
Checked GatheredHeadBackward(const TensorParallelShape& tp, const Dims& d,
                             bool head_bias, const Checked& loss);

}  // namespace chunkplan::planner::activation

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_TP_H_
