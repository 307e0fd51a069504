// Google Benchmark of the planner's CPU engines on the workloads of
// bench/workloads/: Planner::Search, request to answer, as the service runs
// it (the plan, the filter and the sweep), timed in wall-clock time.
//
//   chunkplan_bench [--workloads=DIR] [Google Benchmark flags]
//
// Benchmarks, per workload W (the file name without .json):
//   CPU_PLATEAU/W
//   CPU_SWEEP/W/workers:1   one worker thread: the per-core figure
//   CPU_SWEEP/W/workers:N   N = the machine's hardware threads (when > 1)
//   CUDA/W                  where the planner can run CUDA on this machine
//   FRONTIER_SEED/W         Planner::Frontier with OBJECTIVE_SEED_WASTE (the
//                           plateau engine's walk)
//   FRONTIER_PEAK/W         Planner::Frontier with OBJECTIVE_PEAK_RANK_BYTES
//                           (AUTO's engine: CPU_PLATEAU's layout walk)
//   WIDE_FRONTIER/O/W/E     Planner::Frontier for layout objective O on W
//                           widened to search_range_m 1024, interval 128
//                           (8,388,609 candidates; W: llama-2-70b and
//                           mixtral-8x7b), engine E: CPU_PLATEAU, or
//                           CPU_SWEEP with one pool thread besides the
//                           caller (two threads; once: seconds), whose
//                           steps_per_s_per_core counts candidates x
//                           placed parameters per thread
//   INTAKE/W                the request's serialized body to the planner's
//                           request as the server takes it (ParseAndCheck;
//                           the wire count skips a body of at most
//                           --max_params bytes, as these are)
//   INTAKE_PROTOBUF/W       protobuf's parse and CheckAndConvert alone,
//                           without ParseAndCheck's bookkeeping
//   PLAN/W                  BuildSearchPlan alone: the checks, the filter
//                           and the grid, CPU_PLATEAU/W's first stage
//   PLATEAU_SWEEP/W         CpuPlateauEngine::Sweep alone, on W's plan:
//                           CPU_PLATEAU/W's second stage (the rest of
//                           CPU_PLATEAU/W is the engine choice, the answer's
//                           configs and its clock)
//   LAYOUT/W                Planner::Layout on the same request (searched
//                           with CPU_PLATEAU, then laid out at GeminiPlugin's
//                           defaults): compare with CPU_PLATEAU/W
//   FIT_PLAN/W              Planner::Plan on W with world sizes {8, 16, 32,
//                           64} on 80 GiB GPUs (bench/plan_bench.h; W:
//                           llama-2-70b and mixtral-8x7b): compare with
//                           LAYOUT/W
// Each run's label is its answer, "DEGREE:CHUNK[:gathered] ... waste=W
// total=T" (bench/compare_oracle.py checks it against the oracle); counters:
// candidates, params, swept_params, and for CPU_SWEEP and CUDA steps_per_s
// (candidates x swept params per second), steps_per_s_per_core (divided by
// the worker threads) and workers. A search error fails the benchmark
// (error_occurred in the JSON output). CPU_SWEEP's max_work is raised to each
// workload's size; sweeps above kHeavySweepWork steps run a fixed
// kHeavyIterations times instead of Google Benchmark's adaptive count.
//
// DIR defaults to the source tree's bench/workloads.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "bench/plan_bench.h"
#include "bench/workload_loader.h"
#include "benchmark/benchmark.h"
#include "chunkplan/planner/objective.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/planner/search_types.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/slice.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/request/search_plan.h"
#include "server/service/request_intake.h"

#ifndef CHUNKPLAN_BENCH_WORKLOADS_DIR
#define CHUNKPLAN_BENCH_WORKLOADS_DIR "bench/workloads"
#endif

