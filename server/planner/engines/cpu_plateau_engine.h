#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_

// CPU_PLATEAU: the exact answer without visiting every candidate.
//
// With every size <= C, a group's padding is k(C) * C - S, k(C) being the
// chunks next-fit opens; k never grows with C. So along a plateau of
// K = sum of k the total padding rises with C, and the first least-waste
// candidate is the first grid point of some plateau. The engine walks from
// plateau to plateau: it knows from each evaluation the smallest C at which
// the partition can change at all, and gallops then bisects the grid for the
// first point where K drops (probing that next change first). It skips what
// cannot drop: K(C) >= ceil(S / C), so no candidate below ceil(S / (K - 1))
// has fewer chunks, and K never falls below one chunk per group with
// something to place. It also skips what cannot beat the best waste so far:
// K(C) * C - S >= ceil(S / C) * C - S. Every strict improvement it meets is
// one of those first points, and nothing it skips is one, so the
// improvements it records are the seed's whole waste frontier.
//
// One evaluation counts each group's chunks by one of two exact methods:
// galloping over prefix sums (a few mispredicted branches a chunk: for many
// sizes a chunk) or a walk size by size (for few sizes a chunk), in which a
// run of 16 or more equal sizes (a mixture-of-experts layer) is placed in a
// few divisions, and, over a model's repeated layers (repeated_blocks.h),
// the walk stops once next-fit enters a cycle of blocks and counts the
// remaining cycles by multiplication.

#include <cstdint>

#include "server/planner/engines/plateau_work.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

class CpuPlateauEngine final : public SweepEngine {
 public:
  // Refuses a problem whose BoundPlateauWork(problem).steps exceeds
  // max_work with RESOURCE_EXHAUSTED naming --max_plateau_work.
  explicit CpuPlateauEngine(uint64_t max_work = kDefaultMaxPlateauWork);

  Engine kind() const override { return Engine::kCpuPlateau; }

  // The seed's waste (EngineServes refuses the layout objectives): the
  // best candidate and the whole frontier (the improvements) for either
  // want; RESOURCE_EXHAUSTED beyond max_work.
  absl::StatusOr<SweepOutcome> Run(const SweepTask& task,
                                   const StopCheck& stop) const override;

 private:
  uint64_t max_work_;
};

// What one walk did: tests hold it to BoundPlateauWork.
struct PlateauWalkTally {
  uint64_t evaluations = 0;
  uint64_t max_chunks = 0;  // the most chunks one evaluation counted
  uint64_t searches = 0;    // searches for a new plateau that evaluated
};

// Sweep's walk without the work limit; fills *tally where it is not null.
absl::StatusOr<SweepOutcome> WalkPlateaus(const SweepProblem& problem,
                                          const StopCheck& stop,
                                          PlateauWalkTally* tally);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_
