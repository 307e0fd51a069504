// CudaEngine's answer to a task, in plain C++ (the device work is in
// cuda_engine.cu): the seed's best from the device's argmin, a layout
// objective's frontier merged on the host from the device's values.

#include "server/planner/engines/cuda_engine.h"

#include "absl/status/status.h"
#include "common/status_macros.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/engines/frontier_merge.h"

namespace chunkplan::planner {

absl::StatusOr<SweepOutcome> CudaEngine::Run(const SweepTask& task,
                                             const StopCheck& stop) const {
  CHUNKPLAN_RETURN_IF_ERROR(EngineServes(kind(), task));
  if (task.objective == Objective::kSeedWaste) {
    return SeedBest(*task.sweep, stop);
  }
  const CandidateGrid& grid = task.sweep->grid;
  FrontierMerge merge(task.keep());
  bool full = false;
  const absl::Status measured = MeasureLayouts(
      task.layout->arrays(), grid, task.layout->degree_lcm, task.objective,
      stop, [&](const LayoutSlice& slice) -> absl::Status {
        CHUNKPLAN_ASSIGN_OR_RETURN(
            const bool more, merge.OfferSlice(grid, slice.first, slice.values,
                                              slice.overflow_at));
        if (more) return absl::OkStatus();
        full = true;  // the answer is known: too many points
        return absl::CancelledError("the frontier is full");
      });
  if (!full) CHUNKPLAN_RETURN_IF_ERROR(measured);
  return merge.Take();
}

}  // namespace chunkplan::planner
