// numpy's summation and the filter limit, checked against Debian's numpy
// 1.24 (values printed with float.hex by /usr/bin/python3).
#include "server/planner/request/numpy_stats.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

TEST(NumpyPairwiseSum, EightAccumulatorsAboveSeven) {
  // float(np.sum(np.array([2**53] + [1] * 10, dtype=np.float64))).hex()
  // == '0x1.0000000000004p+53': left to right would give 2**53.
  std::vector<double> a = {0x1p+53, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(NumpyReduceSum(a), 0x1.0000000000004p+53);
}

TEST(NumpyPairwiseSum, SplitsAbove128) {
  // float(np.sum(np.array([2.0**53] + [1.0] * 200))).hex()
  // == '0x1.000000000005ep+53'
  std::vector<double> a(201, 1.0);
  a[0] = 0x1p+53;
  EXPECT_EQ(NumpyReduceSum(a), 0x1.000000000005ep+53);
}

TEST(NumpyPairwiseSum, FewerThanEightLeftToRight) {
  std::vector<double> a = {0x1p+53, 1, 1};
  EXPECT_EQ(NumpyPairwiseSum(a.data(), a.size()), 0x1p+53);
}

// c[i] = (i * 2654435761 * 1000003 + 12345) % 10**15, i < n
std::vector<uint64_t> Spread(int n) {
  std::vector<uint64_t> c;
  for (int i = 0; i < n; ++i) {
    const unsigned __int128 v =
        static_cast<unsigned __int128>(i) * 2654435761u * 1000003u + 12345u;
    c.push_back(static_cast<uint64_t>(v % 1000000000000000u));
  }
  return c;
}

TEST(NumpyExlargeLimit, BlocksOf8192) {
  // 20000 elements: three buffers. numpy: mean 0x1.c6c442a4acbf8p+48,
  // mean + 3 * std == 0x1.369bc5b60bc2cp+50 (a plain left-to-right mean
  // would be 0x1.c6c442a4acc00p+48).
  EXPECT_EQ(NumpyExlargeLimit(Spread(20000)), 0x1.369bc5b60bc2cp+50);
}

TEST(NumpyExlargeLimit, SmallArray) {
  // d[i] = (i * 2654435761) % 1000, i < 300: numpy gives
  // 0x1.55b275e9ae676p+10.
  std::vector<uint64_t> d;
  for (uint64_t i = 0; i < 300; ++i) d.push_back(i * 2654435761u % 1000);
  EXPECT_EQ(NumpyExlargeLimit(d), 0x1.55b275e9ae676p+10);
}

TEST(NumpyExlargeLimit, EqualSizesHaveZeroSpread) {
  std::vector<uint64_t> same(10, 4096);
  EXPECT_EQ(NumpyExlargeLimit(same), 4096.0);
  EXPECT_TRUE(WithinExlargeLimit(4096, 4096.0));
  EXPECT_FALSE(WithinExlargeLimit(4097, 4096.0));
}

}  // namespace
}  // namespace chunkplan::planner
