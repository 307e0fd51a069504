#ifndef CHUNKPLAN_SERVER_PLANNER_FIT_PLAN_CHECKS_H_
#define CHUNKPLAN_SERVER_PLANNER_FIT_PLAN_CHECKS_H_

// The Plan request's own checks (docs/plan.md, "The search, exactly"); the
// search part and `frozen` are checked by Layout at each world size.

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/planner/fit/plan_types.h"

namespace chunkplan::planner {

// The most world sizes one request may list.
inline constexpr size_t kMaxWorldSizes = 64;

// INVALID_ARGUMENT naming the first bad field, in this order:
// cluster.device_memory_bytes 0, cluster.gpus_per_node 0,
// cluster.world_sizes empty or longer than kMaxWorldSizes,
// cluster.world_sizes[i] 0, cluster.world_sizes[j] repeating an earlier one,
// cluster.margin outside [0, 1) (CheckMargin).
absl::Status CheckCluster(const Cluster& cluster);

// A Layout's cluster (LayoutRequest.cluster): INVALID_ARGUMENT naming the
// first bad field, in this order: cluster.device_memory_bytes 0,
// cluster.gpus_per_node 0 with a host_memory_bytes to check,
// cluster.world_sizes not empty (Layout's world size is its largest dp
// degree), cluster.margin outside [0, 1).
absl::Status CheckLayoutCluster(const Cluster& cluster);

// What a workload adds to a rank's device need (both 0 without one).
struct ActivationNeed {
  uint64_t activation_bytes = 0;  // EstimateActivationBytes' total_bytes
  uint64_t transient_bytes = 0;   // its transient_bytes
};

// The activation estimate of a Plan option or a Layout. Errors: the
// estimate's (INVALID_ARGUMENT naming workload.<field>, shape.<field> or
// activations.<part>; UNIMPLEMENTED for a family whose layer is not
// modelled).
absl::StatusOr<ActivationNeed> PlanActivationNeed(
    const std::optional<PlanWorkload>& workload);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_FIT_PLAN_CHECKS_H_
