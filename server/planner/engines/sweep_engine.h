#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_ENGINE_H_

// The interface every engine implements: find the first candidate of a
// SweepProblem's grid with the least total next-fit padding.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "server/planner/plan/search_plan.h"
#include "server/planner/search_types.h"

namespace chunkplan::planner {

// An engine's answer. Room to grow: later objectives and the waste frontier
// add fields here, not new interfaces.
// A candidate whose waste is a new strict minimum of the grid so far.
struct Improvement {
  uint64_t index = 0;       // into the grid
  uint64_t chunk_size = 0;  // grid.At(index)
  uint64_t waste = 0;
};

struct SweepOutcome {
  uint64_t best_index = 0;  // into the grid
  uint64_t chunk_size = 0;  // grid.At(best_index)
  uint64_t waste = 0;       // total padding there
  // CPU_PLATEAU: every strict improvement in grid order, the best last (the
  // seed's waste frontier). The other engines leave it empty.
  std::vector<Improvement> improvements;
};

class SweepEngine {
 public:
  virtual ~SweepEngine() = default;

  // Which engine this is (never kAuto).
  virtual Engine kind() const = 0;

  // OK when the engine can run on this machine; else FAILED_PRECONDITION and
  // why. Only an engine that needs a device can fail it (CUDA without one).
  virtual absl::Status Usable() const { return absl::OkStatus(); }

  // The first grid index with the least waste (ties go to the smaller
  // candidate), exactly as the seed's strict `<` loop finds it. Calls `stop`
  // between slices of work and ends with its status when it is not OK.
  // Errors: RESOURCE_EXHAUSTED when the problem is beyond the engine's
  // configured limits; FAILED_PRECONDITION when the engine cannot run here.
  virtual absl::StatusOr<SweepOutcome> Sweep(const SweepProblem& problem,
                                             const StopCheck& stop) const = 0;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_ENGINE_H_
