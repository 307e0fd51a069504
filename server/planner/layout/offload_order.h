#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_OFFLOAD_ORDER_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_OFFLOAD_ORDER_H_

// Which chunks static placement offloads when ColossalAI's chunk order is
// not fixed (setup_grads_device visits a Python set of chunks): a chunk is
// offloaded while the bytes offloaded so far are below the budget. A set S
// of chunks is what some order offloads iff sum(S) - max(S) < budget and
// (sum(S) >= budget or S is every chunk); docs/placement.md derives it and
// the search over chunk sizes below.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace chunkplan::planner {

using WideBytes = unsigned __int128;

// One chunk that may be offloaded, as one rank sees it.
struct OffloadItem {
  uint64_t index = 0;    // the caller's name for it
  WideBytes weight = 0;  // its fp16 chunk bytes (chunk_mem), >= 1
  WideBytes saving = 0;  // device bytes this rank frees when it is offloaded
  WideBytes host = 0;    // host bytes it then adds on this rank
};

enum class OffloadExtreme {
  kMostDevice,   // the least saving, then the most host bytes
  kLeastDevice,  // the most saving, then the fewest host bytes
};

// The most combinations of chunk-size counts one extreme may visit.
inline constexpr uint64_t kMaxOffloadCombinations = uint64_t{1} << 22;

// The indices of the chunks offloaded under the order that gives
// `extreme`, for a budget of `budget` bytes (ceil of ColossalAI's float
// budget; 0: nothing is offloaded). Errors: RESOURCE_EXHAUSTED when the
// chunk sizes need more than kMaxOffloadCombinations combinations.
absl::StatusOr<std::vector<uint64_t>> ExtremeOffloadSet(
    const std::vector<OffloadItem>& items, WideBytes budget,
    OffloadExtreme extreme);

// The fewest and the most chunks any order offloads; `least_bytes` is the
// bytes offloaded by the order that offloads the fewest (largest first).
struct OffloadCounts {
  uint64_t least = 0;
  uint64_t most = 0;
  WideBytes least_bytes = 0;
};
OffloadCounts CountOffloaded(std::vector<WideBytes> weights, WideBytes budget);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_OFFLOAD_ORDER_H_
