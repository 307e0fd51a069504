#include "server/planner/layout/objective_problem.h"

#include <algorithm>
#include <deque>
#include <optional>

#include "absl/strings/str_cat.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "server/planner/engines/sweep_stop.h"
#include "server/planner/layout/chunk_placement.h"
#include "server/planner/layout/measure_lanes.h"
#include "server/planner/plan/request_checks.h"

namespace chunkplan::planner {
namespace {

// Steps (parameters placed) between two asks of the stop check: a few
// milliseconds of work, however many parameters a candidate places.
constexpr uint64_t kStopEverySteps = uint64_t{1} << 20;

// One contiguous range of the grid: its own frontier (its strict prefix
// minima, only the last max_points + 1 of them: the merge keeps a tail of
// them at most), or the first candidate beyond 64 bits.
struct RangeFrontier {
  std::deque<FrontierPoint> points;
  // With the seed's objective: whether each point's layout measures passed
  // 2^64-1 (an error only if the point stays a point of the whole grid).
  std::deque<bool> overflowed;
  // With a layout objective: the first candidate whose value passed 2^64-1.
  std::optional<uint64_t> overflow_at;
};

// Appends `point` to `out` (whose last point it improves on), keeping
// the last max_points + 1.
void Keep(const FrontierPoint& point, bool overflowed, uint64_t max_points,
          RangeFrontier& out) {
  out.points.push_back(point);
  out.overflowed.push_back(overflowed);
  if (out.points.size() > max_points + 1) {
    out.points.pop_front();
    out.overflowed.pop_front();
  }
}

bool Improves(const RangeFrontier& out, uint64_t value) {
  return out.points.empty() || value < out.points.back().value;
}

// The seed's objective: every candidate's seed waste, the layout only at
// the points (a point carries all three measures).
RangeFrontier SweepSeedRange(const SearchPlan& plan,
                             const ObjectiveProblem& problem, uint64_t begin,
                             uint64_t end, uint64_t max_points,
                             uint64_t steps_per_candidate, SweepStop& stop) {
  RangeFrontier out;
  uint64_t steps = kStopEverySteps;  // ask before the first candidate
  for (uint64_t i = begin; i < end; ++i) {
    if (steps >= kStopEverySteps) {
      if (!stop.Continue()) return out;
      steps = 0;
    }
    steps += steps_per_candidate;
    const uint64_t chunk = plan.sweep.grid.At(i);
    const uint64_t waste = TotalWasteAt(plan.sweep, chunk);
    if (!Improves(out, waste)) continue;
    const LayoutValues layout = problem.At(chunk);
    Keep({i, problem.Rounded(chunk), waste, waste, layout.layout_padding,
          layout.peak_rank_bytes},
         layout.overflow, max_points, out);
  }
  return out;
}

// A layout objective: every candidate's layout, kMeasureLanes candidates
// per pass, the seed's waste only at the points.
RangeFrontier SweepLayoutRange(const SearchPlan& plan,
                               const ObjectiveProblem& problem,
                               Objective objective, uint64_t begin,
                               uint64_t end, uint64_t max_points,
                               uint64_t steps_per_candidate, SweepStop& stop) {
  RangeFrontier out;
  const CandidateGrid& grid = plan.sweep.grid;
  const LayoutArrays arrays = problem.arrays();
  uint64_t steps = kStopEverySteps;  // ask before the first pass
  for (uint64_t i = begin; i < end; i += kMeasureLanes) {
    if (steps >= kStopEverySteps) {
      if (!stop.Continue()) return out;
      steps = 0;
    }
    steps += steps_per_candidate * kMeasureLanes;
    // A short last pass repeats candidate i in the lanes beyond the range
    // and drops them.
    const uint64_t lanes = std::min<uint64_t>(kMeasureLanes, end - i);
    uint64_t rounded[kMeasureLanes];
    for (uint64_t l = 0; l < kMeasureLanes; ++l) {
      rounded[l] = problem.Rounded(grid.At(i + (l < lanes ? l : 0)));
    }
    LayoutValues values[kMeasureLanes];
    MeasureLanes(arrays, rounded, values);
    for (uint64_t l = 0; l < lanes; ++l) {
      const LayoutValues& layout = values[l];
      if (layout.overflow) {
        out.overflow_at = i + l;
        return out;
      }
      const uint64_t value = objective == Objective::kLayoutPadding
                                 ? layout.layout_padding
                                 : layout.peak_rank_bytes;
      if (!Improves(out, value)) continue;
      Keep({i + l, rounded[l], value, TotalWasteAt(plan.sweep, grid.At(i + l)),
            layout.layout_padding, layout.peak_rank_bytes},
           false, max_points, out);
    }
  }
  return out;
}

}  // namespace

absl::Status MeasureOverflowError(uint64_t candidate, uint64_t chunk) {
  return absl::InvalidArgumentError(
      absl::StrCat("candidate ", candidate, " (chunk size ", chunk,
                   "): a layout measure exceeds 2^64-1"));
}

absl::Status TooManyPointsError(uint64_t max_points) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the frontier has more than ", max_points,
                   " points; narrow search_range_m or widen search_interval"));
}

