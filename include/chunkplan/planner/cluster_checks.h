#ifndef CHUNKPLAN_PLANNER_CLUSTER_CHECKS_H_
#define CHUNKPLAN_PLANNER_CLUSTER_CHECKS_H_

// The checks of a request's cluster (docs/plan.md): Plan's, which
// Planner::Plan runs first, and Layout's, which Planner::Layout runs first.
// Public so that a caller that must answer them before work of its own (the
// service, before it describes a model) asks the planner's rule.

#include <cstddef>

#include "absl/status/status.h"
#include "chunkplan/planner/verdict_types.h"

namespace chunkplan::planner {

// The most world sizes one request may list.
inline constexpr size_t kMaxWorldSizes = 64;

// INVALID_ARGUMENT naming the first bad field, in this order:
// cluster.device_memory_bytes 0, cluster.gpus_per_node 0; with whole_nodes,
// cluster.world_sizes not empty, cluster.max_nodes 0, above kMaxWorldSizes
// or with gpus_per_node x max_nodes past 2^32-1; without, cluster.max_nodes
// set, cluster.world_sizes empty or longer than kMaxWorldSizes,
// cluster.world_sizes[i] 0, cluster.world_sizes[j] repeating an earlier one;
// then cluster.margin outside [0, 1).
absl::Status CheckCluster(const Cluster& cluster);

// A Layout's cluster (LayoutRequest.cluster): INVALID_ARGUMENT naming the
// first bad field, in this order: cluster.device_memory_bytes 0,
// cluster.gpus_per_node 0 with a host_memory_bytes to check,
// cluster.world_sizes not empty (Layout's world size is its largest dp
// degree), cluster.whole_nodes or cluster.max_nodes set (Plan's), then
// cluster.margin outside [0, 1).
absl::Status CheckLayoutCluster(const Cluster& cluster);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_CLUSTER_CHECKS_H_
