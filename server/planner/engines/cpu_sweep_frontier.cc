#include "server/planner/engines/cpu_sweep_frontier.h"

#include <algorithm>
#include <deque>
#include <vector>

#include "server/planner/engines/frontier_merge.h"
#include "server/planner/engines/range_split.h"
#include "server/planner/engines/sweep_stop.h"
#include "server/planner/layout/measure_lanes.h"
#include "server/planner/layout/objective_errors.h"
#include "server/planner/request/seed_waste.h"

namespace chunkplan::planner {
namespace {

// Steps (sizes or parameters placed) between two asks of the stop check: a
// few milliseconds of work, however many a candidate places.
constexpr uint64_t kStopEverySteps = uint64_t{1} << 20;
// The most ranges per thread.
constexpr unsigned kRangesPerThread = 4;

// One contiguous range of the grid: its own frontier (its strict prefix
// minima, only the last `keep` of them: the merge keeps a head of the whole
// frontier, which they end), or the error of its first candidate that has
// one (a layout measure beyond 64 bits, a placement's refusal).
struct RangeFrontier {
  std::deque<Improvement> points;
  absl::Status failure;
};

// The placed peak of candidates [i, i + lanes) (ObjectiveProblem::Exact),
// one after the other; false (and out->failure set) at the first error.
bool PlacedValuesAt(const SweepTask& task, uint64_t i, uint64_t lanes,
                    uint64_t* values, RangeFrontier* out) {
  const CandidateGrid& grid = task.sweep->grid;
  for (uint64_t l = 0; l < lanes; ++l) {
    absl::StatusOr<LayoutValues> v = task.layout->Exact(grid.At(i + l));
    if (v.ok() && v->overflow) {
      v = MeasureOverflowError(i + l, grid.At(i + l));
    }
    if (!v.ok()) {
      out->failure = v.status();
      return false;
    }
    values[l] = v->peak_rank_bytes;
  }
  return true;
}

// The values of candidates [i, i + lanes) into values[0..lanes); false
// (and out->failure set) where one has none.
bool ValuesAt(const SweepTask& task, uint64_t i, uint64_t lanes,
              uint64_t* values, RangeFrontier* out) {
  const CandidateGrid& grid = task.sweep->grid;
  if (task.objective == Objective::kSeedWaste) {
    for (uint64_t l = 0; l < lanes; ++l) {
      values[l] = TotalWasteAt(*task.sweep, grid.At(i + l));
    }
    return true;
  }
  if (task.placed_peak()) return PlacedValuesAt(task, i, lanes, values, out);
  // A short last pass repeats candidate i in the lanes beyond the range and
  // drops them.
  uint64_t rounded[kMeasureLanes];
  for (uint64_t l = 0; l < kMeasureLanes; ++l) {
    rounded[l] = task.layout->Rounded(grid.At(i + (l < lanes ? l : 0)));
  }
  LayoutValues measured[kMeasureLanes];
  MeasureLanes(task.layout->arrays(), rounded, measured);
  for (uint64_t l = 0; l < lanes; ++l) {
    if (measured[l].overflow) {
      out->failure = MeasureOverflowError(i + l, grid.At(i + l));
      return false;
    }
    values[l] = ObjectiveValue(task.objective, 0, measured[l]);
  }
  return true;
}

// Candidates [begin, end), kMeasureLanes per pass.
RangeFrontier SweepRange(const SweepTask& task, uint64_t begin, uint64_t end,
                         uint64_t steps_per_candidate, SweepStop& stop) {
  RangeFrontier out;
  const CandidateGrid& grid = task.sweep->grid;
  uint64_t steps = kStopEverySteps;  // ask before the first pass
  for (uint64_t i = begin; i < end; i += kMeasureLanes) {
    if (steps >= kStopEverySteps) {
      if (!stop.Continue()) return out;
      steps = 0;
    }
    steps += steps_per_candidate * kMeasureLanes;
    const uint64_t lanes = std::min<uint64_t>(kMeasureLanes, end - i);
    uint64_t values[kMeasureLanes];
    if (!ValuesAt(task, i, lanes, values, &out)) return out;
    for (uint64_t l = 0; l < lanes; ++l) {
      if (!out.points.empty() && values[l] >= out.points.back().waste) continue;
      out.points.push_back({i + l, grid.At(i + l), values[l]});
      if (out.points.size() > task.keep()) out.points.pop_front();
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<SweepOutcome> SweepFrontier(const SweepTask& task,
                                           const StopCheck& stop,
                                           common::WorkerPool* pool) {
  const CandidateGrid& grid = task.sweep->grid;
  const uint64_t count = grid.count;
  const uint64_t steps_per_candidate =
      (1 + (task.objective == Objective::kSeedWaste
                ? task.sweep->sizes.size()
                : task.layout->tensors.size())) *
      (task.placed_peak() ? kPlacedStepWeight : 1);
  const uint64_t ranges = RangeCount(
      pool, count,
      count / std::max<uint64_t>(1, kStopEverySteps / steps_per_candidate),
      kRangesPerThread);
  SweepStop shared(stop);
  std::vector<RangeFrontier> partial(ranges);
  ForEachRange(pool, count, ranges, [&](uint64_t r, uint64_t b, uint64_t e) {
    partial[r] = SweepRange(task, b, e, steps_per_candidate, shared);
  });
  if (absl::Status s = shared.status(); !s.ok()) return s;
  FrontierMerge merge(task.keep());
  for (const RangeFrontier& part : partial) {
    // The lowest candidate with an error: a range stops at its first, and
    // the ranges are in grid order.
    if (!part.failure.ok()) return part.failure;
    for (const Improvement& p : part.points) {
      if (!merge.Offer(p.index, p.chunk_size, p.waste)) return merge.Take();
    }
  }
  return merge.Take();
}

}  // namespace chunkplan::planner
