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
//
// Best, which records no frontier, also skips what cannot beat the first
// candidate L at which every group fits in one chunk: from there on K is
// the number of groups with something to place, so the waste rises with C
// and is known without an evaluation. The walk ends at L and skips every
// candidate before it whose bound exceeds L's waste (a tie before L still
// wins); on a small model (the ColossalAI GPT-2 test, where L's waste is 0)
// that leaves a few evaluations.

#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

class CpuPlateauEngine final : public SweepEngine {
 public:
  Engine kind() const override { return Engine::kCpuPlateau; }

  // The seed's waste (EngineServes refuses the layout objectives): Sweep
  // for kFrontier, Best for kBest.
  absl::StatusOr<SweepOutcome> Run(const SweepTask& task,
                                   const StopCheck& stop) const override;

  // The seed's best candidate and its whole frontier (the improvements).
  absl::StatusOr<SweepOutcome> Sweep(const SweepProblem& problem,
                                     const StopCheck& stop) const;

  // Sweep's best without the improvements.
  absl::StatusOr<SweepOutcome> Best(const SweepProblem& problem,
                                    const StopCheck& stop) const;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_
