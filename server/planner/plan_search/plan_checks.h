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

// The activation estimate of a Plan option or a Layout: 0 without a
// workload, else EstimateActivationBytes(...).total_bytes. Errors: the
// estimate's (INVALID_ARGUMENT naming workload.<field>, shape.<field> or
// activations.<part>).
absl::StatusOr<uint64_t> PlanActivationBytes(
    const std::optional<PlanWorkload>& workload);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_CHECKS_H_