uint64_t ObjectiveProblem::Rounded(uint64_t chunk) const {
  return chunk + (degree_lcm - chunk % degree_lcm) % degree_lcm;
}

LayoutArrays ObjectiveProblem::arrays() const {
  return {tensors.data(), begin.data(), degrees.data(), groups(), fixed, rates};
}

LayoutValues ObjectiveProblem::At(uint64_t chunk) const {
  const uint64_t rounded = Rounded(chunk);
  LayoutValues v;
  MeasureLayout<uint64_t>(arrays(), &rounded, &v);
  return v;
}

ObjectiveProblem BuildObjectiveProblem(const LayoutRequest& request,
                                       const SearchPlan& plan) {
  const SearchRequest& search = request.search;
  const auto placed = [&](size_t i) {
    return request.frozen.empty() || !request.frozen[i];
  };
  ObjectiveProblem p;
  p.degree_lcm = plan.degree_lcm;
  std::vector<PlacedTensor> group;
  for (const DegreeGroup& g : plan.groups) {
    group.clear();
    for (size_t i = 0; i < search.numels.size(); ++i) {
      if (DegreeOf(search, i) == g.dp_degree && placed(i)) {
        group.push_back(Placed(search.numels[i], g.dp_degree));
      }
    }
    if (g.keep_gathered) {
      // Kept whole in one chunk of the group's total, which holds every
      // placed tensor (the first opens it, the rest fit), held whole by
      // every rank.
      if (group.empty()) continue;
      uint64_t used = 0;
      for (const PlacedTensor& t : group) used += t.numel;
      p.fixed.gathered_elements += g.total;
      p.fixed.gathered_used += used;
      p.fixed.gathered_padding += g.total - used;
      continue;
    }
    p.tensors.insert(p.tensors.end(), group.begin(), group.end());
    p.begin.push_back(p.tensors.size());
    p.degrees.push_back(g.dp_degree);
  }
  // The search's config order: kept-gathered groups first. Only the
  // non-gathered ones are here, already in first-seen order.
  // The frozen elements are at most the total, below 2^63.
  p.fixed.frozen_bytes = 2 * FrozenElements(search, request.frozen);
  const GeminiSettings& s = request.gemini;
  const bool separate_grads = !s.master_weights || s.gradient_accumulation;
  p.rates.held_bytes =
      2 + (s.master_weights ? 4 : 0) + (separate_grads ? 2 : 0);
  p.rates.state_bytes =
      s.optimizer == Optimizer::kNone ? 0 : 2 * (s.master_weights ? 4 : 2);
  return p;
}

