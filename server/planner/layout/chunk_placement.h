#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_CHUNK_PLACEMENT_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_CHUNK_PLACEMENT_H_

// ColossalAI's ChunkManager.register_tensor, replayed on sizes: which chunk
// every parameter lands in, each chunk's size and padding. The rules (read
// from zero/gemini/chunk/manager.py and chunk.py):
//   - per dp-degree group, parameters in visit order, frozen ones left out;
//   - next-fit with no alignment: a tensor of n elements joins the open
//     chunk when used + n <= size; otherwise that chunk is closed for good
//     and a new one opens; the first tensor always opens one, even of 0
//     elements;
//   - a new chunk has the group's chunk size C, or for n > C, n rounded up
//     to a multiple of the group's degree P; it stays open, so later tensors
//     that fit its slack join it;
//   - no chunk is ever shrunk, the last one included.

#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

// The chunks of every group of `params` (its numels and dp_degrees), one
// GroupLayout per entry of `configs` and in that order, leaving out the
// parameters whose `frozen` flag is set (`frozen` empty: none).
//
// Requires: CheckShape passed on `params`, `configs` holds exactly one
// config per degree present (CheckGivenConfigs, or the search's answer),
// `frozen` is empty or one per numel.
// Errors: INVALID_ARGUMENT when a group's padding exceeds 2^64-1 elements
// (only chunk sizes given near 2^63 reach it), naming the group.
absl::StatusOr<std::vector<GroupLayout>> PlaceChunks(
    const SearchRequest& params, std::span<const ChunkConfig> configs,
    const std::vector<bool>& frozen);

// The elements of the parameters whose `frozen` flag is set (`frozen`
// empty: none). Requires `frozen` empty or one per numel and the numels'
// total checked to fit (BuildSearchPlan), so the sum cannot wrap.
uint64_t FrozenElements(const SearchRequest& params,
                        const std::vector<bool>& frozen);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_CHUNK_PLACEMENT_H_
