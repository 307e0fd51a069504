#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_RANK_MEMORY_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_RANK_MEMORY_H_

// The bytes a rank holds for a chunk layout under GeminiPlugin's settings
// (static placement, nothing offloaded), each part its elements times the
// byte model's rate (candidate/byte_model.h, layout/byte_model_of.h):
//
//   params     param x held elements (sum of shards size/P + sum of gathered
//              chunk sizes)
//   master     master x the same
//   grads      grad x the same
//   optimizer  optimizer x (real elements on the rank + gathered chunks'
//              used elements)
//   frozen     frozen x the frozen parameters' numels (held whole everywhere)
//   device     the sum of the five above
//   pinned     pinned x sum of shards; gathered chunks none
//
// A placement (layout/placement.h) marks chunks that are not kept gathered:
// an optimizer-offloaded chunk keeps only its fp16 shard on the device and
// puts optimizer x its real elements + pageable x its shard on the host; a
// chunk gathered at run time holds its whole fp16 chunk; a param-offloaded
// chunk holds no fp16 shard on the device.
//
// A non-gathered chunk's real elements fill its shards from offset 0, so
// rank r holds clamp(used - r * size/P, 0, size/P) of them: rank 0 of every
// group is the most loaded, rank P - 1 the least.

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/layout_types.h"
#include "server/planner/candidate/byte_model.h"

namespace chunkplan::planner {

// What a placement does to one chunk; bits of a ChunkMarks entry.
inline constexpr uint8_t kOptimOffloaded = 1;
inline constexpr uint8_t kGatheredAtRunTime = 2;
inline constexpr uint8_t kParamOffloaded = 4;
// One entry per chunk, groups in order and chunks in order within each
// group; empty: nothing marked.
using ChunkMarks = std::vector<uint8_t>;

// Which rank of every group.
enum class RankOfGroup {
  kFirst,  // rank 0: the most loaded
  kLast,   // rank P - 1: the least loaded
};

// The bytes of rank `rank` of every group in `groups`, with
// `frozen_elements` elements of frozen parameters, at `bytes`' rates, with
// the chunks marked by `marks` (empty, or one entry per chunk).
// Errors: INVALID_ARGUMENT when a count exceeds 2^64-1 bytes, naming
// `field` (e.g. "most_loaded_rank") and the part.
absl::StatusOr<RankMemory> RankBytes(std::span<const GroupLayout> groups,
                                     uint64_t frozen_elements,
                                     const ByteModel& bytes, RankOfGroup rank,
                                     absl::string_view field,
                                     std::span<const uint8_t> marks = {});

// RankBytes' device_bytes in 128 bits, never refused: what the objectives
// compare before they narrow their own sums.
unsigned __int128 RankDeviceBytes(std::span<const GroupLayout> groups,
                                  uint64_t frozen_elements,
                                  const ByteModel& bytes, RankOfGroup rank,
                                  std::span<const uint8_t> marks = {});

// The real elements that rank `rank` of a group of degree `degree` holds of
// a non-gathered chunk: clamp(used - r * size/P, 0, size/P).
uint64_t RealElementsOnRank(const ChunkLayout& chunk, uint64_t degree,
                            RankOfGroup rank);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_RANK_MEMORY_H_