absl::StatusOr<std::vector<FrontierPoint>> SweepFrontier(
    const SearchPlan& plan, const ObjectiveProblem& problem,
    Objective objective, uint64_t max_points, const StopCheck& stop,
    common::WorkerPool* pool) {
  const CandidateGrid& grid = plan.sweep.grid;
  const uint64_t count = grid.count;
  const bool seed = objective == Objective::kSeedWaste;
  const uint64_t steps_per_candidate =
      1 + (seed ? plan.sweep.sizes.size() : problem.tensors.size());
  const unsigned helpers = pool == nullptr ? 0 : pool->size();
  // Contiguous ranges, several per thread: range r's candidates all precede
  // range r+1's, so the frontier is the ranges' own frontiers merged in
  // order.
  const uint64_t ranges = std::clamp<uint64_t>(
      count / std::max<uint64_t>(1, kStopEverySteps / steps_per_candidate), 1,
      std::min<uint64_t>(count, uint64_t{4} * (helpers + 1)));
  SweepStop shared(stop);
  std::vector<RangeFrontier> partial(ranges);
  common::ParallelFor(pool, helpers, ranges, [&](uint64_t r) {
    const uint64_t begin = count / ranges * r + std::min(r, count % ranges);
    const uint64_t end = begin + count / ranges + (r < count % ranges ? 1 : 0);
    partial[r] =
        seed ? SweepSeedRange(plan, problem, begin, end, max_points,
                              steps_per_candidate, shared)
             : SweepLayoutRange(plan, problem, objective, begin, end,
                                max_points, steps_per_candidate, shared);
  });
  if (absl::Status s = shared.status(); !s.ok()) return s;
  std::vector<FrontierPoint> points;
  for (const RangeFrontier& part : partial) {
    // The lowest candidate beyond 64 bits is the answer.
    if (part.overflow_at.has_value()) {
      return MeasureOverflowError(*part.overflow_at,
                                  grid.At(*part.overflow_at));
    }
    for (size_t k = 0; k < part.points.size(); ++k) {
      const FrontierPoint& p = part.points[k];
      if (!points.empty() && p.value >= points.back().value) continue;
      if (part.overflowed[k]) {
        return MeasureOverflowError(p.candidate, grid.At(p.candidate));
      }
      if (points.size() == max_points) {
        return TooManyPointsError(max_points);
      }
      points.push_back(p);
    }
  }
  return points;
}

LayoutFrontierScan::LayoutFrontierScan(const SearchPlan& plan,
                                       const ObjectiveProblem& problem,
                                       Objective objective, uint64_t max_points)
    : plan_(plan),
      problem_(problem),
      objective_(objective),
      max_points_(max_points) {}

absl::Status LayoutFrontierScan::Add(uint64_t first,
                                     std::span<const uint64_t> values,
                                     std::optional<uint64_t> overflow_at) {
  const CandidateGrid& grid = plan_.sweep.grid;
  // Earlier slices had none: this one's lowest is the grid's.
  if (overflow_at.has_value()) {
    return MeasureOverflowError(*overflow_at, grid.At(*overflow_at));
  }
  for (size_t k = 0; k < values.size(); ++k) {
    if (!points_.empty() && values[k] >= points_.back().value) continue;
    const uint64_t i = first + k;
    const uint64_t chunk = grid.At(i);
    const LayoutValues layout = problem_.At(chunk);
    const uint64_t host = objective_ == Objective::kLayoutPadding
                              ? layout.layout_padding
                              : layout.peak_rank_bytes;
    if (layout.overflow || host != values[k]) {
      return absl::InternalError(absl::StrCat("candidate ", i,
                                              ": the device measured ",
                                              values[k], ", the host ", host));
    }
    if (points_.size() == max_points_) return TooManyPointsError(max_points_);
    points_.push_back({i, problem_.Rounded(chunk), host,
                       TotalWasteAt(plan_.sweep, chunk), layout.layout_padding,
                       layout.peak_rank_bytes});
  }
  return absl::OkStatus();
}

}  // namespace chunkplan::planner
