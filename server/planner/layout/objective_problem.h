#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_PROBLEM_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_PROBLEM_H_

// A searched LayoutRequest as flat arrays for scoring every candidate by
// what Gemini allocates (candidate/layout_measures.h). The engines score
// them (engines/sweep_engine.h).

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "server/planner/candidate/layout_measures.h"
#include "server/planner/request/search_plan.h"

namespace chunkplan::planner {

struct ObjectiveProblem {
  // The placed (not frozen) tensors of every non-gathered group, group after
  // group in the search's config order, each in visit order.
  std::vector<PlacedTensor> tensors;
  std::vector<uint64_t> begin = {0};  // groups + 1 offsets into tensors
  std::vector<uint32_t> degrees;      // of each non-gathered group
  FixedTotals fixed;                  // kept-gathered groups, frozen elements
  ByteModel bytes;
  uint64_t degree_lcm = 1;
  // Set where the request's placement moves chunks by their size
  // (MovesBySize): the request, whose candidates Exact lays out and places
  // in full, and the search's configs (their non-gathered sizes replaced
  // there). Not owned; it must outlive this problem.
  const LayoutRequest* placed = nullptr;
  std::vector<ChunkConfig> configs;

  uint64_t groups() const { return degrees.size(); }
  // The arrays above as the measures read them; valid while this lives.
  LayoutArrays arrays() const;
  // C': the grid's candidate `chunk` rounded up to the lcm, as the seed
  // rounds its pick (BuildSearchPlan checked that it fits).
  uint64_t Rounded(uint64_t chunk) const;
  // The layout objectives at the grid's candidate `chunk`, laid out at
  // Rounded(chunk).
  LayoutValues At(uint64_t chunk) const;
  // The layout objectives at the grid's candidate `chunk` as Layout counts
  // them at Rounded(chunk): At(chunk) where the byte model carries the
  // placement; under `placed`, the candidate laid out (PlaceChunks), placed
  // (MostLoadedDeviceBytes: rank 0 under the worst chunk order) and its
  // gathered buffer added. `overflow` is set where either measure, or a
  // group's padding, passes 2^64-1. Errors: RESOURCE_EXHAUSTED from the
  // placement's extremes over every chunk order.
  absl::StatusOr<LayoutValues> Exact(uint64_t chunk) const;
  // Steps of a sweep that lays out every candidate of `grid`: candidates x
  // max(1, placed tensors); UINT64_MAX when the product overflows.
  uint64_t LayoutWork(const CandidateGrid& grid) const;
};

// `request`'s problem under its plan (`placed` set to &request where
// MovesBySize(request.gemini)). Requires CheckFrozen and CheckPlacement
// passed and `plan` = BuildSearchPlan(request.search).
ObjectiveProblem BuildObjectiveProblem(const LayoutRequest& request,
                                       const SearchPlan& plan);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_PROBLEM_H_
