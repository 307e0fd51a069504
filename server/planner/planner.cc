#include "chunkplan/planner/planner.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "chunkplan/planner/activation_estimate.h"
#include "common/status_macros.h"
#include "common/worker_pool.h"
#include "server/planner/candidate/round_up.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "server/planner/engines/cuda_engine.h"
#include "server/planner/engines/device_health.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/engines/frontier_points.h"
#include "server/planner/engines/sweep_engine.h"
#include "server/planner/layout/byte_model_of.h"
#include "server/planner/layout/chunk_placement.h"
#include "server/planner/layout/gathered_chunks.h"
#include "server/planner/layout/layout_checks.h"
#include "server/planner/layout/objective_problem.h"
#include "server/planner/layout/placement.h"
#include "server/planner/layout/rank_memory.h"
#include "server/planner/plan_search/plan_checks.h"
#include "server/planner/plan_search/plan_search.h"
#include "server/planner/plan_search/verdict.h"
#include "server/planner/request/checked_math.h"
#include "server/planner/request/search_plan.h"

namespace chunkplan::planner {
namespace {

using Clock = std::chrono::steady_clock;

// Nanoseconds of the steady clock since `started`.
uint64_t NanosSince(Clock::time_point started) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() -
                                                           started)
          .count());
}

// `status`, an INVALID_ARGUMENT naming a field of the search part, with
// "search." before the field; any other status as it is.
absl::Status InSearchPart(const absl::Status& status) {
  if (status.code() != absl::StatusCode::kInvalidArgument) return status;
  return absl::InvalidArgumentError(absl::StrCat("search.", status.message()));
}

// The engines built into this binary; CPU_SWEEP lends `pool`'s workers (null:
// none).
std::vector<std::unique_ptr<SweepEngine>> BuiltInEngines(
    const PlannerOptions& options, common::WorkerPool* pool) {
  std::vector<std::unique_ptr<SweepEngine>> engines;
  engines.push_back(std::make_unique<CpuSweepEngine>(options.cpu_sweep, pool));
  engines.push_back(
      std::make_unique<CpuPlateauEngine>(options.max_plateau_work));
#if defined(CHUNKPLAN_HAVE_CUDA_ENGINE)
  engines.push_back(std::make_unique<CudaEngine>(options.cuda));
#endif
  return engines;
}

// Each engine of `engines` and whether `runnable` says it can run, in enum
// order.
std::vector<EngineState> StatesOf(
    const std::vector<std::unique_ptr<SweepEngine>>& engines,
    absl::FunctionRef<absl::Status(const SweepEngine&)> runnable) {
  std::vector<EngineState> states;
  for (const auto& e : engines) states.push_back({e->kind(), runnable(*e)});
  std::sort(states.begin(), states.end(),
            [](const EngineState& a, const EngineState& b) {
              return a.engine < b.engine;
            });
  return states;
}

// `states` as DescribeBuiltInEngines words them.
std::string Describe(const std::vector<EngineState>& states) {
  std::string text;
  for (const EngineState& s : states) {
    absl::StrAppend(&text, text.empty() ? "" : " ", EngineName(s.engine));
    if (!s.usable.ok()) {
      absl::StrAppend(&text, " (not usable here: ", s.usable.message(), ")");
    }
  }
  return text;
}

// An answer and the engine that gave it.
struct Ran {
  SweepOutcome outcome;
  const SweepEngine* engine = nullptr;
  // Set when the engine first chosen failed on its device: why.
  std::string fallback_reason;
};

}  // namespace

std::string DescribeBuiltInEngines() {
  // No pool: the engines are only asked whether they can run.
  return Describe(StatesOf(BuiltInEngines(PlannerOptions{}, nullptr),
                           [](const SweepEngine& e) { return e.Usable(); }));
}

