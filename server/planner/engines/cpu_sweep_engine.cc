#include "server/planner/engines/cpu_sweep_engine.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/planner/candidate/argmin.h"
#include "server/planner/engines/cpu_sweep_frontier.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/engines/range_split.h"
#include "server/planner/engines/sweep_stop.h"
#include "server/planner/request/checked_math.h"

namespace chunkplan::planner {
namespace {

// Steps between two stop checks (about a millisecond), the least work worth
// a range of its own, and the most ranges per thread.
constexpr uint64_t kStepsPerSlice = uint64_t{1} << 20;
constexpr uint64_t kStepsPerRange = uint64_t{1} << 18;
constexpr unsigned kRangesPerThread = 8;

// The first least-waste index of grid indices [begin, end).
SweepOutcome SweepRange(const SweepProblem& problem, uint64_t begin,
                        uint64_t end, uint64_t slice, SweepStop& stop) {
  SweepOutcome best{begin, problem.grid.At(begin), UINT64_MAX, {}};
  for (uint64_t slice_begin = begin; slice_begin < end; slice_begin += slice) {
    if (!stop.Continue()) break;
    const uint64_t slice_end = std::min(end, slice_begin + slice);
    for (uint64_t i = slice_begin; i < slice_end; ++i) {
      const uint64_t chunk = problem.grid.At(i);
      const uint64_t waste = TotalWasteAt(problem, chunk);
      if (waste < best.waste) best = {i, chunk, waste, {}};
    }
    // Nothing later in the range can beat no padding at all.
    if (best.waste == 0) break;
  }
  return best;
}

}  // namespace

CpuSweepEngine::CpuSweepEngine(CpuSweepOptions options,
                               common::WorkerPool* pool)
    : options_(options), pool_(pool) {}

absl::StatusOr<SweepOutcome> CpuSweepEngine::Run(const SweepTask& task,
                                                 const StopCheck& stop) const {
  CHUNKPLAN_RETURN_IF_ERROR(EngineServes(kind(), task));
  if (task.objective == Objective::kSeedWaste && task.want == Want::kBest) {
    return SeedBest(*task.sweep, stop);
  }
  uint64_t work = task.layout->LayoutWork(task.sweep->grid);
  const bool placed = task.placed_peak();
  if (placed && !CheckedMul(work, kPlacedStepWeight, &work)) work = UINT64_MAX;
  if (work == UINT64_MAX || work > options_.max_work) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "the frontier visits ", task.sweep->grid.count, " candidates x ",
        task.layout->tensors.size(), " parameters",
        placed ? absl::StrCat(" x ", kPlacedStepWeight,
                              " (each candidate laid out and placed in full: "
                              "the peak under a size-dependent placement)")
               : "",
        ", above this server's limit of ", options_.max_work,
        " steps (CPU_SWEEP's --max_sweep_work)"));
  }
  return SweepFrontier(task, stop, pool_);
}

absl::StatusOr<SweepOutcome> CpuSweepEngine::SeedBest(
    const SweepProblem& problem, const StopCheck& stop) const {
  const uint64_t work = problem.SweepWork();
  const uint64_t per_candidate = std::max<uint64_t>(1, problem.sizes.size());
  if (work > options_.max_work) {
    return absl::ResourceExhaustedError(
        absl::StrCat("CPU_SWEEP: ", problem.grid.count, " candidates x ",
                     per_candidate, " swept sizes = ", work,
                     " steps exceed this engine's limit of ", options_.max_work,
                     " (--max_sweep_work); use ENGINE_CPU_PLATEAU or "
                     "ENGINE_AUTO"));
  }
  const uint64_t count = problem.grid.count;
  const uint64_t slice = std::max<uint64_t>(1, kStepsPerSlice / per_candidate);
  // Several ranges per thread, contiguous, so that range r's candidates all
  // precede range r+1's.
  const uint64_t ranges =
      RangeCount(pool_, count, work / kStepsPerRange, kRangesPerThread);
  SweepStop sweep_stop(stop);
  std::vector<SweepOutcome> partial(ranges);
  ForEachRange(pool_, count, ranges, [&](uint64_t r, uint64_t b, uint64_t e) {
    partial[r] = SweepRange(problem, b, e, slice, sweep_stop);
  });
  if (absl::Status status = sweep_stop.status(); !status.ok()) return status;

  SweepOutcome best = partial[0];
  for (const SweepOutcome& p : partial) {
    if (ArgminPrecedes(p.waste, p.best_index, best.waste, best.best_index)) {
      best = p;
    }
  }
  return best;
}

}  // namespace chunkplan::planner
