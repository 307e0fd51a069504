#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_NUMPY_STATS_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_NUMPY_STATS_H_

// numpy's float64 arithmetic for the seed's extra-large filter, reproduced to
// the last bit: numpy 1.24's `np.mean` and `np.std` of an int64 array.

#include <cstddef>
#include <cstdint>
#include <span>

namespace chunkplan::planner {

// numpy's pairwise summation of a[0..n) (its DOUBLE_pairwise_sum): fewer
// than 8 elements left to right from 0.0; up to 128 with 8 accumulators;
// above, split in two halves at a multiple of 8.
double NumpyPairwiseSum(const double* a, size_t n);

// `np.add.reduce` of a float64 vector: blocks of 8192 elements (numpy's
// buffer size), each summed pairwise, the block sums added left to right
// onto 0.0.
double NumpyReduceSum(std::span<const double> values);

// The seed's `np.mean(arr) + 3 * np.std(arr)` for `arr = np.array(sizes)`
// (int64, so each size must be <= 2**63 - 1). `sizes` must not be empty.
double NumpyExlargeLimit(std::span<const uint64_t> sizes);

// The seed's `size <= upper_limit`: the int compared as a double.
inline bool WithinExlargeLimit(uint64_t size, double limit) {
  return static_cast<double>(static_cast<int64_t>(size)) <= limit;
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_NUMPY_STATS_H_
