#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_SEARCH_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_SEARCH_H_

// Plan's search (docs/plan.md, "The search, exactly"): per world size, up
// to three chunk sizes, each under up to five placements, evaluated and
// ranked. Layout runs through a callback (Planner::Plan passes its own
// Layout with the call's stop check; tests pass their own).

#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/plan_types.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

// Lays out one request as Planner::Layout does.
using LayoutCall =
    absl::FunctionRef<absl::StatusOr<LayoutResult>(const LayoutRequest&)>;

// The Layout request of chunk-size source `from` at world size `world_size`:
// the search part with dp_degrees [world_size] (the wide grid's range and
// interval for kPeakRankBytesWide), frozen, the fixed choices with static
// placement and nothing moved, and the source's objective.
LayoutRequest ChunkSizeRequest(const PlanRequest& request, uint32_t world_size,
                               ChunkSizeFrom from);

// Whether ColossalAI accepts `configs` at launch at `world_size`: every
// config that is not kept gathered has a chunk size divisible by it.
bool ColossalaiAccepts(const std::vector<ChunkConfig>& configs,
                       uint32_t world_size);

// The ranked options of `request` (plan_nanos left 0). `stop` is asked
// before each option and each placement of a fraction's search. Errors:
// INVALID_ARGUMENT from CheckCluster, the activation estimate, the options'
// sums; those of `layout` (the search part named search.<field>, frozen); the
// stop check's; a tp degree's mesh_check refusal where no mesh was laid out.
absl::StatusOr<PlanResult> PlanSearch(const PlanRequest& request,
                                      LayoutCall layout, const StopCheck& stop);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_SEARCH_H_
