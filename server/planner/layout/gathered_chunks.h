#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_GATHERED_CHUNKS_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_GATHERED_CHUNKS_H_

// The chunks a rank holds gathered while the model computes, beyond the
// steady state that rank_memory.h counts: GeminiZeROHook.pre_op gathers
// every chunk that holds a parameter of an operation before it runs, and a
// chunk that has some but not all of its gradients can be neither released
// nor reduced (read from zero/gemini/gemini_hook.py, chunk/manager.py,
// chunk/chunk.py, gemini_ddp.py's grad_handle and placement_policy.py's
// prefetch; the rule and what it leaves out: docs/plan.md, "Gathered
// chunks").

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/workload_types.h"

namespace chunkplan::planner {

// The peak of the gathered buffers over one training iteration.
struct GatheredPeak {
  uint64_t bytes = 0;   // gathered_chunk_bytes
  uint64_t chunks = 0;  // gathered_chunks: chunk buffers held at the peak
};

// The peak for the layout `groups` of `num_params` parameters of degrees
// `dp_degrees` (as SearchRequest's: empty, one, or one each; those flagged
// in `frozen` left out as PlaceChunks leaves them) under `settings`.
//
// With `operations` (the parameters, indices below num_params, of each
// operation of one forward pass in order; backward runs them in reverse):
// the operations of the second iteration are replayed, forward then
// backward. With `recomputed_layers` (gradient checkpointing: one per
// operation, the decoder layer it runs in, -1 outside one; empty: no
// checkpointing), each layer's forward operations run again, with no
// gradients, just before its backward, as torch.utils.checkpoint's
// reentrant backward runs them (transformers 4.51.3's default) and
// GeminiZeROHook sees them (pre_op, post_op in the backward phase). At
// each operation the rank holds gathered the operation's chunks, every
// chunk with some but not all of its gradients, and up to
// settings.max_prefetch chunks fetched ahead in the order the operations
// will need them; each costs its size less the shard the rank keeps on the
// device (all of it where offload_param_frac is in force), plus, once, the
// largest shard among them (the chunk being gathered, reduced or
// released). Kept-gathered groups are part of the steady state and never
// count. Without operations: the largest non-gathered chunk, whole (one
// chunk; none when every group is kept gathered).
//
// Requires PlaceChunks' inputs and answer. Errors: INVALID_ARGUMENT naming
// gathered_chunk_bytes beyond 2^64-1 bytes; INVALID_ARGUMENT naming
// operations for a parameter index of num_params or more, or for
// recomputed_layers neither empty nor one per operation.
absl::StatusOr<GatheredPeak> GatheredChunkPeak(
    std::span<const uint32_t> dp_degrees, size_t num_params,
    const std::vector<bool>& frozen, std::span<const GroupLayout> groups,
    std::span<const std::vector<uint64_t>> operations,
    std::span<const int64_t> recomputed_layers, const GeminiSettings& settings);

// The layers GatheredChunkPeak re-runs for `operations` under `workload`:
// the operations' layers where the workload turns gradient checkpointing
// on, else none.
std::span<const int64_t> RecomputedLayers(
    const ModelOperations& operations,
    const std::optional<PlanWorkload>& workload);

// What an answer says when `operations` name a model whose family has no
// operation sequence (the one-chunk count stands); nothing otherwise.
std::optional<std::string> GatheredChunksNote(
    const ModelOperations& operations);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_GATHERED_CHUNKS_H_
