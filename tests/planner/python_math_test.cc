// Python's round and true division, checked against values Python 3.11
// prints (`round(x)`, `math.ceil(a / b)`, `float.hex(a / b)`).
#include "server/planner/request/python_math.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

constexpr double kMebi = 1048576.0;

TEST(PythonRoundMebi, RoundsHalfToEven) {
  // Python: round(0.5), round(1.5), round(2.5), round(-0.5) == 0, 2, 2, 0.
  EXPECT_EQ(PythonRoundMebi(0.5 / kMebi), 0.0);
  EXPECT_EQ(PythonRoundMebi(1.5 / kMebi), 2.0);
  EXPECT_EQ(PythonRoundMebi(2.5 / kMebi), 2.0);
  EXPECT_EQ(PythonRoundMebi(-0.5 / kMebi), 0.0);
  EXPECT_EQ(PythonRoundMebi(32.0), 33554432.0);
  EXPECT_EQ(PythonRoundMebi(-1.0), -1048576.0);
}

TEST(CorrectlyRoundedQuotient, MatchesPythonTrueDivision) {
  // float.hex((2**62 + 3) / 3) == '0x1.5555555555555p+60'
  EXPECT_EQ(CorrectlyRoundedQuotient((uint64_t{1} << 62) + 3, 3),
            0x1.5555555555555p+60);
  // float.hex((2**63 - 1) / 7) == '0x1.2492492492492p+60'
  EXPECT_EQ(CorrectlyRoundedQuotient((uint64_t{1} << 63) - 1, 7),
            0x1.2492492492492p+60);
  // (2**53 + 1) / 1 == 2**53: the tie goes to even.
  EXPECT_EQ(CorrectlyRoundedQuotient((uint64_t{1} << 53) + 1, 1), 0x1p+53);
  EXPECT_EQ(CorrectlyRoundedQuotient(7, 2), 3.5);
  EXPECT_EQ(CorrectlyRoundedQuotient(0, 5), 0.0);
}

TEST(PythonCeilTrueDivide, ExactBelowTwoTo53) {
  EXPECT_EQ(PythonCeilTrueDivide(0, 7), 0u);
  EXPECT_EQ(PythonCeilTrueDivide(1, 7), 1u);
  EXPECT_EQ(PythonCeilTrueDivide(14, 7), 2u);
  EXPECT_EQ(PythonCeilTrueDivide(15, 7), 3u);
  EXPECT_EQ(PythonCeilTrueDivide((uint64_t{1} << 53) - 1, 3),
            3002399751580331u);
}

TEST(PythonCeilTrueDivide, FollowsFloatRoundingAbove) {
  // math.ceil((2**60 + 1) / 1024) == 2**50: the quotient rounds down to an
  // integer, below the exact ceiling 2**50 + 1.
  EXPECT_EQ(PythonCeilTrueDivide((uint64_t{1} << 60) + 1, 1024),
            uint64_t{1} << 50);
  // math.ceil((2**53 + 1) / 1) == 2**53.
  EXPECT_EQ(PythonCeilTrueDivide((uint64_t{1} << 53) + 1, 1),
            uint64_t{1} << 53);
  // math.ceil((2**62 + 3) / 3) == 1537228672809129216, 87 below the exact
  // ceiling 1537228672809129303.
  EXPECT_EQ(PythonCeilTrueDivide((uint64_t{1} << 62) + 3, 3),
            1537228672809129216u);
}

}  // namespace
}  // namespace chunkplan::planner
