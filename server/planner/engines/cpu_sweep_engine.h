#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_ENGINE_H_

// CPU_SWEEP: every candidate of the grid through NextFitWaste, the grid split
// into contiguous ranges that the calling thread and a shared pool's workers
// take in turn. Exact, and the reference for the CUDA kernel.

#include <cstdint>

#include "common/worker_pool.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

struct CpuSweepOptions {
  // Most candidates x max(1, swept sizes) one sweep may take; beyond it Sweep
  // answers RESOURCE_EXHAUSTED rather than run for minutes. 2^34 steps: 5 to
  // 10 s on one core, under the server's 30 s budget on two; the frontier's
  // layout sweep (candidates x placed parameters) is held to it too.
  uint64_t max_work = uint64_t{16} << 30;
  // Threads of the pool that every CPU_SWEEP of one Planner shares; 0 means
  // std::thread::hardware_concurrency(). One sweep uses at most this many
  // threads besides its caller, and all sweeps together never more.
  unsigned threads = 0;
};

// Sum over the problem's groups of NextFitWaste at chunk size `chunk`.
uint64_t TotalWasteAt(const SweepProblem& problem, uint64_t chunk);

class CpuSweepEngine final : public SweepEngine {
 public:
  // `pool` (not owned; null: the caller's thread alone) lends the helpers;
  // it must outlive the engine.
  explicit CpuSweepEngine(CpuSweepOptions options = {},
                          common::WorkerPool* pool = nullptr);

  Engine kind() const override { return Engine::kCpuSweep; }

  // Errors: RESOURCE_EXHAUSTED when problem.SweepWork() > max_work.
  absl::StatusOr<SweepOutcome> Sweep(const SweepProblem& problem,
                                     const StopCheck& stop) const override;

 private:
  CpuSweepOptions options_;
  common::WorkerPool* pool_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CPU_SWEEP_ENGINE_H_
