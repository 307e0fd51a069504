#include "server/planner/engines/engine_choice.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "server/planner/engines/layout_plateau.h"

namespace chunkplan::planner {
namespace {

// The plateau engine's time per evaluation per chunk counted, and its
// evaluations per plateau (gallop then bisect). Re-fitted 2026-12-04 from
// `build/bin/gpu_check --seed N` (its cost-model table, CPU parts; figures
// in docs/performance.md): on its six random problems (200 to 20,000 sizes,
// 100K to 2M candidates) the best of two runs measured 0.48x to 1.5x the
// estimate at the old 2.5e-9 s, geometric mean 0.805, hence 2.0e-9. On
// model-shaped problems (the LLaMA-2-70B-like stress sweep) the walk counts
// repeated layers by multiplication and runs 30x to 50x faster than this
// estimate: AUTO overrates the CPU there, yet keeps it (30 us measured, 1.4
// ms estimated, against CUDA's 30 ms estimate).
constexpr double kPlateauSecondsPerChunk = 2.0e-9;
constexpr double kEvaluationsPerLog2 = 0.6;

// UNMEASURED: no device run has measured these yet (bench/gpu_check.sh on a
// GPU machine replaces them). Assumed: the sweep kernel's rate in candidates
// x swept sizes per second (an eighth of the H200's integer ceiling of about
// 1.7e12), and its fixed cost per request (stream, allocation, two uploads,
// launches, synchronisations, tens of microseconds each).
constexpr double kCudaStepsPerSecond = 2e11;
constexpr double kCudaFixedSeconds = 2e-4;

// CPU_PLATEAU's layout walk per step (one placed tensor of one layout):
// 2.6 ns, the whole wide LLaMA-2 70B padding Frontier (0.13 ms of CPU for
// the 68 layouts of 724 steps it takes; WIDE_FRONTIER, issue 29).
// AUTO multiplies it by the walk's bound, which overstates the layouts
// (13,719 bounded there), so it overrates the walk and prefers CUDA only
// where the bound is long.
constexpr double kLayoutPlateauSecondsPerStep = 2.6e-9;

// Sum over groups of ceil(S_g / chunk): a lower bound of next-fit's chunks.
// A chunk size of 0 only occurs when every swept size is 0 (the start is at
// least the largest one), and next-fit then opens no chunk.
double ChunkEstimate(const SweepProblem& problem, uint64_t chunk) {
  if (chunk == 0) return 0;
  double chunks = 0;
  for (size_t g = 0; g < problem.num_groups(); ++g) {
    uint64_t sum = 0;
    for (uint64_t s : problem.group(g)) sum += s;
    chunks += static_cast<double>(sum / chunk + (sum % chunk != 0 ? 1 : 0));
  }
  return chunks;
}

}  // namespace

SweepCostEstimate EstimateSweepCosts(const SweepProblem& problem) {
  const CandidateGrid& grid = problem.grid;
  const double candidates = static_cast<double>(grid.count);
  const double n = static_cast<double>(problem.sizes.size());
  const double chunks_first = ChunkEstimate(problem, grid.At(0));
  const double chunks_last = ChunkEstimate(problem, grid.At(grid.count - 1));
  const double plateaus = std::min(candidates, chunks_first - chunks_last + 1);
  const double evaluations =
      plateaus *
      (kEvaluationsPerLog2 * std::log2(candidates / plateaus + 1) + 1);

  SweepCostEstimate estimate;
  estimate.plateau_seconds =
      evaluations * std::max(1.0, chunks_first) * kPlateauSecondsPerChunk;
  estimate.cuda_seconds =
      kCudaFixedSeconds + candidates * std::max(1.0, n) / kCudaStepsPerSecond;
  return estimate;
}

bool AutoPrefersCuda(const SweepProblem& problem, uint64_t cuda_max_work) {
  const uint64_t work = problem.SweepWork();
  if (work < kCudaMinWork || work > cuda_max_work) return false;
  const SweepCostEstimate estimate = EstimateSweepCosts(problem);
  return estimate.cuda_seconds < estimate.plateau_seconds;
}

bool AutoPrefersCuda(const SweepTask& task, uint64_t cuda_max_work) {
  if (task.objective == Objective::kSeedWaste) {
    return AutoPrefersCuda(*task.sweep, cuda_max_work);
  }
  const uint64_t work = task.layout->LayoutWork(task.sweep->grid);
  if (work == UINT64_MAX || work < kCudaMinWork || work > cuda_max_work) {
    return false;
  }
  return EstimateLayoutCudaSeconds(work) < EstimateLayoutPlateauSeconds(task);
}

double EstimateLayoutPlateauSeconds(const SweepTask& task) {
  return static_cast<double>(BoundLayoutPlateauWork(task).steps) *
         kLayoutPlateauSecondsPerStep;
}

double EstimateLayoutCudaSeconds(uint64_t layout_work) {
  return kCudaFixedSeconds +
         static_cast<double>(layout_work) / kCudaStepsPerSecond;
}

absl::Status EngineServes(Engine kind, Objective objective, Want want) {
  const bool seed = objective == Objective::kSeedWaste;
  if (kind == Engine::kCuda && seed && want == Want::kFrontier) {
    return absl::InvalidArgumentError(
        "search.engine: CUDA serves the layout objectives' frontier; "
        "ColossalAI's search's is walked by CPU_PLATEAU (AUTO) or CPU_SWEEP");
  }
  return absl::OkStatus();
}

absl::Status EngineServes(Engine kind, const SweepTask& task) {
  if (task.placed_peak() && kind != Engine::kAuto &&
      kind != Engine::kCpuSweep) {
    return absl::InvalidArgumentError(absl::StrCat(
        "search.engine: ", EngineName(kind),
        " does not serve OBJECTIVE_PEAK_RANK_BYTES under a placement that "
        "moves chunks by their size (an offload_optim_frac strictly between "
        "0 and 1, shard_param_frac < 1, an honoured offload_param_frac); "
        "CPU_SWEEP (AUTO) lays out and places every candidate"));
  }
  return EngineServes(kind, task.objective, task.want);
}

Engine CpuEngineFor(const SweepTask& task) {
  return task.placed_peak() ? Engine::kCpuSweep : Engine::kCpuPlateau;
}

// search_work.h states the threshold in its contract.
static_assert(kCudaMinWork == uint64_t{1} << 30);

bool CpuPlateauServes(const SearchRequest& request, uint64_t work_bound) {
  return request.engine == Engine::kCpuPlateau ||
         (request.engine == Engine::kAuto && work_bound < kCudaMinWork);
}

Engine PickEngine(Engine requested, const SweepTask& task,
                  uint64_t cuda_max_work,
                  absl::FunctionRef<bool()> cuda_usable) {
  if (requested != Engine::kAuto) return requested;
  if (EngineServes(Engine::kCuda, task).ok() &&
      AutoPrefersCuda(task, cuda_max_work) && cuda_usable()) {
    return Engine::kCuda;
  }
  return CpuEngineFor(task);
}

}  // namespace chunkplan::planner
