#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_FRONTIER_POINTS_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_FRONTIER_POINTS_H_

// An engine's frontier as the answer gives it: every point with all three
// measures, taken on the host whichever engine found the points.

#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

// The points of `outcome`, the answer to `task` (kFrontier, with
// task.layout): each improvement with the seed's waste at its candidate C
// and the layout's measures at C' as Layout counts them
// (ObjectiveProblem::Exact: under a size-dependent placement each point is
// laid out and placed, and `stop` is asked between points). Errors, at the
// first point in grid order that has one: INVALID_ARGUMENT when its layout
// measures exceed 2^64-1 (the seed's objective measures the layout only at
// its points); INTERNAL when its value is not the host's (an engine that
// measured wrong); RESOURCE_EXHAUSTED beyond task.max_points points or
// from the placement's extremes; the stop check's status.
absl::StatusOr<std::vector<FrontierPoint>> FrontierPoints(
    const SweepTask& task, const SweepOutcome& outcome,
    const StopCheck& stop = {});

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_FRONTIER_POINTS_H_
