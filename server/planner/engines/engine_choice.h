#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_ENGINE_CHOICE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_ENGINE_CHOICE_H_

// Which engine answers a task: what each engine serves, AUTO's pick and the
// CPU engine that answers when the device fails. AUTO's choice between
// CPU_PLATEAU and CUDA takes a rough time for each engine on a problem, from
// its shape alone (no sweep). Plain C++; it decides before
// the CUDA runtime is touched, so small requests never initialise it. The
// numbers and how bench/gpu_check.sh measures them are in
// docs/cuda-engine.md; the CUDA ones are provisional until measured there.

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "chunkplan/planner/search_work.h"
#include "server/planner/engines/sweep_engine.h"
#include "server/planner/request/search_plan.h"

namespace chunkplan::planner {

// Below this many candidates x swept sizes AUTO never picks CUDA: launch,
// upload and synchronisation cost tens of microseconds, and the plateau
// engine answers such problems in about a millisecond or less.
inline constexpr uint64_t kCudaMinWork = uint64_t{1} << 30;

struct SweepCostEstimate {
  double plateau_seconds = 0;  // CPU_PLATEAU on one core
  double cuda_seconds = 0;     // CUDA, device already initialised
};

// Estimates both engines' time on `problem`.
//
// CPU_PLATEAU: its evaluations times the cost of one. With S_g a group's
// swept sum, K(C) = sum of ceil(S_g / C) approximates the chunk count; K
// drops at most P = K(first) - K(last) times (and at most once per
// candidate), each new plateau found in about 0.6 log2(candidates / P + 1)
// + 1 evaluations, and one evaluation costs about K(first) chunk counts.
// CUDA: a fixed cost plus candidates x swept sizes at the kernel's rate.
SweepCostEstimate EstimateSweepCosts(const SweepProblem& problem);

// True when AUTO should sweep `problem` on CUDA, given a usable device: at
// least kCudaMinWork steps, at most `cuda_max_work`, and a lower estimate
// than CPU_PLATEAU's.
bool AutoPrefersCuda(const SweepProblem& problem, uint64_t cuda_max_work);

// AutoPrefersCuda for `task`: for the seed's waste as above; for a layout
// objective, when its layout work (candidates x placed parameters) is at
// least kCudaMinWork and at most `cuda_max_work`, and CUDA's estimate is
// below CPU_PLATEAU's.
bool AutoPrefersCuda(const SweepTask& task, uint64_t cuda_max_work);

// CPU_PLATEAU's time for a layout objective's `task` on one core: the bound
// of its plateau search (BoundLayoutPlateauWork, two layouts to compute) at
// a measured rate per step.
double EstimateLayoutPlateauSeconds(const SweepTask& task);

// CUDA's time for a layout objective of `layout_work` (candidates x placed
// parameters): its fixed cost plus the work at the kernel's assumed rate.
double EstimateLayoutCudaSeconds(uint64_t layout_work);

// OK when engine `kind` answers `objective` for `want`; else
// INVALID_ARGUMENT saying which engines do. AUTO serves every task. Known
// whether or not the engine is built into this binary.
absl::Status EngineServes(Engine kind, Objective objective, Want want);

// EngineServes for `task`: as above, and for the peak objective under a
// placement that moves chunks by their size (task.placed_peak()) only
// CPU_SWEEP (and AUTO, which picks it); CPU_PLATEAU and CUDA are
// INVALID_ARGUMENT.
absl::Status EngineServes(Engine kind, const SweepTask& task);

// The exact CPU engine for `task`, which also answers when the device fails
// mid-sweep: CPU_SWEEP for task.placed_peak(), else CPU_PLATEAU (the seed's
// plateau walk, or the layout walk of engines/layout_plateau.h).
Engine CpuEngineFor(const SweepTask& task);

// The engine that answers `task` for `requested`: that engine, or for AUTO
// CUDA where it serves the task, AutoPrefersCuda(task, cuda_max_work) and
// `cuda_usable()` (asked last, so small requests never initialise the CUDA
// runtime), else CpuEngineFor(task).
Engine PickEngine(Engine requested, const SweepTask& task,
                  uint64_t cuda_max_work,
                  absl::FunctionRef<bool()> cuda_usable);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_ENGINE_CHOICE_H_
