#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_SP_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_SP_H_

// GPT-2's and BLOOM's tp rank 0 under ColossalAI's sequence parallelism
// as GeminiPlugin runs it (split_gather; GPT-2's where the world is the tp
// group, BLOOM's on every mesh: docs/tensor-parallelism.md, "Sequence
// parallelism"): what the blocks run on the rank's sequence shard keeps
// s / tp of it (both LayerNorms' saves and outputs, the residual dropout
// masks, the checkpointed input); the fused q/k/v and the up projection
// (c_attn and c_fc; query_key_value and dense_h_to_4h) each keep the
// gathered (b, s, h) input as a ctx attribute, until the graph is freed;
// the attention, the MLP, the embedding (and BLOOM's embedding norm),
// ln_f, lm_head and the loss run on the whole sequence as without it. The
// backward adds the collectives' buffers. Internal to the planner.

#include "absl/status/status.h"
#include "chunkplan/planner/workload_types.h"
#include "server/planner/plan_search/activation_arith.h"

namespace chunkplan::planner::activation {

// INVALID_ARGUMENT where the sequence is not a multiple of tp (ColossalAI's
// _split asserts it), naming tp.model_type where it is set.
absl::Status CheckSequenceSplit(const TensorParallelShape& tp, const Dims& d);

// One block's pieces over the whole sequence at rank dims (the estimate's
// own terms, activation_estimate.cc).
struct SpLayerPieces {
  Checked layer;    // the block's saves without sequence parallelism
  Checked sharded;  // of those, what runs on the shard: norms' saves and
                    // outputs, the residual masks
  Checked mlp;      // the MLP's saves (gelu_new's and c_proj's input)
  // The attention's backward (eager softmax's gradients in and out, or a
  // kernel's dq, dk, dv, d(out)) and what it releases besides o_proj's
  // input (eager: PV's operands).
  Checked attn_work;
  Checked attn_released;
};

// The block's saves, its backward above all saves (the top block's) and
// the most the layers' backward holds (with checkpointing, the re-run's).
struct SpLayerTerms {
  Checked saved, backward, inside;
};
SpLayerTerms SequenceParallelLayer(const TransformerShape& t, const Dims& d,
                                   const SpLayerPieces& pieces, bool ckpt);

// Bytes `x` over the rank's shard of the sequence: x / tp.
Checked OnShard(Checked x, Wide tp);

// The gathered inputs every block keeps until the graph is freed, held at
// the embedding's backward (none with checkpointing: each re-run's are
// freed with it).
Checked GatheredInputs(const Dims& d, uint64_t layers, bool ckpt);

// What the embedding's backward finds still held besides the saves it
// releases: the ids, the positions (none beside ALiBi), the `logits` and
// the gathered inputs.
Checked SequenceParallelKept(const TransformerShape& t, const Dims& d,
                             Checked logits, bool ckpt);

// The embedding's backward, last, above `released` (all but the logits,
// the ids and positions and the gathered inputs): wte's weight gradient
// (`rows`) beside its output's and, tied, lm_head's held share; then, tied,
// AccumulateGrad's out-of-place sum (6 rows h) once the output's gradient,
// the ids and the positions (none beside BLOOM's ALiBi) are released.
Checked SequenceParallelEmbedding(const TransformerShape& t, const Dims& d,
                                  Wide rows, Checked released);

}  // namespace chunkplan::planner::activation

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_ACTIVATION_SP_H_
