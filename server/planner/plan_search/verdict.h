#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_VERDICT_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_VERDICT_H_

// The one verdict on a configuration against a cluster, for Layout and for
// every Plan option alike (docs/plan.md, "The verdict"): the device need,
// the margin, the headroom, fits, tight and why_not.

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/verdict_types.h"

namespace chunkplan::planner {

// The margin `cluster` applies: its own, or kDefaultMargin when unset.
double MarginOf(const Cluster& cluster);

// INVALID_ARGUMENT "cluster.margin: ..." for a margin that is NaN, negative
// or not below 1; OK when unset.
absl::Status CheckMargin(const Cluster& cluster);

// min(memory, ceil(margin x memory)), the product in doubles (memory
// rounded to the nearest double). Requires 0 <= margin < 1.
uint64_t MarginBytes(double margin, uint64_t memory);

// The most device bytes a configuration may need and fit: the device
// memory less MarginBytes. Requires CheckMargin to have passed.
uint64_t DeviceBudgetBytes(const Cluster& cluster);

// device_bytes + gathered_chunk_bytes + reserve_bytes + activation_bytes +
// transient_bytes (backward's largest extra above the activations), or
// nullopt when the sum exceeds 2^64-1.
std::optional<uint64_t> DeviceNeedOf(uint64_t device_bytes,
                                     uint64_t gathered_chunk_bytes,
                                     uint64_t reserve_bytes,
                                     uint64_t activation_bytes,
                                     uint64_t transient_bytes);

// The whole world of GeminiPlugin's mesh (zero, extra_dp, tp): the ranks
// a cluster runs; 2^64-1 where the product passes it (more ranks than any
// node holds).
inline uint64_t MeshWorld(uint32_t zero, uint32_t tp_size,
                          uint32_t extra_dp_size) {
  uint64_t world = uint64_t{zero} * tp_size;  // < 2^64
  if (__builtin_mul_overflow(world, uint64_t{extra_dp_size}, &world)) {
    return UINT64_MAX;
  }
  return world;
}

// min(gpus_per_node, world_size) x the larger host bytes of `most` and
// `most_least` (rank 0 under the two extreme chunk orders), or nullopt
// when the product exceeds 2^64-1. Every rank of a node counts, whatever
// its tp or extra_dp coordinate: each holds its own shards.
std::optional<uint64_t> HostBytesPerNode(uint32_t gpus_per_node,
                                         uint64_t world_size,
                                         const RankMemory& most,
                                         const RankMemory& most_least);

// The verdict on a configuration that needs `device_need_bytes` a rank and
// `host_bytes_per_node` a node on `cluster`. Requires CheckMargin to have
// passed and device_memory_bytes >= 1.
Verdict Judge(const Cluster& cluster, uint64_t device_need_bytes,
              uint64_t host_bytes_per_node);

// The verdict on a Layout's result against `cluster` (its most loaded rank,
// the gathered chunk, the reserve and the activation estimate; the world
// size for the host bytes per node is the largest dp degree of its groups,
// the zero degree, times the mesh's tp_size and extra_dp_size).
// Requires CheckLayoutCluster to have passed. Errors: INVALID_ARGUMENT
// naming device_need_bytes or host_bytes_per_node past 2^64-1.
absl::StatusOr<Verdict> JudgeLayout(const Cluster& cluster,
                                    const LayoutResult& layout,
                                    const GeminiSettings& mesh);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_VERDICT_H_
