#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_

// CPU_PLATEAU: the exact answer without visiting every candidate.
//
// With every size <= C, a group's padding is k(C) * C - S, k(C) being the
// chunks next-fit opens; k never grows with C. So along a plateau of
// K = sum of k the total padding rises with C, and the first least-waste
// candidate is the first grid point of some plateau. The engine counts chunks
// with prefix sums and galloping search, and walks from plateau to plateau:
// it knows from each evaluation the smallest C at which the partition can
// change at all, and gallops then bisects the grid for the first point where
// K drops. Every strict improvement it meets is one of those first points,
// so the improvements it records are the seed's whole waste frontier.

#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

class CpuPlateauEngine final : public SweepEngine {
 public:
  Engine kind() const override { return Engine::kCpuPlateau; }

  absl::StatusOr<SweepOutcome> Sweep(const SweepProblem& problem,
                                     const StopCheck& stop) const override;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_