class Planner::Impl {
 public:
  Impl(PlannerOptions options, unsigned threads,
       std::vector<std::unique_ptr<SweepEngine>> engines,
       const EngineWrapper& wrap = {})
      : options_(options), pool_(threads), engines_(std::move(engines)) {
    if (engines_.empty()) engines_ = BuiltInEngines(options_, &pool_);
    if (wrap) {
      for (std::unique_ptr<SweepEngine>& e : engines_) e = wrap(std::move(e));
    }
    for (size_t i = 0; i < engines_.size(); ++i) {
      health_.push_back(std::make_unique<DeviceHealth>());
    }
  }

  std::vector<EngineState> EngineStates() const {
    return StatesOf(engines_,
                    [this](const SweepEngine& e) { return Runnable(e); });
  }

  // The seed's search on `plan` (one request's), timed from `started`.
  absl::StatusOr<SearchResult> SearchOn(const SearchPlan& plan, Engine engine,
                                        Clock::time_point started,
                                        const StopCheck& stop) const {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const Ran ran, Run(engine, SweepTask::SeedBest(plan.sweep), stop));
    SearchResult result;
    // BuildSearchPlan checked every candidate's round-up.
    result.configs =
        plan.Configs(RoundUp(ran.outcome.chunk_size, plan.degree_lcm));
    result.total_param_size = plan.total_param_size;
    result.min_chunk_waste = ran.outcome.waste;
    result.engine = ran.engine->kind();
    result.candidates = plan.sweep.grid.count;
    result.fallback_reason = ran.fallback_reason;
    result.search_nanos = NanosSince(started);
    return result;
  }

  // `request`'s frontier on `plan` (BuildSearchPlan(request.search)).
  absl::StatusOr<FrontierResult> FrontierOn(const LayoutRequest& request,
                                            const SearchPlan& plan,
                                            Clock::time_point started,
                                            const StopCheck& stop) const {
    if (!request.configs.empty()) {
      return absl::InvalidArgumentError(
          "configs: Frontier chooses among the search's candidates; with "
          "given configs there is nothing to choose");
    }
    const ObjectiveProblem problem = BuildObjectiveProblem(request, plan);
    const SweepTask task{&plan.sweep, &problem, request.objective,
                         Want::kFrontier, kMaxFrontierPoints};
    CHUNKPLAN_ASSIGN_OR_RETURN(const Ran ran,
                               Run(request.search.engine, task, stop));
    FrontierResult result;
    CHUNKPLAN_ASSIGN_OR_RETURN(result.points,
                               FrontierPoints(task, ran.outcome, stop));
    result.engine = ran.engine->kind();
    result.candidates = plan.sweep.grid.count;
    result.search_nanos = NanosSince(started);
    return result;
  }

 private:
  // The engine of that kind here, or nullptr.
  const SweepEngine* Find(Engine kind) const {
    for (const auto& e : engines_) {
      if (e->kind() == kind) return e.get();
    }
    return nullptr;
  }

  // The health record of `engine`, which must be one of engines_.
  DeviceHealth& HealthOf(const SweepEngine& engine) const {
    size_t i = 0;
    while (engines_[i].get() != &engine) ++i;
    return *health_[i];
  }

  // OK when `engine` can run now: no sticky failure, and its own Usable().
  absl::Status Runnable(const SweepEngine& engine) const {
    CHUNKPLAN_RETURN_IF_ERROR(HealthOf(engine).Usable());
    return engine.Usable();
  }

  // The engine for `requested` on `task` (engine_choice.h's PickEngine), or
  // FAILED_PRECONDITION.
  absl::StatusOr<const SweepEngine*> Choose(Engine requested,
                                            const SweepTask& task) const {
    const Engine kind =
        PickEngine(requested, task, options_.cuda.max_work, [this] {
          const SweepEngine* cuda = Find(Engine::kCuda);
          return cuda != nullptr && Runnable(*cuda).ok();
        });
    const SweepEngine* engine = Find(kind);
    if (engine == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "engine ", EngineName(kind), " is not available in this binary"));
    }
    if (requested != Engine::kAuto) {
      CHUNKPLAN_RETURN_IF_ERROR(Runnable(*engine));
    }
    return engine;
  }

  // `task` on the engine for `requested`. When the device fails (not a
  // limit, not a stop) every exact engine gives the same answer, so the CPU
  // engine for the objective gives it; a sticky failure keeps the device out
  // of every later call.
  absl::StatusOr<Ran> Run(Engine requested, const SweepTask& task,
                          const StopCheck& stop) const {
    CHUNKPLAN_RETURN_IF_ERROR(EngineServes(requested, task));
    Ran ran;
    CHUNKPLAN_ASSIGN_OR_RETURN(ran.engine, Choose(requested, task));
    absl::StatusOr<SweepOutcome> got = ran.engine->Run(task, stop);
    const SweepEngine* cpu = Find(CpuEngineFor(task));
    if (IsCudaFailure(got.status()) && cpu != nullptr) {
      HealthOf(*ran.engine).RecordFailure(got.status());
      ran.fallback_reason = absl::StrCat(
          EngineName(ran.engine->kind()), " failed, ", EngineName(cpu->kind()),
          " answered: ", absl::StatusCodeToString(got.status().code()), ": ",
          got.status().message());
      ran.engine = cpu;
      got = cpu->Run(task, stop);
    }
    CHUNKPLAN_ASSIGN_OR_RETURN(ran.outcome, std::move(got));
    return ran;
  }

  PlannerOptions options_;
  // Before the engines, which use it; destroyed after them.
  // Mutable: a thread-safe pool that const searches lend work to.
  mutable common::WorkerPool pool_;
  std::vector<std::unique_ptr<SweepEngine>> engines_;
  // One per engine, same order.
  std::vector<std::unique_ptr<DeviceHealth>> health_;
};

