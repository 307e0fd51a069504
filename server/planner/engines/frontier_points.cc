#include "server/planner/engines/frontier_points.h"

#include "common/status_macros.h"
#include "server/planner/layout/objective_errors.h"
#include "server/planner/request/seed_waste.h"

namespace chunkplan::planner {

absl::StatusOr<std::vector<FrontierPoint>> FrontierPoints(
    const SweepTask& task, const SweepOutcome& outcome, const StopCheck& stop) {
  std::vector<FrontierPoint> points;
  for (const Improvement& i : outcome.improvements) {
    // Each point is laid out and placed in full under a size-dependent
    // placement: ask between them.
    if (task.layout->placed != nullptr && stop) {
      if (absl::Status s = stop(); !s.ok()) return s;
    }
    CHUNKPLAN_ASSIGN_OR_RETURN(const LayoutValues layout,
                               task.layout->Exact(i.chunk_size));
    if (layout.overflow) return MeasureOverflowError(i.index, i.chunk_size);
    const uint64_t seed_waste = TotalWasteAt(*task.sweep, i.chunk_size);
    const uint64_t value = ObjectiveValue(task.objective, seed_waste, layout);
    if (value != i.waste) return MeasureMismatchError(i.index, i.waste, value);
    if (points.size() == task.max_points) {
      return TooManyPointsError(task.max_points);
    }
    points.push_back({i.index, task.layout->Rounded(i.chunk_size), value,
                      seed_waste, layout.layout_padding,
                      layout.peak_rank_bytes});
  }
  return points;
}

}  // namespace chunkplan::planner
