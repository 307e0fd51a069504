#ifndef CHUNKPLAN_SERVER_PLANNER_FIT_PLAN_ORDER_H_
#define CHUNKPLAN_SERVER_PLANNER_FIT_PLAN_ORDER_H_

// The ranking of Plan's options (docs/plan.md, "Order").

#include <vector>

#include "server/planner/fit/plan_types.h"

namespace chunkplan::planner {

// Sorts `options` (evaluated against `cluster`): those that fit first, by
// world size, placement rank, device_need_bytes, then chunk-size source;
// then those that do not, by device excess plus host excess (exact), world
// size, placement rank, chunk-size source.
void OrderOptions(const Cluster& cluster, std::vector<PlanOption>* options);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_FIT_PLAN_ORDER_H_
