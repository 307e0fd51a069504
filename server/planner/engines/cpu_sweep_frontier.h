#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_FRONTIER_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_FRONTIER_H_

// CPU_SWEEP's frontier: every candidate of the grid valued by the task's
// objective (the seed's waste size by size; a layout objective
// kMeasureLanes candidates per pass, layout/measure_lanes.h), the grid
// split into contiguous ranges that the calling thread and a pool's workers
// take in turn.

#include "absl/status/statusor.h"
#include "common/worker_pool.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

// The frontier of `task` (which needs task.layout for a layout objective),
// its first task.keep() points. Calls `stop` every million or so steps and
// ends with its status when it is not OK. Errors: INVALID_ARGUMENT when a
// layout objective's measures exceed 2^64-1 at a candidate (the lowest).
absl::StatusOr<SweepOutcome> SweepFrontier(const SweepTask& task,
                                           const StopCheck& stop,
                                           common::WorkerPool* pool);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_FRONTIER_H_
