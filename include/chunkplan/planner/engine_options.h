#ifndef CHUNKPLAN_PLANNER_ENGINE_OPTIONS_H_
#define CHUNKPLAN_PLANNER_ENGINE_OPTIONS_H_

// The engines' limits, as the server's flags set them. Plain values: every
// build has them, with or without the CUDA engine.

#include <cstdint>

namespace chunkplan::planner {

// The default of --max_plateau_work: 2^34 steps. Walks measured at 0.06 to
// 0.11 ns per step of their bound (random sizes at interval 1: 20,000 sizes,
// bound 1.3e10, 1.4 s, admitted; 30,000, 2.9e10, 2.2 s, and 100,000, 2.4e11,
// 14 s, refused); every bench/ workload's bound, the stress sweep's
// included, is below 2^25.
inline constexpr uint64_t kDefaultMaxPlateauWork = uint64_t{1} << 34;

struct CpuSweepOptions {
  // Most candidates x max(1, swept sizes) one sweep may take; beyond it
  // CPU_SWEEP answers RESOURCE_EXHAUSTED rather than run for minutes. 2^34
  // steps: 5 to 10 s on one core, under the server's 30 s budget on two; its
  // frontiers (candidates x placed parameters) are held to it too.
  uint64_t max_work = uint64_t{16} << 30;
  // Threads of the pool that every CPU_SWEEP of one Planner shares; 0 means
  // std::thread::hardware_concurrency(). One sweep uses at most this many
  // threads besides its caller, and all sweeps together never more.
  unsigned threads = 0;
};

struct CudaEngineOptions {
  // Most candidates x swept sizes (candidates x placed parameters for a
  // layout objective) one sweep may take; beyond it CUDA answers
  // RESOURCE_EXHAUSTED. Unmeasured: 2**44 steps is estimated (from data-sheet
  // integer rates, docs/cuda-engine.md) at tens of seconds of an H200.
  uint64_t max_work = uint64_t{1} << 44;
  // Steps per kernel launch (at least one resident grid of candidates). The
  // stop check runs between launches: 2**32 steps is estimated (unmeasured)
  // at milliseconds of an H200. Tests lower it to force many.
  uint64_t steps_per_slice = uint64_t{1} << 32;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_ENGINE_OPTIONS_H_
