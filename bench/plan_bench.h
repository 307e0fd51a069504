#ifndef CHUNKPLAN_BENCH_PLAN_BENCH_H_
#define CHUNKPLAN_BENCH_PLAN_BENCH_H_

// Planner::Plan's benchmark (issue 28's target: <= 20 ms for LLaMA-2 70B and
// Mixtral): FIT_PLAN/W, on the workload's search settings with world sizes
// {8, 16, 32, 64}, 80 GiB devices, 1 TiB hosts of 8 GPUs, engine AUTO.
// Compare with LAYOUT/W (one Layout call) of the same run.

#include "bench/workload_loader.h"

namespace chunkplan::bench {

// Registers FIT_PLAN/<w.name> when `w` is llama-2-70b or mixtral-8x7b.
void RegisterPlanBenchmark(const Workload& w);

}  // namespace chunkplan::bench

#endif  // CHUNKPLAN_BENCH_PLAN_BENCH_H_
