#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_CHECKS_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_CHECKS_H_

// The Plan request's own checks (docs/plan.md, "The search, exactly"): the
// cluster's (CheckCluster, CheckLayoutCluster: public, cluster_checks.h)
// and the activation estimate's; the search part and `frozen` are checked
// by Layout at each world size.

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/cluster_checks.h"
#include "chunkplan/planner/plan_types.h"

namespace chunkplan::planner {

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

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_CHECKS_H_
