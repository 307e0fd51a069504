#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_RANK_MEMORY_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_RANK_MEMORY_H_

// The bytes a rank holds for a chunk layout under GeminiPlugin's settings
// (read from zero/gemini/gemini_ddp.py, gemini_optimizer.py, chunk.py and
// placement_policy.py; static placement, nothing offloaded):
//
//   params     2 x (sum of shards size/P + sum of gathered chunk sizes)
//   master     4 x the same, with master weights; else 0
//   grads      0 when they reuse the fp16 chunk (master weights on and no
//              gradient accumulation); else 2 x the same
//   optimizer  Adam: 2 states x (4 bytes with master weights, else 2) x
//              (real elements on the rank + gathered chunks' used elements)
//   frozen     2 x the frozen parameters' numels (held whole everywhere)
//   device     the sum of the five above
//   pinned     with pin_memory: (2 + 4 with master weights + 2 with
//              separate gradients) x sum of shards; gathered chunks none
//
// A non-gathered chunk's real elements fill its shards from offset 0, so
// rank r holds clamp(used - r * size/P, 0, size/P) of them: rank 0 of every
// group is the most loaded, rank P - 1 the least.

#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/planner/layout/layout_types.h"

namespace chunkplan::planner {

// Which rank of every group.
enum class RankOfGroup {
  kFirst,  // rank 0: the most loaded
  kLast,   // rank P - 1: the least loaded
};

// The bytes of rank `rank` of every group in `groups`, with
// `frozen_elements` elements of frozen parameters, under `settings`.
// Errors: INVALID_ARGUMENT when a count exceeds 2^64-1 bytes, naming
// `field` (e.g. "most_loaded_rank") and the part.
absl::StatusOr<RankMemory> RankBytes(std::span<const GroupLayout> groups,
                                     uint64_t frozen_elements,
                                     const GeminiSettings& settings,
                                     RankOfGroup rank, absl::string_view field);

// The largest non-gathered chunk's size in bytes (2 per element): what a
// rank gathers while that chunk computes; 0 when every group is gathered.
// Errors: INVALID_ARGUMENT beyond 2^64-1 bytes.
absl::StatusOr<uint64_t> GatheredChunkBytes(
    std::span<const GroupLayout> groups);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_RANK_MEMORY_H_
