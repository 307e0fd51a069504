#ifndef CHUNKPLAN_SERVER_PLANNER_CPU_SWEEP_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_CPU_SWEEP_ENGINE_H_

// CPU_SWEEP: every candidate of the grid through NextFitWaste, the grid split
// over std::thread workers. Exact, and the reference for the CUDA kernel.

#include <cstdint>

#include "server/planner/sweep_engine.h"

namespace chunkplan::planner {

struct CpuSweepOptions {
  // Most candidates x swept sizes one sweep may take; beyond it Sweep answers
  // RESOURCE_EXHAUSTED rather than run for minutes. About 4 s on one core.
  uint64_t max_work = uint64_t{4} << 30;
  // Worker threads; 0 means std::thread::hardware_concurrency().
  unsigned threads = 0;
};

// Sum over the problem's groups of NextFitWaste at chunk size `chunk`.
uint64_t TotalWasteAt(const SweepProblem& problem, uint64_t chunk);

class CpuSweepEngine final : public SweepEngine {
 public:
  explicit CpuSweepEngine(CpuSweepOptions options = {});

  Engine kind() const override { return Engine::kCpuSweep; }

  // Errors: RESOURCE_EXHAUSTED when problem.SweepWork() > max_work.
  absl::StatusOr<SweepOutcome> Sweep(const SweepProblem& problem,
                                     const StopCheck& stop) const override;

 private:
  CpuSweepOptions options_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CPU_SWEEP_ENGINE_H_