namespace chunkplan::bench {
namespace {

using planner::Engine;

// Sweeps of more steps than this (about a second on one core) run
// kHeavyIterations times.
constexpr uint64_t kHeavySweepWork = uint64_t{1} << 30;
constexpr int64_t kHeavyIterations = 2;

// The answer part of a result, as the label carries it.
std::string AnswerLabel(const planner::SearchResult& result) {
  std::string label;
  for (const planner::ChunkConfig& c : result.configs) {
    absl::StrAppend(&label, c.dp_degree, ":", c.chunk_size,
                    c.keep_gathered ? ":gathered " : " ");
  }
  absl::StrAppend(&label, "waste=", result.min_chunk_waste,
                  " total=", result.total_param_size);
  return label;
}

// Planner::Search on `w` with `engine`; CPU_SWEEP with `workers` threads.
// CPU_SWEEP and CUDA count steps (candidates x swept params) per second;
// CUDA's "per core" is per device.
void RunSearch(benchmark::State& state, const Workload& w, Engine engine,
               unsigned workers) {
  planner::PlannerOptions options;
  options.cpu_sweep.max_work =
      std::max(options.cpu_sweep.max_work, w.sweep_work);
  options.cpu_sweep.threads = workers;
  const planner::Planner planner(options);
  planner::SearchRequest request = w.request;
  request.engine = engine;

  planner::SearchResult last;
  for (auto _ : state) {
    absl::StatusOr<planner::SearchResult> result = planner.Search(request);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    if (result->engine != engine) {
      state.SkipWithError(
          absl::StrCat("ran ", EngineName(result->engine)).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->min_chunk_waste);
    last = *std::move(result);
  }
  state.SetLabel(AnswerLabel(last));
  state.counters["candidates"] = static_cast<double>(w.candidates);
  state.counters["params"] = static_cast<double>(w.params);
  state.counters["swept_params"] = static_cast<double>(w.swept_params);
  if (engine != Engine::kCpuPlateau) {
    const double steps = static_cast<double>(w.sweep_work) *
                         static_cast<double>(state.iterations());
    state.counters["workers"] = workers;
    state.counters["steps_per_s"] =
        benchmark::Counter(steps, benchmark::Counter::kIsRate);
    state.counters["steps_per_s_per_core"] =
        benchmark::Counter(steps / workers, benchmark::Counter::kIsRate);
  }
}

// CPU_PLATEAU's two stages on `w`, apart: BuildSearchPlan, or (`sweep`) the
// plateau engine on the plan built once, as a Search runs it.
void RunStage(benchmark::State& state, const Workload& w, bool sweep) {
  const absl::StatusOr<planner::SearchPlan> plan =
      planner::BuildSearchPlan(w.request);
  if (!plan.ok()) {
    state.SkipWithError(plan.status().ToString().c_str());
    return;
  }
  const planner::CpuPlateauEngine engine;
  for (auto _ : state) {
    if (sweep) {
      absl::StatusOr<planner::SweepOutcome> outcome =
          engine.Sweep(plan->sweep, {});
      benchmark::DoNotOptimize(outcome);
    } else {
      absl::StatusOr<planner::SearchPlan> built =
          planner::BuildSearchPlan(w.request);
      benchmark::DoNotOptimize(built);
    }
  }
}

// Planner::Layout on `w`: the CPU_PLATEAU search, the ChunkManager replay
// and both ranks' bytes. Label: the layout's real padding; counter: chunks.
void RunLayout(benchmark::State& state, const Workload& w) {
  const planner::Planner planner;
  planner::LayoutRequest request;
  request.search = w.request;
  request.search.engine = Engine::kCpuPlateau;
  uint64_t padding = 0;
  size_t chunks = 0;
  for (auto _ : state) {
    absl::StatusOr<planner::LayoutResult> result = planner.Layout(request);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(result->most_loaded_rank.device_bytes);
    padding = result->layout_padding;
    chunks = 0;
    for (const planner::GroupLayout& g : result->groups) {
      chunks += g.chunks.size();
    }
  }
  state.SetLabel(absl::StrCat("layout_padding=", padding));
  state.counters["chunks"] = static_cast<double>(chunks);
  state.counters["params"] = static_cast<double>(w.params);
}

// Planner::Frontier on `request` for `objective` with `engine` (AUTO: as a
// client asks); CPU_SWEEP on `workers` pool threads besides the caller.
void RunFrontierOf(benchmark::State& state, const Workload& w,
                   planner::SearchRequest request, planner::Objective objective,
                   Engine engine, unsigned workers) {
  planner::PlannerOptions options;
  options.cpu_sweep.max_work = UINT64_MAX;
  options.cpu_sweep.threads = workers;
  const planner::Planner planner(options);
  planner::LayoutRequest layout;
  layout.search = std::move(request);
  layout.search.engine = engine;
  layout.objective = objective;
  size_t points = 0;
  uint64_t candidates = 0;
  for (auto _ : state) {
    absl::StatusOr<planner::FrontierResult> result = planner.Frontier(layout);
    if (!result.ok()) {
      state.SkipWithError(result.status().ToString().c_str());
      return;
    }
    points = result->points.size();
    candidates = result->candidates;
    benchmark::DoNotOptimize(result->points.back().value);
    if (engine != Engine::kAuto && result->engine != engine) {
      state.SkipWithError(
          absl::StrCat("ran ", EngineName(result->engine)).c_str());
      return;
    }
  }
  const double steps = static_cast<double>(candidates) *
                       static_cast<double>(w.params) *
                       static_cast<double>(state.iterations());
  state.SetLabel(absl::StrCat("points=", points));
  state.counters["candidates"] = static_cast<double>(candidates);
  if (engine == Engine::kCpuSweep) {  // every candidate, workers + 1 threads
    state.counters["steps_per_s_per_core"] =
        benchmark::Counter(steps / (workers + 1), benchmark::Counter::kIsRate);
  }
}

// Planner::Frontier on `w` for `objective`, AUTO's engine.
void RunFrontier(benchmark::State& state, const Workload& w,
                 planner::Objective objective) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  RunFrontierOf(state, w, w.request, objective, Engine::kAuto, cores);
}

// The wide grid that issue 29 asks for (search_range_m 1024, interval 128:
// 8,388,609 candidates), on the workloads named here.
constexpr const char* kWideWorkloads[] = {"llama-2-70b", "mixtral-8x7b"};
constexpr double kWideRangeM = 1024;
constexpr uint64_t kWideInterval = 128;

// WIDE_FRONTIER/OBJECTIVE/W/ENGINE: both layout objectives' frontier on `w`
// widened, CPU_PLATEAU against CPU_SWEEP on two threads.
void RegisterWide(const Workload& w) {
  if (std::find_if(std::begin(kWideWorkloads), std::end(kWideWorkloads),
                   [&w](const char* n) { return w.name == n; }) ==
      std::end(kWideWorkloads)) {
    return;
  }
  planner::SearchRequest wide = w.request;
  wide.search_range_m = kWideRangeM;
  wide.search_interval = kWideInterval;
  for (const planner::Objective o : {planner::Objective::kLayoutPadding,
                                     planner::Objective::kPeakRankBytes}) {
    for (const Engine e : {Engine::kCpuPlateau, Engine::kCpuSweep}) {
      benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
          absl::StrCat("WIDE_FRONTIER/", ObjectiveName(o), "/", w.name, "/",
                       EngineName(e))
              .c_str(),
          [&w, wide, o, e](benchmark::State& state) {
            RunFrontierOf(state, w, wide, o, e, 1);
          });
      b->UseRealTime()->Unit(benchmark::kMillisecond);
      if (e == Engine::kCpuSweep) b->Iterations(1);
    }
  }
}

// A Search request body to the planner's request, as the server takes it:
// ParseAndCheck, or, with `protobuf`, ParseRequest then CheckAndConvert
// alone.
void RunIntake(benchmark::State& state, const Workload& w, bool protobuf) {
  grpc::Slice slice(w.wire);
  const grpc::ByteBuffer body(&slice, 1);
  const service::ServiceOptions options;
  for (auto _ : state) {
    absl::StatusOr<planner::SearchRequest> request;
    if (protobuf) {
      absl::StatusOr<v1::ChunkSearchRequest> parsed =
          service::ParseRequest(body);
      request = parsed.ok() ? service::CheckAndConvert(*parsed, options)
                            : parsed.status();
    } else {
      request = service::ParseAndCheck(body, options);
    }
    if (!request.ok()) {
      state.SkipWithError(request.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(request->numels.data());
  }
  state.counters["bytes"] = static_cast<double>(w.wire.size());
}

void Register(const Workload& w, Engine engine, unsigned workers) {
  std::string name = absl::StrCat(EngineName(engine), "/", w.name);
  if (engine == Engine::kCpuSweep) absl::StrAppend(&name, "/workers:", workers);
  benchmark::internal::Benchmark* b = benchmark::RegisterBenchmark(
      name.c_str(), [&w, engine, workers](benchmark::State& state) {
        RunSearch(state, w, engine, workers);
      });
  b->UseRealTime()->Unit(benchmark::kMicrosecond);
  if (engine == Engine::kCpuSweep && w.sweep_work > kHeavySweepWork) {
    b->Iterations(kHeavyIterations);
  }
}

// The value of --workloads=DIR among the arguments Google Benchmark left,
// or the default; false (after a message) on any other argument.
bool ParseArgs(int argc, char** argv, std::string* dir) {
  *dir = CHUNKPLAN_BENCH_WORKLOADS_DIR;
  constexpr const char kFlag[] = "--workloads=";
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], kFlag, sizeof kFlag - 1) == 0) {
      *dir = argv[i] + sizeof kFlag - 1;
    } else {
      std::fprintf(stderr, "chunkplan_bench: unknown argument %s\n", argv[i]);
      return false;
    }
  }
  return true;
}

