#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_FRONTIER_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_FRONTIER_H_

// CPU_SWEEP's frontier: every candidate of the grid valued by the task's
// objective (the seed's waste size by size; a layout objective
// kMeasureLanes candidates per pass, layout/measure_lanes.h), the grid
// split into contiguous ranges that the calling thread and a pool's workers
// take in turn.

#include <cstdint>

#include "absl/status/statusor.h"
#include "common/worker_pool.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

// What one step of the placed peak (SweepTask::placed_peak: a candidate
// laid out, placed and its rank 0 counted in full, per placed parameter)
// counts in steps of the vector sweep, for the work limit and the stop
// check's cadence: measured 0.6x (GPT-2 XL) to 2.7x (LLaMA-2 7B) on their
// fine grids, rounded up (docs/placement.md, "The objectives and the
// frontier").
inline constexpr uint64_t kPlacedStepWeight = 4;

// The frontier of `task` (which needs task.layout for a layout objective),
// its first task.keep() points; the placed peak candidate by candidate
// (ObjectiveProblem::Exact). Calls `stop` every million or so steps and
// ends with its status when it is not OK. Errors, at the lowest candidate
// that has one: INVALID_ARGUMENT when a layout objective's measures exceed
// 2^64-1; RESOURCE_EXHAUSTED where the placement's extremes over every
// chunk order are refused.
absl::StatusOr<SweepOutcome> SweepFrontier(const SweepTask& task,
                                           const StopCheck& stop,
                                           common::WorkerPool* pool);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_FRONTIER_H_
