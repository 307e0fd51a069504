// The GPU machine's check (run by bench/gpu_check.sh; no GoogleTest there):
// the checks of testing/gpu_checks.h (the same functions the CUDA gtests
// call): CUDA and CPU_SWEEP against CPU_PLATEAU on fresh random problems, on
// tie-heavy and beyond-32-bit grids and on a sweep of over a million
// candidates, and the stop check between slices; then the
// throughput of every engine on a LLaMA-2-70B-like sweep (8.4M candidates x
// 723 sizes) against the GPU's integer ceiling, and the cost model's
// estimates against what was measured. Without a device (or a binary without
// the CUDA engine) it runs the CPU parts and says so.
//
//   gpu_check [--require-gpu] [--seed N]
//
// Exit status: 0 when every comparison agreed, 1 on any disagreement or
// error, 3 when --require-gpu was given and no device is usable.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/planner.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "server/planner/engines/cuda_engine.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/request/search_plan.h"
#include "testing/gpu_checks.h"
#include "testing/test_problems.h"

namespace chunkplan::planner {
namespace {

using Clock = std::chrono::steady_clock;

int failures = 0;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Runs `engine` on `p` and compares with `want`; counts a failure and prints
// it on any difference or error.
void Expect(const std::string& what, const SweepEngine& engine,
            const SweepProblem& p, const SweepOutcome& want) {
  const absl::StatusOr<SweepOutcome> got = engine.Sweep(p, {});
  if (!got.ok()) {
    ++failures;
    std::printf("FAIL %s: %s: %s\n", what.c_str(),
                std::string(EngineName(engine.kind())).c_str(),
                got.status().ToString().c_str());
    return;
  }
  if (got->best_index != want.best_index ||
      got->chunk_size != want.chunk_size || got->waste != want.waste) {
    ++failures;
    std::printf("FAIL %s: %s answered index %llu waste %llu, want %llu %llu\n",
                what.c_str(), std::string(EngineName(engine.kind())).c_str(),
                static_cast<unsigned long long>(got->best_index),
                static_cast<unsigned long long>(got->waste),
                static_cast<unsigned long long>(want.best_index),
                static_cast<unsigned long long>(want.waste));
  }
}

SweepOutcome Plateau(const SweepProblem& p) {
  const absl::StatusOr<SweepOutcome> got = CpuPlateauEngine().Sweep(p, {});
  if (!got.ok()) {
    std::printf("FAIL CPU_PLATEAU: %s\n", got.status().ToString().c_str());
    std::exit(1);
  }
  return *got;
}

// The engines under test: CPU_SWEEP always; CUDA (default slices, and
// slices of one resident grid) where a device is usable.
struct Engines {
  CpuSweepEngine sweep{CpuSweepOptions{.max_work = UINT64_MAX}};
  CpuPlateauEngine plateau;
  std::vector<std::pair<std::string, std::unique_ptr<SweepEngine>>> cuda;
};

// Counts a failure and prints the check's findings unless `status` is OK.
void Report(const char* check, const absl::Status& status,
            Clock::time_point t0) {
  if (status.ok()) {
    std::printf("%s: agreed, %.2f s\n", check, Seconds(t0));
    return;
  }
  ++failures;
  std::printf("FAIL %s:\n%s\n", check, std::string(status.message()).c_str());
}

// The checks of testing/gpu_checks.h (tests/planner/cuda_engine_test.cc runs
// them as gtests): every CUDA slicing and CPU_SWEEP against CPU_PLATEAU or
// the known answer.
void CheckCorrectness(const Engines& engines, uint64_t seed) {
  std::vector<testing::NamedEngine> all = {{"CPU_SWEEP", &engines.sweep}};
  std::vector<testing::NamedEngine> beyond = {
      {"CPU_PLATEAU", &engines.plateau}};
  for (const auto& [name, e] : engines.cuda) {
    all.push_back({name, e.get()});
    beyond.push_back({name, e.get()});
  }
  const CudaEngine one_launch(CudaEngineOptions{.steps_per_slice = UINT64_MAX});
  if (!engines.cuda.empty())
    beyond.push_back({"CUDA(one launch)", &one_launch});
  auto t0 = Clock::now();
  Report("300 random problems", testing::AgreesOnRandomProblems(all, seed, 300),
         t0);
  t0 = Clock::now();
  Report("tied problem", testing::TiesGoToTheFirstCandidate(all), t0);
  t0 = Clock::now();
  Report("1.2M candidates", testing::AgreesOnOverAMillionCandidates(all, seed),
         t0);
  t0 = Clock::now();
  Report("beyond 2**31 candidates", testing::FindsIndicesBeyond32Bits(beyond),
         t0);
  if (!engines.cuda.empty()) {
    for (const uint64_t steps : {uint64_t{1} << 32, uint64_t{1}}) {
      const Planner planner(
          PlannerOptions{.cuda = CudaEngineOptions{.steps_per_slice = steps}});
      t0 = Clock::now();
      Report(steps == 1 ? "layout frontiers, one grid per slice"
                        : "layout frontiers (40 random + LLaMA-2 70B shape)",
             testing::FrontiersAgreeWithCpuSweep(planner, seed, 40), t0);
    }
  }
  if (engines.cuda.size() > 1) {
    t0 = Clock::now();
    Report("stop check between slices",
           testing::AsksTheStopCheckBetweenSlices(*engines.cuda[1].second), t0);
  }
}

// Best of `runs` timings of `engine` on `p`; the answer must equal `want`.
double TimeEngine(const SweepEngine& engine, const SweepProblem& p,
                  const SweepOutcome& want, int runs) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const auto t0 = Clock::now();
    Expect("timed sweep", engine, p, want);
    best = std::min(best, Seconds(t0));
  }
  return best;
}

