#ifndef CHUNKPLAN_SERVER_PLANNER_PLANNER_H_
#define CHUNKPLAN_SERVER_PLANNER_PLANNER_H_

// The planner: one call answers one chunk search, exactly as the seed's
// search_chunk_configuration would, with the engine the request names (or the
// one AUTO picks).

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/planner/cpu_sweep_engine.h"
#include "server/planner/cuda_engine.h"
#include "server/planner/search_types.h"
#include "server/planner/sweep_engine.h"

namespace chunkplan::planner {

struct PlannerOptions {
  // Limits and threads of CPU_SWEEP.
  CpuSweepOptions cpu_sweep;
  // Limits of CUDA (where this binary has it).
  CudaEngineOptions cuda;
};

// Thread-safe: one Planner serves concurrent searches.
class Planner {
 public:
  explicit Planner(PlannerOptions options = {});
  ~Planner();

  // The search. `stop` is asked between slices of the engine's work. AUTO
  // picks CUDA where a device is usable and the cost model prefers it
  // (cuda_cost_model.h), else CPU_PLATEAU. When CUDA fails on its device
  // mid-search, CPU_PLATEAU answers and the result says why.
  //
  // Errors: INVALID_ARGUMENT for a malformed request (BuildSearchPlan lists
  // them); RESOURCE_EXHAUSTED when the chosen engine's limits are exceeded;
  // FAILED_PRECONDITION for an engine this binary or machine cannot run;
  // whatever `stop` returns when it stops the search.
  absl::StatusOr<SearchResult> Search(const SearchRequest& request,
                                      const StopCheck& stop = {}) const;

  // The engines this binary can run now, in enum order (never kAuto).
  std::vector<Engine> AvailableEngines() const;

  // Every engine built into this binary, space-separated, each one that
  // cannot run here followed by why, e.g. "CPU_SWEEP CPU_PLATEAU CUDA (not
  // usable here: CUDA engine: no usable device: ...)". For --version.
  std::string DescribeEngines() const;

 private:
  // The engine for `requested` on `problem`, or FAILED_PRECONDITION.
  absl::StatusOr<const SweepEngine*> Choose(Engine requested,
                                            const SweepProblem& problem) const;

  // The engine of that kind in this binary, or nullptr.
  const SweepEngine* Find(Engine kind) const;

  PlannerOptions options_;
  std::vector<std::unique_ptr<SweepEngine>> engines_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLANNER_H_
