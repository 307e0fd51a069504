#include "server/planner/engines/cpu_sweep_engine.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/planner/candidate/argmin.h"
#include "server/planner/candidate/next_fit.h"
#include "server/planner/engines/sweep_stop.h"

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

uint64_t TotalWasteAt(const SweepProblem& problem, uint64_t chunk) {
  uint64_t waste = 0;
  for (size_t g = 0; g < problem.num_groups(); ++g) {
    const auto sizes = problem.group(g);
    waste += NextFitWaste(sizes.data(), sizes.size(), chunk);
  }
  return waste;
}

CpuSweepEngine::CpuSweepEngine(CpuSweepOptions options,
                               common::WorkerPool* pool)
    : options_(options), pool_(pool) {}

absl::StatusOr<SweepOutcome> CpuSweepEngine::Sweep(
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
  const unsigned helpers = pool_ == nullptr ? 0 : pool_->size();
  // Several ranges per thread, so that a thread that started late or runs
  // slower still finds work; contiguous, so that range r's candidates all
  // precede range r+1's.
  const uint64_t ranges = std::clamp<uint64_t>(
      work / kStepsPerRange, 1,
      std::min<uint64_t>(count, uint64_t{kRangesPerThread} * (helpers + 1)));

  SweepStop sweep_stop(stop);
  std::vector<SweepOutcome> partial(ranges);
  common::ParallelFor(pool_, helpers, ranges, [&](uint64_t r) {
    const uint64_t begin = count / ranges * r + std::min(r, count % ranges);
    const uint64_t end = begin + count / ranges + (r < count % ranges ? 1 : 0);
    partial[r] = SweepRange(problem, begin, end, slice, sweep_stop);
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