void PrintRow(const char* engine, double seconds, double work,
              std::optional<double> ceiling) {
  std::printf("  %-12s %10.6f %14.3e", engine, seconds, work / seconds);
  if (ceiling) std::printf(" %9.1f%%", 100 * work / seconds / *ceiling);
  std::printf("\n");
}

void Throughput(const Engines& engines,
                const absl::StatusOr<CudaDeviceInfo>& device) {
  const absl::StatusOr<SearchPlan> plan =
      BuildSearchPlan(problems::Llama2_70bLikeRequest());
  if (!plan.ok()) {
    ++failures;
    std::printf("FAIL LLaMA-like plan: %s\n", plan.status().ToString().c_str());
    return;
  }
  const SweepProblem& p = plan->sweep;
  const double work = static_cast<double>(p.grid.count) * p.sizes.size();
  std::printf(
      "\nLLaMA-2-70B-like sweep: %llu candidates x %zu swept sizes = "
      "%.3e steps\n",
      static_cast<unsigned long long>(p.grid.count), p.sizes.size(), work);
  const auto t0 = Clock::now();
  const SweepOutcome want = Plateau(p);
  const double plateau_first = Seconds(t0);
  std::printf("  answer: chunk %llu, waste %llu\n",
              static_cast<unsigned long long>(want.chunk_size),
              static_cast<unsigned long long>(want.waste));
  std::printf("  %-12s %10s %14s %10s\n", "engine", "seconds", "steps/s",
              "of ceiling");
  std::optional<double> ceiling;
  if (!engines.cuda.empty()) {
    // Ceiling: 64 INT32 lanes per SM per clock (Turing to Hopper), a 64-bit
    // add, subtract, select or compare being two of them, and five 64-bit
    // operations per next-fit step in the kernel's PTX (setp.lt.u64, two
    // selp.b64, add.s64, sub.s64; the shared-memory load issues elsewhere).
    const double int64_ops = static_cast<double>(device->multiprocessors) *
                             device->clock_khz * 1e3 * 64 / 2;
    ceiling = int64_ops / 5;
    const auto c0 = Clock::now();
    Expect("LLaMA-like first CUDA call", *engines.cuda.front().second, p, want);
    const double first = Seconds(c0);
    PrintRow("CUDA", TimeEngine(*engines.cuda.front().second, p, want, 5), work,
             ceiling);
    std::printf(
        "  (first CUDA call %.4f s; ceiling %.3e int64 ops/s = %d SMs x "
        "%.0f MHz x 32, /5 per step = %.3e steps/s)\n",
        first, int64_ops, device->multiprocessors, device->clock_khz / 1e3,
        *ceiling);
  }
  PrintRow("CPU_SWEEP", TimeEngine(engines.sweep, p, want, 1), work,
           std::nullopt);
  PrintRow("CPU_PLATEAU",
           std::min(plateau_first, TimeEngine(CpuPlateauEngine(), p, want, 3)),
           work, std::nullopt);
  std::printf("  (CPU_SWEEP on %u hardware threads)\n",
              std::thread::hardware_concurrency());
}

