#ifndef CHUNKPLAN_PLANNER_PLANNER_H_
#define CHUNKPLAN_PLANNER_PLANNER_H_

// The planner: one call answers one chunk search, exactly as the seed's
// search_chunk_configuration would, with the engine the request names (or the
// one AUTO picks); or lays out a configuration, or scores every candidate by
// an objective. How a request travels: docs/architecture.md.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/engine_options.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/plan_types.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

class SweepEngine;

struct PlannerOptions {
  // Limits and threads of CPU_SWEEP.
  CpuSweepOptions cpu_sweep;
  // Limits of CUDA (where this binary has it).
  CudaEngineOptions cuda;
  // CPU_PLATEAU's limit on its walk's work bound (engines/plateau_work.h).
  uint64_t max_plateau_work = kDefaultMaxPlateauWork;
};

// Takes one of a Planner's own engines and returns the engine that serves in
// its place (tests: one that holds chosen searches until they are stopped,
// passing every other task to the engine it took).
using EngineWrapper =
    std::function<std::unique_ptr<SweepEngine>(std::unique_ptr<SweepEngine>)>;

// An engine built into a Planner and whether it can run now.
struct EngineState {
  Engine engine = Engine::kAuto;
  absl::Status usable;  // OK, or FAILED_PRECONDITION and why not
};

// Every engine built into this binary, space-separated, each one that cannot
// run here followed by why, e.g. "CPU_SWEEP CPU_PLATEAU CUDA (not usable
// here: CUDA engine: no usable device: ...)". For --version: builds no
// Planner and no thread pool (the device is probed once per process).
std::string DescribeBuiltInEngines();

// Thread-safe: one Planner serves concurrent calls.
class Planner {
 public:
  // The engines of this binary: CPU_SWEEP (on a pool of
  // options.cpu_sweep.threads threads that all its sweeps share),
  // CPU_PLATEAU, and CUDA where it was built in.
  explicit Planner(PlannerOptions options = {});

  // The same engines, each passed through `wrap` (none when it is empty).
  Planner(PlannerOptions options, const EngineWrapper& wrap);

  // The given engines instead (tests: engines that fail on purpose). The
  // CPU engine for an objective (engine_choice.h) answers for an engine
  // whose device fails.
  Planner(PlannerOptions options,
          std::vector<std::unique_ptr<SweepEngine>> engines);

  ~Planner();

  // The search, exactly as the seed's. `stop` is asked between slices of the
  // engine's work. AUTO's pick and the fallback when a device fails:
  // engines/engine_choice.h. Errors: INVALID_ARGUMENT for a malformed request
  // (BuildSearchPlan lists them); RESOURCE_EXHAUSTED beyond the chosen
  // engine's limits; FAILED_PRECONDITION for an engine this binary or
  // machine cannot run; whatever `stop` returns when it stops the search.
  absl::StatusOr<SearchResult> Search(const SearchRequest& request,
                                      const StopCheck& stop = {}) const;

  // What Gemini allocates for `request`: its given configs, or else the
  // search's (run as Search runs it, with `stop`), replayed as ChunkManager
  // places the parameters that are not frozen (layout/chunk_placement.h),
  // and the bytes of the most and least loaded rank (layout/rank_memory.h).
  //
  // With an objective other than kSeedWaste the configs are its best
  // candidate's (Frontier's last point), `search` describing that candidate.
  //
  // Errors: those of Search and Frontier (the search part is checked as
  // Search checks it, even with given configs; an INVALID_ARGUMENT names the
  // field as "search.<field>"); INVALID_ARGUMENT for frozen of the wrong
  // length, given configs ColossalAI would refuse (CheckGivenConfigs) or
  // with an objective, and a padding or byte count beyond 64 bits; with a
  // workload, EstimateActivationBytes' (its figure: activation_bytes).
  absl::StatusOr<LayoutResult> Layout(const LayoutRequest& request,
                                      const StopCheck& stop = {}) const;

  // The most points a frontier may have.
  static constexpr uint64_t kMaxFrontierPoints = 100000;

  // Every candidate of the search's grid scored by `request.objective` (the
  // seed's waste at C, or the layout's padding or rank 0's peak bytes at C
  // rounded up to the lcm, under request.gemini's placement: where it moves
  // chunks by their size each candidate is laid out and placed, on
  // CPU_SWEEP alone; docs/placement.md), and the frontier of those scores:
  // each candidate whose value is a new strict minimum, in grid order, with
  // all three measures. The engine: as named, or AUTO's pick
  // (engines/engine_choice.h; docs/architecture.md, "The planner's three
  // calls, in full").
  //
  // Errors: INVALID_ARGUMENT "workload: ..." for a workload; as Layout's
  // for the search part and frozen; INVALID_ARGUMENT for given configs, an
  // engine that does not serve the objective (EngineServes), or a measure
  // beyond 64 bits; FAILED_PRECONDITION for an engine this binary or
  // machine cannot run; RESOURCE_EXHAUSTED beyond the engine's work limit or
  // kMaxFrontierPoints points; the stop check's status.
  absl::StatusOr<FrontierResult> Frontier(const LayoutRequest& request,
                                          const StopCheck& stop = {}) const;

  // The ranked Gemini configurations that fit `request.cluster`: per world
  // size, up to three chunk sizes (Layout's, as above, with `stop`) under
  // five placements, each option's figures and verdict (docs/plan.md, "The
  // search, exactly"). Errors: INVALID_ARGUMENT naming the field for a
  // malformed cluster (checked first: CheckCluster, cluster_checks.h),
  // workload or search part (as Layout's, at each world size), a byte sum
  // beyond 64 bits; those of Layout; the stop check's.
  absl::StatusOr<PlanResult> Plan(const PlanRequest& request,
                                  const StopCheck& stop = {}) const;

  // The engines this binary can run now, in enum order (never kAuto).
  std::vector<Engine> AvailableEngines() const;

  // Every engine built in, in enum order, with whether it can run now.
  std::vector<EngineState> EngineStates() const;

  // DescribeBuiltInEngines, with this Planner's engines and their health.
  std::string DescribeEngines() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_PLANNER_H_
