#include "server/planner/plan_search/plan_checks.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/activation_estimate.h"
#include "common/status_macros.h"
#include "server/planner/plan_search/verdict.h"

namespace chunkplan::planner {
namespace {

// The world sizes of whole nodes: none listed, 1 to kMaxWorldSizes nodes,
// the largest within 32 bits; then the margin.
absl::Status CheckWholeNodes(const Cluster& cluster) {
  if (!cluster.world_sizes.empty()) {
    return absl::InvalidArgumentError(
        "cluster.world_sizes: leave empty with cluster.whole_nodes (the world "
        "sizes are gpus_per_node x 1 to max_nodes)");
  }
  if (cluster.max_nodes == 0 || cluster.max_nodes > kMaxWorldSizes) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.max_nodes: ", cluster.max_nodes,
                     "; expected 1 to ", kMaxWorldSizes, " with whole_nodes"));
  }
  if (uint64_t{cluster.max_nodes} * cluster.gpus_per_node > UINT32_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.max_nodes: ", cluster.max_nodes, " nodes of ",
                     cluster.gpus_per_node, " GPUs exceed 2^32-1 ranks"));
  }
  return CheckMargin(cluster);
}

}  // namespace

absl::Status CheckCluster(const Cluster& cluster) {
  if (cluster.device_memory_bytes == 0) {
    return absl::InvalidArgumentError(
        "cluster.device_memory_bytes: must be at least 1");
  }
  if (cluster.gpus_per_node == 0) {
    return absl::InvalidArgumentError(
        "cluster.gpus_per_node: must be at least 1");
  }
  if (cluster.whole_nodes) return CheckWholeNodes(cluster);
  if (cluster.max_nodes != 0) {
    return absl::InvalidArgumentError(
        "cluster.max_nodes: set only with cluster.whole_nodes");
  }
  const std::vector<uint32_t>& sizes = cluster.world_sizes;
  if (sizes.empty() || sizes.size() > kMaxWorldSizes) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.world_sizes: ", sizes.size(),
                     " entries; expected 1 to ", kMaxWorldSizes));
  }
  for (size_t j = 0; j < sizes.size(); ++j) {
    if (sizes[j] == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cluster.world_sizes[", j, "]: a world size must be at least 1"));
    }
    for (size_t i = 0; i < j; ++i) {
      if (sizes[i] == sizes[j]) {
        return absl::InvalidArgumentError(
            absl::StrCat("cluster.world_sizes[", j, "]: ", sizes[j],
                         " repeats cluster.world_sizes[", i, "]"));
      }
    }
  }
  return CheckMargin(cluster);
}

absl::Status CheckLayoutCluster(const Cluster& cluster) {
  if (cluster.device_memory_bytes == 0) {
    return absl::InvalidArgumentError(
        "cluster.device_memory_bytes: must be at least 1");
  }
  if (cluster.host_memory_bytes != 0 && cluster.gpus_per_node == 0) {
    return absl::InvalidArgumentError(
        "cluster.gpus_per_node: must be at least 1 to check "
        "host_memory_bytes");
  }
  if (!cluster.world_sizes.empty()) {
    return absl::InvalidArgumentError(
        "cluster.world_sizes: Layout's world size is its largest dp degree; "
        "leave world_sizes empty (Plan takes them)");
  }
  if (cluster.whole_nodes || cluster.max_nodes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        cluster.whole_nodes ? "cluster.whole_nodes" : "cluster.max_nodes",
        ": Plan only; Layout's world size is its largest dp degree"));
  }
  return CheckMargin(cluster);
}

absl::StatusOr<ActivationNeed> PlanActivationNeed(
    const std::optional<PlanWorkload>& workload) {
  if (!workload.has_value()) return ActivationNeed{};
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const ActivationBytes bytes,
      EstimateActivationBytes(workload->shape, workload->workload));
  return ActivationNeed{bytes.total_bytes, bytes.transient_bytes};
}

}  // namespace chunkplan::planner