Planner::Planner(PlannerOptions options) : Planner(options, EngineWrapper{}) {}

Planner::Planner(PlannerOptions options, const EngineWrapper& wrap)
    : impl_(std::make_unique<Impl>(
          options, common::ThreadsOrCores(options.cpu_sweep.threads),
          std::vector<std::unique_ptr<SweepEngine>>{}, wrap)) {}

Planner::Planner(PlannerOptions options,
                 std::vector<std::unique_ptr<SweepEngine>> engines)
    : impl_(std::make_unique<Impl>(options, 1, std::move(engines))) {}

Planner::~Planner() = default;

std::vector<EngineState> Planner::EngineStates() const {
  return impl_->EngineStates();
}

std::vector<Engine> Planner::AvailableEngines() const {
  std::vector<Engine> kinds;
  for (const EngineState& s : EngineStates()) {
    if (s.usable.ok()) kinds.push_back(s.engine);
  }
  return kinds;
}

std::string Planner::DescribeEngines() const {
  return Describe(EngineStates());
}

absl::StatusOr<SearchResult> Planner::Search(const SearchRequest& request,
                                             const StopCheck& stop) const {
  const auto started = Clock::now();
  CHUNKPLAN_ASSIGN_OR_RETURN(const SearchPlan plan, BuildSearchPlan(request));
  return impl_->SearchOn(plan, request.engine, started, stop);
}

absl::StatusOr<FrontierResult> Planner::Frontier(const LayoutRequest& request,
                                                 const StopCheck& stop) const {
  const auto started = Clock::now();
  if (request.workload.has_value()) {
    return absl::InvalidArgumentError(
        "workload: Frontier compares chunk sizes, which the activation "
        "estimate does not depend on; send it to Layout or Plan");
  }
  if (request.cluster.has_value()) {
    return absl::InvalidArgumentError(
        "cluster: Frontier compares chunk sizes and judges none; send it to "
        "Layout or Plan");
  }
  CHUNKPLAN_RETURN_IF_ERROR(CheckFrozen(request));
  CHUNKPLAN_RETURN_IF_ERROR(CheckPlacement(request.gemini));
  absl::StatusOr<SearchPlan> plan = BuildSearchPlan(request.search);
  if (!plan.ok()) return InSearchPart(plan.status());
  return impl_->FrontierOn(request, *plan, started, stop);
}

