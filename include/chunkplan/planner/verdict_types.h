#ifndef CHUNKPLAN_PLANNER_VERDICT_TYPES_H_
#define CHUNKPLAN_PLANNER_VERDICT_TYPES_H_

// A cluster and the one verdict on a configuration against it, as plain
// values shared by the Layout and Plan requests and answers. They mirror
// chunkplan.v1.Cluster and chunkplan.v1.Verdict field for field. The rule
// (fits, tight, the margin, why_not): docs/plan.md, "The verdict"; the
// judge: plan_search/verdict.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace chunkplan::planner {

// The margin of a cluster that leaves it unset: 5% of device memory.
inline constexpr double kDefaultMargin = 0.05;

// Where a job may run (chunkplan.v1.Cluster).
struct Cluster {
  uint64_t device_memory_bytes = 0;   // per GPU, > 0
  uint64_t host_memory_bytes = 0;     // per node; 0: not checked
  uint32_t gpus_per_node = 0;         // >= 1 (Layout: 0 without a host check)
  std::vector<uint32_t> world_sizes;  // Plan: 1 to 64 distinct degrees >= 1
  uint64_t reserve_bytes = 0;         // per rank
  // The share of device memory a configuration must leave free, in [0, 1);
  // unset: kDefaultMargin.
  std::optional<double> margin;
  // Plan: world sizes gpus_per_node x 1 to max_nodes instead of world_sizes
  // (PlanWorldSizes, plan_search/plan_nodes.h). Layout refuses both.
  bool whole_nodes = false;
  uint32_t max_nodes = 0;
};

// One configuration judged against a cluster (chunkplan.v1.Verdict).
struct Verdict {
  // The most loaded rank's device bytes (worst chunk order) + the gathered
  // chunk + reserve_bytes + the activation estimate.
  uint64_t device_need_bytes = 0;
  uint64_t device_memory_bytes = 0;
  uint64_t reserve_bytes = 0;
  double margin = kDefaultMargin;  // the margin applied
  // min(device_memory_bytes, ceil(margin x device_memory_bytes)).
  uint64_t margin_bytes = 0;
  // device_memory_bytes - device_need_bytes; 0 when the need exceeds it.
  uint64_t headroom_bytes = 0;
  // device_need_bytes - (device_memory_bytes - margin_bytes); 0 within.
  uint64_t device_excess_bytes = 0;
  uint64_t host_bytes_per_node = 0;
  uint64_t host_memory_bytes = 0;  // 0: not checked
  uint64_t host_excess_bytes = 0;  // 0 within, or not checked
  // No excess: the need leaves the margin free and the node holds its host
  // bytes.
  bool fits = false;
  // Does not fit only because the need eats into the margin: within the
  // device memory, and the host holds.
  bool tight = false;
  // "" when it fits; else the failing parts, device first, "; " between.
  std::string why_not;

  friend bool operator==(const Verdict&, const Verdict&) = default;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_VERDICT_TYPES_H_
