#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_ENGINE_H_

// The one interface every engine implements, for every objective it serves:
// score the candidates of one request's grid by an objective and answer its
// best candidate or its whole frontier. Which engine serves what, and AUTO's
// pick, are engine_choice.h's; docs/architecture.md walks a request through.

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/objective.h"
#include "chunkplan/planner/search_types.h"
#include "server/planner/layout/objective_problem.h"
#include "server/planner/request/search_plan.h"

namespace chunkplan::planner {

// What the caller needs of the scores.
enum class Want {
  kBest,      // the first candidate with the least value (Search)
  kFrontier,  // every strict improvement in grid order (Frontier)
};

// One request's question to an engine. The pointees are not owned and must
// outlive the call.
struct SweepTask {
  const SweepProblem* sweep = nullptr;  // the grid and the swept sizes
  // The placed parameters and their bytes: required unless the objective is
  // kSeedWaste and kBest is wanted.
  const ObjectiveProblem* layout = nullptr;
  Objective objective = Objective::kSeedWaste;
  Want want = Want::kBest;
  // kFrontier: an engine may stop once it holds max_points + 1 points (the
  // caller then refuses the frontier as too long).
  uint64_t max_points = UINT64_MAX;

  // The most points an engine need keep: max_points + 1.
  uint64_t keep() const {
    return max_points == UINT64_MAX ? max_points : max_points + 1;
  }

  // The peak objective under a placement that moves chunks by their size
  // (ObjectiveProblem::placed): each candidate laid out and placed in full,
  // which only CPU_SWEEP does (engine_choice.h).
  bool placed_peak() const {
    return objective == Objective::kPeakRankBytes && layout != nullptr &&
           layout->placed != nullptr;
  }

  // The seed's best candidate of `problem` (a Search).
  static SweepTask SeedBest(const SweepProblem& problem) {
    return {&problem, nullptr, Objective::kSeedWaste, Want::kBest};
  }
};

// A candidate whose value is a new strict minimum of the grid so far.
struct Improvement {
  uint64_t index = 0;       // into the grid
  uint64_t chunk_size = 0;  // grid.At(index)
  uint64_t waste = 0;       // the objective's value there
};

// An engine's answer.
struct SweepOutcome {
  uint64_t best_index = 0;  // into the grid
  uint64_t chunk_size = 0;  // grid.At(best_index)
  uint64_t waste = 0;       // the objective's value there
  // Every strict improvement in grid order, the best last: always for
  // kFrontier (at most max_points + 1 of them, the first ones), and where an
  // engine meets them anyway (CPU_PLATEAU); else empty.
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

  // `task`'s answer: ties go to the smaller candidate, exactly as the seed's
  // strict `<` loop finds them. Calls `stop` between slices of work and ends
  // with its status when it is not OK. Errors: INVALID_ARGUMENT for a task
  // the engine does not serve (EngineServes) or a layout measure beyond
  // 2^64-1 at a candidate (naming the lowest); RESOURCE_EXHAUSTED when the
  // task is beyond the engine's configured limits; FAILED_PRECONDITION when
  // the engine cannot run here.
  virtual absl::StatusOr<SweepOutcome> Run(const SweepTask& task,
                                           const StopCheck& stop) const = 0;

  // Run(SweepTask::SeedBest(problem), stop): the seed's best candidate.
  absl::StatusOr<SweepOutcome> Sweep(const SweepProblem& problem,
                                     const StopCheck& stop) const {
    return Run(SweepTask::SeedBest(problem), stop);
  }
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_ENGINE_H_