absl::StatusOr<LayoutResult> Planner::Layout(const LayoutRequest& request,
                                             const StopCheck& stop) const {
  const auto started = Clock::now();
  if (request.cluster.has_value()) {
    CHUNKPLAN_RETURN_IF_ERROR(CheckLayoutCluster(*request.cluster));
  }
  CHUNKPLAN_RETURN_IF_ERROR(CheckFrozen(request));
  CHUNKPLAN_RETURN_IF_ERROR(CheckPlacement(request.gemini));
  LayoutResult result;
  CHUNKPLAN_ASSIGN_OR_RETURN(const ActivationNeed activations,
                             PlanActivationNeed(request.workload));
  result.activation_bytes = activations.activation_bytes;
  result.transient_bytes = activations.transient_bytes;
  // One plan for the whole request: the search's, the objective's, and the
  // check of the search part beside given configs.
  absl::StatusOr<SearchPlan> plan = BuildSearchPlan(request.search);
  if (!plan.ok()) return InSearchPart(plan.status());
  std::span<const ChunkConfig> configs = request.configs;
  if (configs.empty() && request.objective != Objective::kSeedWaste) {
    // The objective's best candidate: the frontier's last point.
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const FrontierResult frontier,
        impl_->FrontierOn(request, *plan, started, stop));
    const FrontierPoint& best = frontier.points.back();
    result.search = SearchResult{};
    result.search->configs = plan->Configs(best.chunk_size);
    result.search->total_param_size = plan->total_param_size;
    result.search->min_chunk_waste = best.seed_waste;
    result.search->engine = frontier.engine;
    result.search->candidates = frontier.candidates;
    result.search->search_nanos = frontier.search_nanos;
    configs = result.search->configs;
  } else if (configs.empty()) {
    absl::StatusOr<SearchResult> search =
        impl_->SearchOn(*plan, request.search.engine, started, stop);
    if (!search.ok()) return InSearchPart(search.status());
    result.search = *std::move(search);
    configs = result.search->configs;
  } else {
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
  CHUNKPLAN_RETURN_IF_ERROR(
      PlaceOnDevices(result.groups, frozen_elements, request.gemini, &result));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const GatheredPeak gathered,
      GatheredChunkPeak(request.search.dp_degrees, request.search.numels.size(),
                        request.frozen, result.groups,
                        request.operations.forward,
                        RecomputedLayers(request.operations, request.workload),
                        request.gemini));
  result.gathered_chunk_bytes = gathered.bytes;
  result.gathered_chunks = gathered.chunks;
  if (std::optional<std::string> note =
          GatheredChunksNote(request.operations)) {
    result.placement.notes.push_back(*std::move(note));
  }
  if (request.workload.has_value()) {
    if (std::optional<std::string> note =
            TpActivationNote(request.workload->shape, request.gemini.tp_size)) {
      result.placement.notes.push_back(*std::move(note));
    }
  }
  if (request.cluster.has_value()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        result.verdict, JudgeLayout(*request.cluster, result, request.gemini));
  }
  result.layout_nanos = NanosSince(started);
  return result;
}

absl::StatusOr<PlanResult> Planner::Plan(const PlanRequest& request,
                                         const StopCheck& stop) const {
  const auto started = Clock::now();
  CHUNKPLAN_ASSIGN_OR_RETURN(
      PlanResult result,
      PlanSearch(
          request,
          [this, &stop](const LayoutRequest& l) { return Layout(l, stop); },
          stop));
  result.plan_nanos = NanosSince(started);
  return result;
}

}  // namespace chunkplan::planner
