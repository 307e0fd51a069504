#ifndef CHUNKPLAN_SERVER_PLANNER_REQUEST_SEED_WASTE_H_
#define CHUNKPLAN_SERVER_PLANNER_REQUEST_SEED_WASTE_H_

// The seed's objective at one candidate, walked size by size: the reference
// that every engine's answer equals.

#include <cstdint>

#include "server/planner/request/search_plan.h"

namespace chunkplan::planner {

// Sum over the problem's groups of NextFitWaste at chunk size `chunk`.
uint64_t TotalWasteAt(const SweepProblem& problem, uint64_t chunk);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_REQUEST_SEED_WASTE_H_
