#include "server/planner/planner.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cuda_engine.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/layout/chunk_placement.h"
#include "server/planner/layout/objective_problem.h"
#include "server/planner/layout/rank_memory.h"
#include "server/planner/plan/checked_math.h"
#include "server/planner/plan/request_checks.h"
#include "server/planner/plan/search_plan.h"

namespace chunkplan::planner {
namespace {

// The seed's config_dict: kept-gathered degrees first (in first-seen order),
// then every other degree with the shared chunk size.
std::vector<ChunkConfig> Configs(const SearchPlan& plan, uint64_t chunk_size) {
  std::vector<ChunkConfig> configs;
  configs.reserve(plan.groups.size());
  for (const DegreeGroup& g : plan.groups) {
    if (g.keep_gathered) configs.push_back({g.dp_degree, g.total, true});
  }
  for (const DegreeGroup& g : plan.groups) {
    if (!g.keep_gathered) configs.push_back({g.dp_degree, chunk_size, false});
  }
  return configs;
}

// Nanoseconds of the steady clock since `started`.
uint64_t NanosSince(std::chrono::steady_clock::time_point started) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - started)
          .count());
}

// The chunkplan.v1 name of `objective`.
const char* ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kSeedWaste:
      return "OBJECTIVE_SEED_WASTE";
    case Objective::kLayoutPadding:
      return "OBJECTIVE_LAYOUT_PADDING";
    case Objective::kPeakRankBytes:
      return "OBJECTIVE_PEAK_RANK_BYTES";
  }
  return "OBJECTIVE_?";
}

// `status`, an INVALID_ARGUMENT naming a field of the search part, with
// "search." before the field; any other status as it is.
absl::Status InSearchPart(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) return status;
  return absl::InvalidArgumentError(absl::StrCat("search.", status.message()));
}

#if defined(CHUNKPLAN_HAVE_CUDA_ENGINE)
// A layout objective's frontier from the device's values, slice by slice.
absl::StatusOr<std::vector<FrontierPoint>> CudaFrontier(
    const CudaEngine& cuda, const SearchPlan& plan,
    const ObjectiveProblem& problem, Objective objective,
    const StopCheck& stop) {
  LayoutFrontierScan scan(plan, problem, objective,
                          Planner::kMaxFrontierPoints);
  CHUNKPLAN_RETURN_IF_ERROR(cuda.MeasureLayouts(
      problem.arrays(), plan.sweep.grid, problem.degree_lcm,
      objective == Objective::kPeakRankBytes, stop,
      [&](const LayoutSlice& slice) {
        return scan.Add(slice.first, slice.values, slice.overflow_at);
      }));
  return scan.Take();
}
#endif

}  // namespace

Planner::Planner(PlannerOptions options)
    : options_(options),
      sweep_pool_(common::ThreadsOrCores(options.cpu_sweep.threads)) {
  engines_.push_back(
      std::make_unique<CpuSweepEngine>(options.cpu_sweep, &sweep_pool_));
  engines_.push_back(
      std::make_unique<CpuPlateauEngine>(options.max_plateau_work));
#if defined(CHUNKPLAN_HAVE_CUDA_ENGINE)
  engines_.push_back(std::make_unique<CudaEngine>(options.cuda));
#endif
  for (size_t i = 0; i < engines_.size(); ++i) {
    health_.push_back(std::make_unique<DeviceHealth>());
  }
}

Planner::Planner(PlannerOptions options,
                 std::vector<std::unique_ptr<SweepEngine>> engines)
    : options_(options), sweep_pool_(1), engines_(std::move(engines)) {
  for (size_t i = 0; i < engines_.size(); ++i) {
    health_.push_back(std::make_unique<DeviceHealth>());
  }
}

Planner::~Planner() = default;

DeviceHealth& Planner::HealthOf(const SweepEngine& engine) const {
  size_t i = 0;
  while (engines_[i].get() != &engine) ++i;
  return *health_[i];
}

