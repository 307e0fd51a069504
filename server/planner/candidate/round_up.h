#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_ROUND_UP_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_ROUND_UP_H_

// Rounding up (to a multiple, and a quotient), written once for the host and
// the CUDA kernel: a candidate to the lcm of the degrees, a tensor to its
// group's degree.

#include <cstdint>

#include "server/planner/candidate/host_device.h"

namespace chunkplan::planner {

// What takes `x` up to the least multiple of `m` (>= 1) that is >= x:
// Python's `-x % m`.
CHUNKPLAN_HOST_DEVICE constexpr uint64_t RoundUpPadding(uint64_t x,
                                                        uint64_t m) {
  return (m - x % m) % m;
}

// The least multiple of `m` (>= 1) that is >= `x`. Requires it to fit in 64
// bits (request/checked_math.h's CheckedRoundUp checks it).
CHUNKPLAN_HOST_DEVICE constexpr uint64_t RoundUp(uint64_t x, uint64_t m) {
  return x + RoundUpPadding(x, m);
}

// ceil(a / b) for b >= 1, without the overflow of (a + b - 1) / b.
CHUNKPLAN_HOST_DEVICE constexpr uint64_t CeilDiv(uint64_t a, uint64_t b) {
  return a / b + (a % b != 0);
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_ROUND_UP_H_
