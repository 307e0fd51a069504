#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_ENGINE_H_

// CPU_SWEEP: every candidate of the grid valued by the objective, the grid
// split into contiguous ranges that the calling thread and a shared pool's
// workers take in turn. Exact for every objective, and the reference for
// the CUDA kernels.

#include <cstdint>

#include "chunkplan/planner/engine_options.h"
#include "common/worker_pool.h"
#include "server/planner/engines/sweep_engine.h"
#include "server/planner/request/seed_waste.h"

namespace chunkplan::planner {

class CpuSweepEngine final : public SweepEngine {
 public:
  // `pool` (not owned; null: the caller's thread alone) lends the helpers;
  // it must outlive the engine.
  explicit CpuSweepEngine(CpuSweepOptions options = {},
                          common::WorkerPool* pool = nullptr);

  Engine kind() const override { return Engine::kCpuSweep; }

  // Every task. Errors: RESOURCE_EXHAUSTED beyond options.max_work steps:
  // the seed's best counts candidates x max(1, swept sizes)
  // (SweepProblem::SweepWork), a frontier candidates x max(1, placed
  // parameters) (ObjectiveProblem::LayoutWork).
  absl::StatusOr<SweepOutcome> Run(const SweepTask& task,
                                   const StopCheck& stop) const override;

 private:
  // The seed's best candidate.
  absl::StatusOr<SweepOutcome> SeedBest(const SweepProblem& problem,
                                        const StopCheck& stop) const;

  CpuSweepOptions options_;
  common::WorkerPool* pool_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_ENGINE_H_
