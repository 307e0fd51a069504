#include "server/planner/planner.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/planner/checked_math.h"
#include "server/planner/cpu_plateau_engine.h"
#include "server/planner/search_plan.h"
#include "server/planner/status_macros.h"

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

}  // namespace

Planner::Planner(PlannerOptions options) {
  engines_.push_back(std::make_unique<CpuSweepEngine>(options.cpu_sweep));
  engines_.push_back(std::make_unique<CpuPlateauEngine>());
}

Planner::~Planner() = default;

std::vector<Engine> Planner::AvailableEngines() const {
  std::vector<Engine> kinds;
  for (const auto& e : engines_) kinds.push_back(e->kind());
  return kinds;
}

absl::StatusOr<const SweepEngine*> Planner::Choose(Engine requested) const {
  // AUTO: the plateau engine is exact and the fastest CPU engine on every
  // workload measured (bench/).
  const Engine wanted = requested == Engine::kAuto ? Engine::kCpuPlateau : requested;
  for (const auto& e : engines_) {
    if (e->kind() == wanted) return e.get();
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "engine ", EngineName(requested), " is not available in this binary"));
}

absl::StatusOr<SearchResult> Planner::Search(const SearchRequest& request,
                                             const StopCheck& stop) const {
  const auto started = std::chrono::steady_clock::now();
  CHUNKPLAN_ASSIGN_OR_RETURN(const SearchPlan plan, BuildSearchPlan(request));
  CHUNKPLAN_ASSIGN_OR_RETURN(const SweepEngine* engine, Choose(request.engine));
  CHUNKPLAN_ASSIGN_OR_RETURN(const SweepOutcome outcome,
                             engine->Sweep(plan.sweep, stop));

  SearchResult result;
  uint64_t chunk_size = 0;
  // BuildSearchPlan checked every candidate's round-up.
  CheckedRoundUp(outcome.chunk_size, plan.degree_lcm, &chunk_size);
  result.configs = Configs(plan, chunk_size);
  result.total_param_size = plan.total_param_size;
  result.min_chunk_waste = outcome.waste;
  result.engine = engine->kind();
  result.candidates = plan.sweep.grid.count;
  result.search_nanos = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - started)
          .count());
  return result;
}

}  // namespace chunkplan::planner