absl::Status Planner::Runnable(const SweepEngine& engine) const {
  CHUNKPLAN_RETURN_IF_ERROR(HealthOf(engine).Usable());
  return engine.Usable();
}

std::vector<EngineState> Planner::EngineStates() const {
  std::vector<EngineState> states;
  for (const auto& e : engines_) states.push_back({e->kind(), Runnable(*e)});
  std::sort(states.begin(), states.end(),
            [](const EngineState& a, const EngineState& b) {
              return a.engine < b.engine;
            });
  return states;
}

std::vector<Engine> Planner::AvailableEngines() const {
  std::vector<Engine> kinds;
  for (const EngineState& s : EngineStates()) {
    if (s.usable.ok()) kinds.push_back(s.engine);
  }
  return kinds;
}

std::string Planner::DescribeEngines() const {
  std::string text;
  for (const EngineState& s : EngineStates()) {
    absl::StrAppend(&text, text.empty() ? "" : " ", EngineName(s.engine));
    if (!s.usable.ok()) {
      absl::StrAppend(&text, " (not usable here: ", s.usable.message(), ")");
    }
  }
  return text;
}

const SweepEngine* Planner::Find(Engine kind) const {
  for (const auto& e : engines_) {
    if (e->kind() == kind) return e.get();
  }
  return nullptr;
}

absl::StatusOr<const SweepEngine*> Planner::Choose(
    Engine requested, const SweepProblem& problem) const {
  if (requested == Engine::kAuto) {
    // The plateau engine is exact and the fastest CPU engine on every
    // workload measured (bench/); CUDA where the cost model expects it to
    // beat the plateau engine. The cost model runs first, so small requests
    // never initialise the CUDA runtime.
    const SweepEngine* cuda = Find(Engine::kCuda);
    if (cuda != nullptr && AutoPrefersCuda(problem, options_.cuda.max_work) &&
        Runnable(*cuda).ok()) {
      return cuda;
    }
    return Find(Engine::kCpuPlateau);
  }
  const SweepEngine* engine = Find(requested);
  if (engine == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "engine ", EngineName(requested), " is not available in this binary"));
  }
  CHUNKPLAN_RETURN_IF_ERROR(Runnable(*engine));
  return engine;
}

