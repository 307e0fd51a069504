#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_PLATEAU_WORK_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_PLATEAU_WORK_H_

// An upper bound on CPU_PLATEAU's work for a problem, from the plan alone
// (no evaluation), so that a request beyond the engine's limit is refused
// before it runs. Each part's proof is beside its code (plateau_work.cc).

#include <cstdint>

#include "chunkplan/planner/engine_options.h"
#include "server/planner/request/search_plan.h"

namespace chunkplan::planner {

struct PlateauWork {
  // Upper bound of the chunks next-fit opens at any candidate (at the first,
  // where the count is largest): sum over groups of 2 ceil(S_g / C_0) - 1.
  uint64_t max_chunks = 0;
  // Upper bound of the plateaus the walk looks for: the chunk count's
  // possible values from the first candidate to the last, plus the search
  // that finds no drop; at most the candidates.
  uint64_t plateaus = 0;
  // Upper bound of the evaluations: a gallop then a bisection per plateau,
  // about 2 log2(candidates / plateaus) + 4 each (plateau_work.cc).
  uint64_t evaluations = 0;
  // evaluations x (swept sizes + max_chunks): each evaluation walks each
  // size at most once or counts each chunk once. UINT64_MAX on overflow.
  uint64_t steps = 0;
};

// The bound for `problem` (a plan's sweep: every size <= grid.start).
PlateauWork BoundPlateauWork(const SweepProblem& problem);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_PLATEAU_WORK_H_
