#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_PLATEAU_ENGINE_H_

// CPU_PLATEAU: every objective's exact answer and frontier without visiting
// every candidate. The seed's waste: it jumps between plateaus of the total
// chunk count, where alone the waste can reach a new low (docs/
// architecture.md, "The plateau engine"). The layout objectives: the walk
// of layout_plateau.h (docs/layout-plateau.md).

#include <cstdint>

#include "server/planner/engines/plateau_work.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

class CpuPlateauEngine final : public SweepEngine {
 public:
  // Refuses a problem whose BoundPlateauWork(problem).steps (for a layout
  // objective BoundLayoutPlateauWork's, and then the steps the walk counts)
  // exceeds max_work with RESOURCE_EXHAUSTED naming --max_plateau_work.
  explicit CpuPlateauEngine(uint64_t max_work = kDefaultMaxPlateauWork);

  Engine kind() const override { return Engine::kCpuPlateau; }

  // Every objective: the best candidate and the whole frontier (the
  // improvements) for either want; RESOURCE_EXHAUSTED beyond max_work;
  // INVALID_ARGUMENT naming the lowest candidate whose layout measures pass
  // 2^64-1.
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
