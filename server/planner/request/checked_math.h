#ifndef CHUNKPLAN_SERVER_PLANNER_REQUEST_CHECKED_MATH_H_
#define CHUNKPLAN_SERVER_PLANNER_REQUEST_CHECKED_MATH_H_

// 64-bit arithmetic that reports overflow instead of wrapping. Each returns
// false (and leaves *out unspecified) when the exact result does not fit.

#include <cstdint>
#include <numeric>

#include "server/planner/candidate/round_up.h"

namespace chunkplan::planner {

inline bool CheckedAdd(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}

inline bool CheckedMul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

// lcm(a, b) for a, b >= 1.
inline bool CheckedLcm(uint64_t a, uint64_t b, uint64_t* out) {
  return CheckedMul(a / std::gcd(a, b), b, out);
}

// The least multiple of `m` (>= 1) that is >= `x`: Python's
// `x + (-x % m)`.
inline bool CheckedRoundUp(uint64_t x, uint64_t m, uint64_t* out) {
  return CheckedAdd(x, RoundUpPadding(x, m), out);
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_REQUEST_CHECKED_MATH_H_
