#include "server/planner/layout/objective_problem.h"

#include "absl/strings/str_cat.h"
#include "server/planner/candidate/next_fit.h"

namespace chunkplan::planner {
namespace {

// Steps (parameters placed) between two asks of the stop check: a few
// milliseconds of work, however many parameters a candidate places.
constexpr uint64_t kStopEverySteps = uint64_t{1} << 20;

// The degree of parameter `i`.
uint32_t DegreeAt(const SearchRequest& r, size_t i) {
  if (r.dp_degrees.empty()) return 1;
  return r.dp_degrees.size() == 1 ? r.dp_degrees[0] : r.dp_degrees[i];
}

// The seed's waste at candidate `chunk`: next-fit over every swept group.
uint64_t SeedWaste(const SweepProblem& sweep, uint64_t chunk) {
  uint64_t waste = 0;
  for (size_t g = 0; g < sweep.num_groups(); ++g) {
    const auto sizes = sweep.group(g);
    waste += NextFitWaste(sizes.data(), sizes.size(), chunk);
  }
  return waste;
}

}  // namespace

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
      if (DegreeAt(search, i) == g.dp_degree && placed(i)) {
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
  uint64_t frozen = 0;
  for (size_t i = 0; i < search.numels.size(); ++i) {
    if (!placed(i)) frozen += search.numels[i];
  }
  p.fixed.frozen_bytes = 2 * frozen;  // frozen <= the total < 2^63
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
    Objective objective, uint64_t max_points, const StopCheck& stop) {
  const CandidateGrid& grid = plan.sweep.grid;
  std::vector<FrontierPoint> points;
  bool have_best = false;
  uint64_t best = 0;
  const uint64_t steps_per_candidate =
      1 + problem.numels.size() + plan.sweep.sizes.size();
  uint64_t steps = kStopEverySteps;  // ask before the first candidate
  for (uint64_t i = 0; i < grid.count; ++i) {
    if (steps >= kStopEverySteps && stop) {
      if (absl::Status s = stop(); !s.ok()) return s;
      steps = 0;
    }
    steps += steps_per_candidate;
    const uint64_t chunk = grid.At(i);
    const uint64_t waste = SeedWaste(plan.sweep, chunk);
    // Every candidate's layout, whatever the objective: a point carries all
    // three measures, and a measure beyond 64 bits anywhere is no answer.
    const LayoutValues layout = problem.At(chunk);
    if (layout.overflow) {
      return absl::InvalidArgumentError(
          absl::StrCat("candidate ", i, " (chunk size ", chunk,
                       "): a layout measure exceeds 2^64-1"));
    }
    const uint64_t value = objective == Objective::kSeedWaste ? waste
                           : objective == Objective::kLayoutPadding
                               ? layout.layout_padding
                               : layout.peak_rank_bytes;
    if (have_best && value >= best) continue;
    have_best = true;
    best = value;
    if (points.size() == max_points) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "the frontier has more than ", max_points,
          " points; narrow search_range_m or widen search_interval"));
    }
    points.push_back({i, problem.Rounded(chunk), value, waste,
                      layout.layout_padding, layout.peak_rank_bytes});
  }
  return points;
}

}  // namespace chunkplan::planner