// A problem whose plateau engine has ~sizes/2 plateaus to walk: `sizes`
// random sizes in [1, scale] at `interval` over `count` candidates.
SweepProblem ModelShape(std::mt19937_64& rng, uint64_t sizes, uint64_t count,
                        uint64_t interval, uint64_t scale) {
  SweepProblem p;
  std::vector<uint64_t> group;
  uint64_t largest = 0;
  for (uint64_t i = 0; i < sizes; ++i) {
    group.push_back(1 + rng() % scale);
    largest = std::max(largest, group.back());
  }
  problems::AddGroup(p, group);
  p.grid = {.start = largest, .interval = interval, .count = count};
  return p;
}

// The cost model's estimates against measured times, on problems from small
// to large; the ratios tell how to correct its constants.
void CostModel(const Engines& engines) {
  std::printf(
      "\ncost model (engine_choice.cc), estimated vs measured seconds:\n");
  std::printf("  %-24s %11s %10s %10s %10s %8s\n", "problem", "plateau est",
              "measured", "cuda est", "measured", "AUTO");
  std::mt19937_64 rng(7);
  std::vector<std::pair<std::string, SweepProblem>> shapes = {
      {"200 x 100K, step 64", ModelShape(rng, 200, 100'000, 64, 1 << 20)},
      {"1000 x 1M", ModelShape(rng, 1000, 1'000'000, 1, 1 << 12)},
      {"3000 x 2M", ModelShape(rng, 3000, 2'000'000, 1, 1 << 14)},
      {"4000 x 524K", ModelShape(rng, 4000, 524'289, 1, 1 << 12)},
      {"5000 x 1M, step 4", ModelShape(rng, 5000, 1'000'000, 4, 1 << 12)},
      {"20000 x 200K", ModelShape(rng, 20000, 200'000, 1, 1 << 10)},
  };
  if (auto plan = BuildSearchPlan(problems::Llama2_70bLikeRequest());
      plan.ok()) {
    shapes.emplace_back("LLaMA-2-70B-like", plan->sweep);
  }
  for (const auto& [name, p] : shapes) {
    const SweepCostEstimate est = EstimateSweepCosts(p);
    const auto t0 = Clock::now();
    const SweepOutcome want = Plateau(p);
    const double plateau = Seconds(t0);
    std::string cuda = "-";
    if (!engines.cuda.empty()) {
      cuda =
          std::to_string(TimeEngine(*engines.cuda.front().second, p, want, 2));
    }
    std::printf(
        "  %-24s %11.5f %10.5f %10.5f %10s %8s\n", name.c_str(),
        est.plateau_seconds, plateau, est.cuda_seconds, cuda.c_str(),
        AutoPrefersCuda(p, CudaEngineOptions().max_work) ? "CUDA" : "PLATEAU");
  }
}

int Main(int argc, char** argv) {
  bool require_gpu = false;
  uint64_t seed = std::random_device()();
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--require-gpu") == 0) {
      require_gpu = true;
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else {
      std::fprintf(stderr, "usage: gpu_check [--require-gpu] [--seed N]\n");
      return 2;
    }
  }
  Engines engines;
#if defined(CHUNKPLAN_HAVE_CUDA_ENGINE)
  const absl::StatusOr<CudaDeviceInfo> device = CudaEngine::Device();
#else
  const absl::StatusOr<CudaDeviceInfo> device = absl::FailedPreconditionError(
      "this binary was built without the CUDA engine (no nvcc found)");
#endif
  if (device.ok()) {
    std::printf(
        "GPU: %s, sm_%d%d, %d SMs at %.0f MHz, %d resident blocks of %d"
        " threads, memory pools %s\n",
        device->name.c_str(), device->compute_major, device->compute_minor,
        device->multiprocessors, device->clock_khz / 1e3,
        device->resident_blocks, device->threads_per_block,
        device->memory_pools ? "yes" : "no");
#if defined(CHUNKPLAN_HAVE_CUDA_ENGINE)
    engines.cuda.emplace_back("CUDA", std::make_unique<CudaEngine>());
    engines.cuda.emplace_back(
        "CUDA(one grid per slice)",
        std::make_unique<CudaEngine>(CudaEngineOptions{.steps_per_slice = 1}));
#endif
  } else {
    std::printf("GPU absent: %s\nrunning the CPU parts only\n",
                device.status().ToString().c_str());
    if (require_gpu) return 3;
  }
  CheckCorrectness(engines, seed);
  Throughput(engines, device);
  CostModel(engines);
  std::printf("\n%s: %d disagreement(s)%s\n", failures == 0 ? "OK" : "FAILED",
              failures, device.ok() ? "" : " (CPU engines only: GPU absent)");
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace chunkplan::planner

int main(int argc, char** argv) { return chunkplan::planner::Main(argc, argv); }
