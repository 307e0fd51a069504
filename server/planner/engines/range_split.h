#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_RANGE_SPLIT_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_RANGE_SPLIT_H_

// A grid cut into contiguous ranges that a caller and a pool's workers take
// in turn: range r's candidates all precede range r + 1's, so per-range
// answers merge in range order.

#include <algorithm>
#include <cstdint>

#include "absl/functional/function_ref.h"
#include "common/worker_pool.h"

namespace chunkplan::planner {

// Threads that share a sweep: the caller and `pool`'s workers (null: the
// caller alone).
inline unsigned HelperCount(const common::WorkerPool* pool) {
  return pool == nullptr ? 0 : pool->size();
}

// How many ranges to cut `count` (>= 1) candidates into: `wanted`, held to
// [1, min(count, per_thread x threads)], so that a thread that starts late
// or runs slower still finds work.
inline uint64_t RangeCount(const common::WorkerPool* pool, uint64_t count,
                           uint64_t wanted, unsigned per_thread) {
  return std::clamp<uint64_t>(
      wanted, 1,
      std::min<uint64_t>(count,
                         uint64_t{per_thread} * (HelperCount(pool) + 1)));
}

// Runs body(r, begin, end) for every range r of `ranges` (1 to count) over
// [0, count), on the calling thread and `pool`'s workers, and returns once
// every call has returned. The ranges' lengths differ by at most one.
inline void ForEachRange(
    common::WorkerPool* pool, uint64_t count, uint64_t ranges,
    absl::FunctionRef<void(uint64_t r, uint64_t begin, uint64_t end)> body) {
  common::ParallelFor(pool, HelperCount(pool), ranges, [&](uint64_t r) {
    const uint64_t begin = count / ranges * r + std::min(r, count % ranges);
    const uint64_t end = begin + count / ranges + (r < count % ranges ? 1 : 0);
    body(r, begin, end);
  });
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_RANGE_SPLIT_H_
