#include "bench/plan_bench.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "chunkplan/planner/planner.h"

namespace chunkplan::bench {
namespace {

constexpr uint64_t kGiB = uint64_t{1} << 30;

// The cluster: 80 GiB GPUs, 1 TiB hosts of 8 GPUs.
planner::PlanRequest ClusterRequest(const Workload& w) {
  planner::PlanRequest request;
  request.search = w.request;
  request.search.engine = planner::Engine::kAuto;
  request.cluster.device_memory_bytes = 80 * kGiB;
  request.cluster.host_memory_bytes = 1024 * kGiB;
  request.cluster.gpus_per_node = 8;
  request.cluster.world_sizes = {8, 16, 32, 64};
  return request;
}

// Label: the first option; counters: options considered, options that fit.
void RunPlan(benchmark::State& state, const Workload& w) {
  const planner::Planner planner;
  const planner::PlanRequest request = ClusterRequest(w);
  uint64_t considered = 0;
  size_t fit = 0;
  std::string first;
  for (auto _ : state) {
    absl::StatusOr<planner::PlanResult> result = planner.Plan(request);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    considered = result->options_considered;
    fit = 0;
    for (const planner::PlanOption& o : result->options) fit += o.verdict.fits;
    first = result->options.empty() ? "" : result->options[0].colossalai;
  }
  state.SetLabel(first);
  state.counters["options_considered"] = static_cast<double>(considered);
  state.counters["options_fit_of_shown"] = static_cast<double>(fit);
}

}  // namespace

void RegisterPlanBenchmark(const Workload& w) {
  if (w.name != "llama-2-70b" && w.name != "mixtral-8x7b") return;
  benchmark::RegisterBenchmark(
      absl::StrCat("FIT_PLAN/", w.name).c_str(),
      [&w](benchmark::State& state) { RunPlan(state, w); })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace chunkplan::bench
