#ifndef CHUNKPLAN_SERVER_PLANNER_REQUEST_NUMPY_STATS_H_
#define CHUNKPLAN_SERVER_PLANNER_REQUEST_NUMPY_STATS_H_

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

// Where the seed's limit lies, from the sizes' exact integer sums, without
// numpy's float arithmetic: every size <= below is within NumpyExlargeLimit
// of the same sizes, every size > above beyond it; a size in between needs
// NumpyExlargeLimit itself. known is false where the sums may not fit (more
// than 2^18 sizes, or a size of 2^44 or more): use NumpyExlargeLimit.
//
// Why the band is safe: numpy's limit differs from the real mean + 3 std
// by a few units in the last place of (mean + std) times log2 of the count
// (its pairwise sums; a mean off by d adds at most d to its std), far
// inside the band's 1e-9 of the limit.
struct ExlargeBand {
  bool known = false;
  double below = 0;
  double above = 0;
};
ExlargeBand ExlargeLimitBand(uint64_t count, unsigned __int128 sum,
                             unsigned __int128 sum_of_squares,
                             uint64_t max_size);

// The seed's `size <= upper_limit`: the int compared as a double.
inline bool WithinExlargeLimit(uint64_t size, double limit) {
  return static_cast<double>(static_cast<int64_t>(size)) <= limit;
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_REQUEST_NUMPY_STATS_H_
