#include "server/planner/plan/numpy_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

// The filter's decision for a size at the limit depends on every rounding
// here: this file must be compiled without floating-point contraction (see
// CMakeLists.txt: -ffp-contract=off) and without fast-math.

namespace chunkplan::planner {
namespace {

constexpr size_t kPairwiseBlock = 128;  // numpy's PW_BLOCKSIZE
constexpr size_t kBufferSize = 8192;    // numpy's default ufunc buffer

}  // namespace

double NumpyPairwiseSum(const double* a, size_t n) {
  if (n < 8) {
    double res = 0.0;
    for (size_t i = 0; i < n; ++i) res += a[i];
    return res;
  }
  if (n <= kPairwiseBlock) {
    double r[8];
    for (size_t j = 0; j < 8; ++j) r[j] = a[j];
    size_t i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (size_t j = 0; j < 8; ++j) r[j] += a[i + j];
    }
    double res =
        ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) res += a[i];
    return res;
  }
  size_t n2 = n / 2;
  n2 -= n2 % 8;
  return NumpyPairwiseSum(a, n2) + NumpyPairwiseSum(a + n2, n - n2);
}

double NumpyReduceSum(std::span<const double> values) {
  double sum = 0.0;
  for (size_t begin = 0; begin < values.size(); begin += kBufferSize) {
    const size_t len = std::min(kBufferSize, values.size() - begin);
    sum += NumpyPairwiseSum(values.data() + begin, len);
  }
  return sum;
}

double NumpyExlargeLimit(std::span<const uint64_t> sizes) {
  const double n = static_cast<double>(sizes.size());
  std::vector<double> values(sizes.size());
  std::transform(sizes.begin(), sizes.end(), values.begin(), [](uint64_t s) {
    return static_cast<double>(static_cast<int64_t>(s));
  });
  // np.mean: the float64 sum divided by the count. np.std computes the same
  // mean again, the same way.
  const double mean = NumpyReduceSum(values) / n;
  // np.std: x = arr - mean; x = x * x; sum; / n; sqrt.
  for (double& v : values) {
    const double d = v - mean;
    v = d * d;
  }
  const double std_dev = std::sqrt(NumpyReduceSum(values) / n);
  const double three_std = 3.0 * std_dev;
  return mean + three_std;
}

}  // namespace chunkplan::planner