absl::StatusOr<SearchResult> Planner::Search(const SearchRequest& request,
                                             const StopCheck& stop) const {
  const auto started = std::chrono::steady_clock::now();
  CHUNKPLAN_ASSIGN_OR_RETURN(const SearchPlan plan, BuildSearchPlan(request));
  CHUNKPLAN_ASSIGN_OR_RETURN(const SweepEngine* engine,
                             Choose(request.engine, plan.sweep));
  SearchResult result;
  absl::StatusOr<SweepOutcome> swept = engine->Sweep(plan.sweep, stop);
  if (IsCudaFailure(swept.status())) {
    // The device failed (not a limit, not a stop): every engine gives the
    // same answer, so the plateau engine gives it. A sticky failure keeps
    // the device out of every later search.
    HealthOf(*engine).RecordFailure(swept.status());
    result.fallback_reason = absl::StrCat(
        EngineName(engine->kind()), " failed, CPU_PLATEAU answered: ",
        absl::StatusCodeToString(swept.status().code()), ": ",
        swept.status().message());
    engine = Find(Engine::kCpuPlateau);
    swept = engine->Sweep(plan.sweep, stop);
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(const SweepOutcome outcome, std::move(swept));

  uint64_t chunk_size = 0;
  // BuildSearchPlan checked every candidate's round-up.
  CheckedRoundUp(outcome.chunk_size, plan.degree_lcm, &chunk_size);
  result.configs = Configs(plan, chunk_size);
  result.total_param_size = plan.total_param_size;
  result.min_chunk_waste = outcome.waste;
  result.engine = engine->kind();
  result.candidates = plan.sweep.grid.count;
  result.search_nanos = NanosSince(started);
  return result;
}

absl::StatusOr<FrontierResult> Planner::Frontier(const LayoutRequest& request,
                                                 const StopCheck& stop) const {
  const auto started = std::chrono::steady_clock::now();
  CHUNKPLAN_RETURN_IF_ERROR(CheckFrozen(request));
  absl::StatusOr<SearchPlan> plan = BuildSearchPlan(request.search);
  if (!plan.ok()) return InSearchPart(plan.status());
  if (!request.configs.empty()) {
    return absl::InvalidArgumentError(
        "configs: Frontier chooses among the search's candidates; with given "
        "configs there is nothing to choose");
  }
  const Engine engine = request.search.engine;
  if (engine == Engine::kCpuPlateau &&
      request.objective != Objective::kSeedWaste) {
    return absl::InvalidArgumentError(absl::StrCat(
        "objective: ", ObjectiveName(request.objective),
        " has no plateau method known to be exact, so CPU_PLATEAU cannot "
        "serve it; use AUTO or CPU_SWEEP"));
  }
  if (engine == Engine::kCuda && request.objective == Objective::kSeedWaste) {
    return absl::InvalidArgumentError(
        "search.engine: CUDA serves the layout objectives' frontier; the "
        "seed's is walked by CPU_PLATEAU (AUTO) or CPU_SWEEP");
  }
  const ObjectiveProblem problem = BuildObjectiveProblem(request, *plan);
  FrontierResult result;
  result.candidates = plan->sweep.grid.count;
  if (request.objective == Objective::kSeedWaste &&
      engine != Engine::kCpuSweep) {
    // The plateau engine meets every strict improvement of the seed's waste
    // on its walk: the frontier, without visiting every candidate.
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const SweepOutcome outcome,
        Find(Engine::kCpuPlateau)->Sweep(plan->sweep, stop));
    for (const Improvement& i : outcome.improvements) {
      const LayoutValues layout = problem.At(i.chunk_size);
      if (layout.overflow) {
        return MeasureOverflowError(i.index, i.chunk_size);
      }
      if (result.points.size() == kMaxFrontierPoints) {
        return TooManyPointsError(kMaxFrontierPoints);
      }
      result.points.push_back({i.index, problem.Rounded(i.chunk_size), i.waste,
                               i.waste, layout.layout_padding,
                               layout.peak_rank_bytes});
    }
    result.engine = Engine::kCpuPlateau;
    result.search_nanos = NanosSince(started);
    return result;
  }
  // Every candidate places every placed parameter once.
  uint64_t work = 0;
  const bool work_fits =
      CheckedMul(plan->sweep.grid.count,
                 std::max<uint64_t>(1, problem.tensors.size()), &work);
  if (engine == Engine::kCuda || engine == Engine::kAuto) {
    // CUDA by name, or AUTO where the device is usable and the sweep is
    // worth a launch (kCudaMinWork) and within its limit.
    const SweepEngine* cuda = Find(Engine::kCuda);
    if (engine == Engine::kCuda && cuda == nullptr) {
      return absl::FailedPreconditionError(
          "engine CUDA is not available in this binary");
    }
    if (engine == Engine::kCuda) CHUNKPLAN_RETURN_IF_ERROR(Runnable(*cuda));
    const bool use = engine == Engine::kCuda ||
                     (cuda != nullptr && work_fits && work >= kCudaMinWork &&
                      work <= options_.cuda.max_work && Runnable(*cuda).ok());
#if defined(CHUNKPLAN_HAVE_CUDA_ENGINE)
    const auto* device = dynamic_cast<const CudaEngine*>(cuda);
    if (use && device != nullptr) {
      absl::StatusOr<std::vector<FrontierPoint>> points =
          CudaFrontier(*device, *plan, problem, request.objective, stop);
      if (points.ok() || !IsCudaFailure(points.status())) {
        CHUNKPLAN_ASSIGN_OR_RETURN(result.points, std::move(points));
        result.engine = Engine::kCuda;
        result.search_nanos = NanosSince(started);
        return result;
      }
      // The device failed: the CPU threads give the same frontier.
      HealthOf(*cuda).RecordFailure(points.status());
    }
#else
    (void)use;
#endif
  }
  if (!work_fits || work > options_.cpu_sweep.max_work) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the frontier visits ", plan->sweep.grid.count, " candidates x ",
        problem.tensors.size(), " parameters, above this server's limit of ",
        options_.cpu_sweep.max_work, " steps (CPU_SWEEP's --max_sweep_work)"));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(
      result.points, SweepFrontier(*plan, problem, request.objective,
                                   kMaxFrontierPoints, stop, &sweep_pool_));
  result.engine = Engine::kCpuSweep;
  result.search_nanos = NanosSince(started);
  return result;
}

