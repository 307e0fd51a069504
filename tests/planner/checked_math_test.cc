#include "server/planner/request/checked_math.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

TEST(CheckedMath, AddAndMulReportOverflow) {
  uint64_t out = 0;
  EXPECT_TRUE(CheckedAdd(UINT64_MAX - 1, 1, &out));
  EXPECT_EQ(out, UINT64_MAX);
  EXPECT_FALSE(CheckedAdd(UINT64_MAX, 1, &out));
  EXPECT_TRUE(CheckedMul(uint64_t{1} << 32, (uint64_t{1} << 32) - 1, &out));
  EXPECT_FALSE(CheckedMul(uint64_t{1} << 32, uint64_t{1} << 32, &out));
}

TEST(CheckedMath, Lcm) {
  uint64_t out = 0;
  ASSERT_TRUE(CheckedLcm(4, 6, &out));
  EXPECT_EQ(out, 12u);
  ASSERT_TRUE(CheckedLcm(1, 7, &out));
  EXPECT_EQ(out, 7u);
  // Two large coprime degrees overflow 64 bits when a third joins.
  ASSERT_TRUE(CheckedLcm(4294967291u, 4294967279u, &out));
  EXPECT_FALSE(CheckedLcm(out, 4294967231u, &out));
}

TEST(CheckedMath, RoundUpIsPythonsNegativeModulo) {
  // Python: x + (-x % m)
  uint64_t out = 0;
  ASSERT_TRUE(CheckedRoundUp(10, 4, &out));
  EXPECT_EQ(out, 12u);
  ASSERT_TRUE(CheckedRoundUp(12, 4, &out));
  EXPECT_EQ(out, 12u);
  ASSERT_TRUE(CheckedRoundUp(0, 3, &out));
  EXPECT_EQ(out, 0u);
  EXPECT_FALSE(CheckedRoundUp(UINT64_MAX - 1, 4, &out));
}

}  // namespace
}  // namespace chunkplan::planner
