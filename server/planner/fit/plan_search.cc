#include "absl/status/status.h"
#include "server/planner/fit/plan_types.h"
#include "server/planner/planner.h"

namespace chunkplan::planner {

const char* ChunkSizeFromName(ChunkSizeFrom from) {
  switch (from) {
    case ChunkSizeFrom::kColossalaiSearch:
      return "colossalai_search";
    case ChunkSizeFrom::kPeakRankBytes:
      return "peak_rank_bytes";
    case ChunkSizeFrom::kPeakRankBytesWide:
      return "peak_rank_bytes_wide";
  }
  return "unknown";
}

// Placeholder until the search lands (issue 28): the wire, the service and
// the clients build against the declaration.
absl::StatusOr<PlanResult> Planner::Plan(const PlanRequest&,
                                         const StopCheck&) const {
  return absl::UnimplementedError("Plan: not built yet");
}

}  // namespace chunkplan::planner
