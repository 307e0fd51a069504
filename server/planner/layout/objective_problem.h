#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_PROBLEM_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_PROBLEM_H_

// A searched LayoutRequest as flat arrays for scoring every candidate by
// what Gemini allocates (candidate/layout_measures.h), and the frontier
// of those scores.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "common/worker_pool.h"
#include "server/planner/candidate/layout_measures.h"
#include "server/planner/layout/layout_types.h"
#include "server/planner/plan/search_plan.h"

namespace chunkplan::planner {

struct ObjectiveProblem {
  // The placed (not frozen) tensors of every non-gathered group, group after
  // group in the search's config order, each in visit order.
  std::vector<PlacedTensor> tensors;
  std::vector<uint64_t> begin = {0};  // groups + 1 offsets into tensors
  std::vector<uint32_t> degrees;      // of each non-gathered group
  FixedTotals fixed;                  // kept-gathered groups, frozen bytes
  ByteRates rates;
  uint64_t degree_lcm = 1;

  uint64_t groups() const { return degrees.size(); }
  // The arrays above as the measures read them; valid while this lives.
  LayoutArrays arrays() const;
  // C': the grid's candidate `chunk` rounded up to the lcm, as the seed
  // rounds its pick (BuildSearchPlan checked that it fits).
  uint64_t Rounded(uint64_t chunk) const;
  // The layout objectives at the grid's candidate `chunk`, laid out at
  // Rounded(chunk).
  LayoutValues At(uint64_t chunk) const;
};

// `request`'s problem under its plan. Requires CheckFrozen passed and
// `plan` = BuildSearchPlan(request.search).
ObjectiveProblem BuildObjectiveProblem(const LayoutRequest& request,
                                       const SearchPlan& plan);

// INVALID_ARGUMENT: candidate `candidate` (grid size `chunk`) has a layout
// measure beyond 2^64-1.
absl::Status MeasureOverflowError(uint64_t candidate, uint64_t chunk);

// RESOURCE_EXHAUSTED: the frontier has more than `max_points` points.
absl::Status TooManyPointsError(uint64_t max_points);

// The frontier of `objective` over every candidate of `plan`'s grid, in
// grid order (strict <: the first candidate with the least value is the
// last point), each point with all three measures; every candidate's layout
// is measured whatever the objective. Calls `stop` every million or so
// parameters placed and ends with its status when it is not OK.
// The calling thread and `pool`'s workers (null: the caller alone) share the
// candidates in contiguous ranges.
// Errors: INVALID_ARGUMENT when a layout measure exceeds 2^64-1 at any
// candidate (naming it); RESOURCE_EXHAUSTED beyond `max_points` points.
absl::StatusOr<std::vector<FrontierPoint>> SweepFrontier(
    const SearchPlan& plan, const ObjectiveProblem& problem,
    Objective objective, uint64_t max_points, const StopCheck& stop,
    common::WorkerPool* pool = nullptr);

// A layout objective's frontier from every candidate's value handed in in
// grid order, slice after slice (the CUDA engine's MeasureLayouts). A point's
// other measures are taken on the host (the same MeasureLayout), and its
// value must be the host's.
class LayoutFrontierScan {
 public:
  // `plan`, `problem` and `objective` (not kSeedWaste) as SweepFrontier's;
  // they must outlive the scan.
  LayoutFrontierScan(const SearchPlan& plan, const ObjectiveProblem& problem,
                     Objective objective, uint64_t max_points);

  // Candidates first, first + 1, ... valued `values`; `overflow_at`: the
  // slice's lowest candidate with a measure beyond 2^64-1. Errors: as
  // SweepFrontier's; INTERNAL when a point's value is not the host's.
  absl::Status Add(uint64_t first, std::span<const uint64_t> values,
                   std::optional<uint64_t> overflow_at);

  // The frontier once every candidate has been added.
  std::vector<FrontierPoint> Take() { return std::move(points_); }

 private:
  const SearchPlan& plan_;
  const ObjectiveProblem& problem_;
  Objective objective_;
  uint64_t max_points_;
  std::vector<FrontierPoint> points_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_PROBLEM_H_
