#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_CHECKS_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_CHECKS_H_

// The Plan request's own checks (docs/plan.md, "The search, exactly"); the
// search part and `frozen` are checked by Layout at each world size.

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/plan_types.h"

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

// The activation estimate of a Plan option or a Layout: 0 without a
// workload, else EstimateActivationBytes(...).total_bytes. Errors: the
// estimate's (INVALID_ARGUMENT naming workload.<field>, shape.<field> or
// activations.<part>).
absl::StatusOr<uint64_t> PlanActivationBytes(
    const std::optional<PlanWorkload>& workload);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_CHECKS_H_
