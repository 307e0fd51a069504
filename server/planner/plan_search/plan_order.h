#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_ORDER_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_ORDER_H_

// The ranking of Plan's options (docs/plan.md, "Order").

#include <vector>

#include "chunkplan/planner/plan_types.h"

namespace chunkplan::planner {

// Sorts `options` by their verdicts, stably: those that fit first, then the
// tight ones (within the device, not the margin), each by world size,
// placement rank, device_need_bytes, then chunk-size source; then the rest
// by device excess (over the memory less the margin), host excess, world
// size, placement rank, then chunk-size source.
void OrderOptions(std::vector<PlanOption>* options);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_ORDER_H_
