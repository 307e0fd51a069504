#include "server/planner/plan_search/plan_checks.h"

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/activation_estimate.h"
#include "common/status_macros.h"
#include "server/planner/plan_search/verdict.h"

namespace chunkplan::planner {

absl::Status CheckCluster(const Cluster& cluster) {
  if (cluster.device_memory_bytes == 0) {
    return absl::InvalidArgumentError(
        "cluster.device_memory_bytes: must be at least 1");
  }
  if (cluster.gpus_per_node == 0) {
    return absl::InvalidArgumentError(
        "cluster.gpus_per_node: must be at least 1");
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
  return CheckMargin(cluster);
}

absl::StatusOr<uint64_t> PlanActivationBytes(
    const std::optional<PlanWorkload>& workload) {
  if (!workload.has_value()) return 0;
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const ActivationBytes bytes,
      EstimateActivationBytes(workload->shape, workload->workload));
  return bytes.total_bytes;
}

}  // namespace chunkplan::planner
