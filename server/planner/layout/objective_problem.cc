#include "server/planner/layout/objective_problem.h"

#include <algorithm>
#include <deque>
#include <optional>

#include "absl/strings/str_cat.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "server/planner/engines/sweep_stop.h"
#include "server/planner/layout/chunk_placement.h"
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

RangeFrontier SweepRange(const SearchPlan& plan,
                         const ObjectiveProblem& problem, Objective objective,
                         uint64_t begin, uint64_t end, uint64_t max_points,
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
    // The layout objectives need every candidate's layout; the seed's only
    // its points' (a point carries all three measures).
    LayoutValues layout;
    const bool seed = objective == Objective::kSeedWaste;
    if (!seed) {
      layout = problem.At(chunk);
      if (layout.overflow) {
        out.overflow_at = i;
        return out;
      }
    }
    const uint64_t value = seed ? waste
                           : objective == Objective::kLayoutPadding
                               ? layout.layout_padding
                               : layout.peak_rank_bytes;
    if (!out.points.empty() && value >= out.points.back().value) continue;
    if (seed) layout = problem.At(chunk);
    out.overflowed.push_back(layout.overflow);
    out.points.push_back({i, problem.Rounded(chunk), value, waste,
                          layout.layout_padding, layout.peak_rank_bytes});
    if (out.points.size() > max_points + 1) {
      out.points.pop_front();
      out.overflowed.pop_front();
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

LayoutValues ObjectiveProblem::At(uint64_t chunk) const {
  return MeasureLayout(numels.data(), begin.data(), degrees.data(), groups(),
                       Rounded(chunk), fixed, rates);
}

ObjectiveProblem BuildObjectiveProblem(const LayoutRequest& request,
                                       const SearchPlan& plan) {
  const SearchRequest& search = request.search;
  const auto placed = [&](size_t i) {
    return request.frozen.empty() || !request.frozen[i];
  };
  ObjectiveProblem p;
  p.degree_lcm = plan.degree_lcm;
  std::vector<uint64_t> group_numels;
  for (const DegreeGroup& g : plan.groups) {
    group_numels.clear();
    for (size_t i = 0; i < search.numels.size(); ++i) {
      if (DegreeOf(search, i) == g.dp_degree && placed(i)) {
        group_numels.push_back(search.numels[i]);
      }
    }
    if (g.keep_gathered) {
      // Kept whole at the group's total, which holds every placed tensor:
      // at most one chunk.
      const GroupTotals t = PlaceGroup(group_numels.data(), group_numels.size(),
                                       g.total, g.dp_degree);
      p.fixed.gathered_elements += t.chunk_elements;
      p.fixed.gathered_padding += t.padding;
      p.fixed.gathered_used += t.chunk_elements - t.padding;
      continue;
    }
    p.numels.insert(p.numels.end(), group_numels.begin(), group_numels.end());
    p.begin.push_back(p.numels.size());
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
  const uint64_t steps_per_candidate =
      1 + problem.numels.size() + plan.sweep.sizes.size();
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
    partial[r] = SweepRange(plan, problem, objective, begin, end, max_points,
                            steps_per_candidate, shared);
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

}  // namespace chunkplan::planner