int Main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::string dir;
  if (!ParseArgs(argc, argv, &dir)) return 2;
  // Registered benchmarks keep references into `workloads`: it lives until
  // the runs end.
  const absl::StatusOr<std::vector<Workload>> workloads = LoadWorkloads(dir);
  if (!workloads.ok()) {
    std::fprintf(stderr, "chunkplan_bench: %s\n",
                 workloads.status().ToString().c_str());
    return 2;
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::vector<Engine> available = planner::Planner().AvailableEngines();
  const bool cuda = std::find(available.begin(), available.end(),
                              Engine::kCuda) != available.end();
  for (const Workload& w : *workloads) {
    Register(w, Engine::kCpuPlateau, 1);
    Register(w, Engine::kCpuSweep, 1);
    if (cores > 1) Register(w, Engine::kCpuSweep, cores);
    if (cuda) Register(w, Engine::kCuda, 1);
    benchmark::RegisterBenchmark(absl::StrCat("FRONTIER_SEED/", w.name).c_str(),
                                 [&w](benchmark::State& state) {
                                   RunFrontier(state, w,
                                               planner::Objective::kSeedWaste);
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::internal::Benchmark* frontier = benchmark::RegisterBenchmark(
        absl::StrCat("FRONTIER_PEAK/", w.name).c_str(),
        [&w](benchmark::State& state) {
          RunFrontier(state, w, planner::Objective::kPeakRankBytes);
        });
    frontier->UseRealTime()->Unit(benchmark::kMillisecond);
    if (w.candidates * w.params > kHeavySweepWork) {
      frontier->Iterations(kHeavyIterations);
    }
    for (const bool protobuf : {false, true}) {
      benchmark::RegisterBenchmark(
          absl::StrCat(protobuf ? "INTAKE_PROTOBUF/" : "INTAKE/", w.name)
              .c_str(),
          [&w, protobuf](benchmark::State& state) {
            RunIntake(state, w, protobuf);
          })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
    for (const bool sweep : {false, true}) {
      benchmark::RegisterBenchmark(
          absl::StrCat(sweep ? "PLATEAU_SWEEP/" : "PLAN/", w.name).c_str(),
          [&w, sweep](benchmark::State& state) { RunStage(state, w, sweep); })
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
    RegisterWide(w);
    benchmark::RegisterBenchmark(
        absl::StrCat("LAYOUT/", w.name).c_str(),
        [&w](benchmark::State& state) { RunLayout(state, w); })
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond);
    RegisterPlanBenchmark(w);
  }
  const size_t ran = benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (ran == 0) {
    std::fprintf(stderr, "chunkplan_bench: no benchmark matched\n");
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace chunkplan::bench

int main(int argc, char** argv) { return chunkplan::bench::Main(argc, argv); }
