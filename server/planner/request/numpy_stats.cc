#include "server/planner/request/numpy_stats.h"

#include <algorithm>
#include <cmath>

// The filter's decision for a size at the limit depends on every rounding
// here: this file must be compiled without floating-point contraction (see
// CMakeLists.txt: -ffp-contract=off) and without fast-math.

namespace chunkplan::planner {
namespace {

constexpr size_t kPairwiseBlock = 128;  // numpy's PW_BLOCKSIZE
constexpr size_t kBufferSize = 8192;    // numpy's default ufunc buffer

// numpy's DOUBLE_pairwise_sum over at(0..n), where at(i) is the i-th
// value: the one summation order, for a stored array and for values
// computed on the fly (no copy of the sizes as doubles).
template <typename At>
double PairwiseSum(const At& at, size_t begin, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; ++i) res += at(begin + i);
    return res;
  }
  if (n <= kPairwiseBlock) {
    double r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = at(begin + j);
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (size_t j = 0; j < 8; ++j) r[j] += at(begin + i + j);
    }
    double res =
        ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += at(begin + i);
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return PairwiseSum(at, begin, n2) + PairwiseSum(at, begin + n2, n - n2);
}

// np.add.reduce over at(0..n): blocks of kBufferSize, each pairwise.
template <typename At>
double ReduceSum(const At& at, size_t n) {
  double sum = 0.0;
  for (size_t begin = 0; begin < n; begin += kBufferSize) {
    sum += PairwiseSum(at, begin, std::min(kBufferSize, n - begin));
  }
  return sum;
}

}  // namespace

double NumpyPairwiseSum(const double* a, size_t n) {
  return PairwiseSum([a](size_t i) { return a[i]; }, 0, n);
}

double NumpyReduceSum(std::span<const double> values) {
  const double* a = values.data();
  return ReduceSum([a](size_t i) { return a[i]; }, values.size());
}

double NumpyExlargeLimit(std::span<const uint64_t> sizes) {
  const uint64_t* s = sizes.data();
  const size_t count = sizes.size();
  const double n = static_cast<double>(count);
  // arr as float64: each int64 size converted.
  const auto value = [s](size_t i) {
    return static_cast<double>(static_cast<int64_t>(s[i]));
  };
  // np.mean: the float64 sum divided by the count. np.std computes the same
  // mean again, the same way.
  const double mean = ReduceSum(value, count) / n;
  // np.std: x = arr - mean; x = x * x; sum; / n; sqrt.
  const auto squared_deviation = [&value, mean](size_t i) {
    const double d = value(i) - mean;
    return d * d;
  };
  const double std_dev = std::sqrt(ReduceSum(squared_deviation, count) / n);
  const double three_std = 3.0 * std_dev;
  return mean + three_std;
}

ExlargeBand ExlargeLimitBand(uint64_t count, unsigned __int128 sum,
                             unsigned __int128 sum_of_squares,
                             uint64_t max_size) {
  // With n < 2^18 and sizes < 2^44: n * sum_of_squares < 2^124 and
  // sum^2 < 2^124, so the variance's numerator is exact in 128 bits.
  if (count == 0 || count >= (uint64_t{1} << 18) ||
      max_size >= (uint64_t{1} << 44)) {
    return {};
  }
  const unsigned __int128 numerator = count * sum_of_squares - sum * sum;
  // In doubles: each step is within a few 1e-16 of the real value, far
  // inside the band.
  const auto to_double = [](unsigned __int128 v) {
    return static_cast<double>(static_cast<uint64_t>(v >> 64)) * 0x1p64 +
           static_cast<double>(static_cast<uint64_t>(v));
  };
  const double n = static_cast<double>(count);
  const double limit =
      to_double(sum) / n + 3.0 * std::sqrt(to_double(numerator)) / n;
  constexpr double kBand = 1e-9;
  return {true, limit * (1 - kBand), limit * (1 + kBand)};
}

}  // namespace chunkplan::planner
