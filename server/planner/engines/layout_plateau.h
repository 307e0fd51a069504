#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_LAYOUT_PLATEAU_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_LAYOUT_PLATEAU_H_

// CPU_PLATEAU's walk for the layout objectives: the exact best candidate and
// frontier of OBJECTIVE_LAYOUT_PADDING and OBJECTIVE_PEAK_RANK_BYTES without
// laying out every candidate. It jumps between plateaus of the layout's
// state (each group's count of chunk-size chunks and its set of oversize
// tensors), and inside a plateau lays out only the candidates that a lower
// bound of the objective cannot rule out. The proofs: docs/layout-plateau.md.

#include <cstdint>

#include "absl/status/statusor.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

// An upper bound on the plateau search's steps (a step: one placed tensor of
// one layout), from two layouts (the first and last candidates) and the
// problem's sizes; the walk's exact evaluations inside plateaus are counted
// as they happen.
struct LayoutPlateauWork {
  uint64_t plateaus = 0;     // plateaus the walk may find
  uint64_t evaluations = 0;  // layouts the search for them may take
  uint64_t steps = 0;        // evaluations x (placed tensors + 1); saturates
};

// The bound for `task` (a layout objective, task.layout set).
LayoutPlateauWork BoundLayoutPlateauWork(const SweepTask& task);

// The walk's lower bound of task.objective at every candidate of [from,
// to), which must lie on one plateau (docs/layout-plateau.md): exact at
// `from` for the padding, and for the peak where every degree is 1.
// Requires the measures to fit 64 bits everywhere (the walk checks it).
// Tests hold it to every candidate's value.
uint64_t LayoutLowerBound(const SweepTask& task, uint64_t from, uint64_t to);

// What one walk did: tests hold it to the bound and to CPU_SWEEP's work.
struct LayoutWalkTally {
  uint64_t search_evaluations = 0;  // layouts counted to find plateaus
  uint64_t value_evaluations = 0;   // candidates valued exactly
  uint64_t steps = 0;               // both, x (placed tensors + 1)
  bool swept = false;  // measures may pass 2^64-1: every candidate valued
};

// `task`'s answer (a layout objective, either want; the improvements always
// set, the first task.keep() of them). Errors: RESOURCE_EXHAUSTED once the
// walk's steps (the tally's) pass `max_work` or, where measures may pass
// 2^64-1 and every candidate is valued, when candidates x (placed tensors +
// 1) does; INVALID_ARGUMENT naming the lowest candidate whose measures pass
// 2^64-1; `stop`'s status when it stops the walk. Fills *tally when not null.
absl::StatusOr<SweepOutcome> WalkLayoutPlateaus(const SweepTask& task,
                                                uint64_t max_work,
                                                const StopCheck& stop,
                                                LayoutWalkTally* tally);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_LAYOUT_PLATEAU_H_