absl::StatusOr<LayoutResult> Planner::Layout(const LayoutRequest& request,
                                             const StopCheck& stop) const {
  const auto started = std::chrono::steady_clock::now();
  CHUNKPLAN_RETURN_IF_ERROR(CheckFrozen(request));
  LayoutResult result;
  std::span<const ChunkConfig> configs = request.configs;
  if (configs.empty() && request.objective != Objective::kSeedWaste) {
    // The objective's best candidate: the frontier's last point.
    CHUNKPLAN_ASSIGN_OR_RETURN(const FrontierResult frontier,
                               Frontier(request, stop));
    const SearchPlan plan = *BuildSearchPlan(request.search);  // checked
    const FrontierPoint& best = frontier.points.back();
    result.search = SearchResult{};
    result.search->configs = Configs(plan, best.chunk_size);
    result.search->total_param_size = plan.total_param_size;
    result.search->min_chunk_waste = best.seed_waste;
    result.search->engine = frontier.engine;
    result.search->candidates = frontier.candidates;
    result.search->search_nanos = frontier.search_nanos;
    configs = result.search->configs;
  } else if (configs.empty()) {
    absl::StatusOr<SearchResult> search = Search(request.search, stop);
    if (!search.ok()) return InSearchPart(search.status());
    result.search = *std::move(search);
    configs = result.search->configs;
  } else {
    // The search part is checked as Search checks it; nothing is swept.
    CHUNKPLAN_RETURN_IF_ERROR(
        InSearchPart(BuildSearchPlan(request.search).status()));
    if (request.objective != Objective::kSeedWaste) {
      return absl::InvalidArgumentError(
          "objective: it chooses among the search's candidates; with given "
          "configs there is nothing to choose");
    }
    CHUNKPLAN_RETURN_IF_ERROR(CheckGivenConfigs(request));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(
      result.groups, PlaceChunks(request.search, configs, request.frozen));
  const uint64_t frozen_elements =
      FrozenElements(request.search, request.frozen);
  for (size_t k = 0; k < result.groups.size(); ++k) {
    if (!CheckedAdd(result.layout_padding, result.groups[k].padding,
                    &result.layout_padding)) {
      return absl::InvalidArgumentError(
          absl::StrCat("layout_padding: the padding of groups[0..", k,
                       "] exceeds 2^64-1 elements"));
    }
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(
      result.most_loaded_rank,
      RankBytes(result.groups, frozen_elements, request.gemini,
                RankOfGroup::kFirst, "most_loaded_rank"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      result.least_loaded_rank,
      RankBytes(result.groups, frozen_elements, request.gemini,
                RankOfGroup::kLast, "least_loaded_rank"));
  CHUNKPLAN_ASSIGN_OR_RETURN(result.gathered_chunk_bytes,
                             GatheredChunkBytes(result.groups));
  result.layout_nanos = NanosSince(started);
  return result;
}

}  // namespace chunkplan::planner
