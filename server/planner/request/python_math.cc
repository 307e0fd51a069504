#include "server/planner/request/python_math.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace chunkplan::planner {
namespace {

constexpr uint64_t kTwoTo53 = uint64_t{1} << 53;

int BitLength(unsigned __int128 v) {
  const uint64_t hi = static_cast<uint64_t>(v >> 64);
  return hi != 0 ? 128 - std::countl_zero(hi)
                 : 64 - std::countl_zero(static_cast<uint64_t>(v));
}

}  // namespace

double PythonRoundMebi(double m) {
  // Scaling by 2**20 is exact (or overflows to infinity); nearbyint in the
  // default rounding mode rounds half to even, as Python's round does.
  return std::nearbyint(m * 1048576.0);
}

double CorrectlyRoundedQuotient(uint64_t a, uint64_t b) {
  if (a < kTwoTo53 && b < kTwoTo53) {
    // Both exact as doubles: IEEE division rounds correctly.
    return static_cast<double>(a) / static_cast<double>(b);
  }
  if (a == 0) return 0.0;
  // Scale a so that the integer quotient has at least 55 significant bits,
  // then round that quotient (with the remainder as sticky bit) to 53 bits.
  const int shift = std::max(0, 55 + BitLength(b) - BitLength(a));
  const unsigned __int128 num = static_cast<unsigned __int128>(a) << shift;
  const unsigned __int128 quot = num / b;
  const bool sticky = (num % b) != 0;
  const int extra = BitLength(quot) - 53;  // >= 1
  uint64_t mantissa = static_cast<uint64_t>(quot >> extra);
  const unsigned __int128 dropped =
      quot & ((static_cast<unsigned __int128>(1) << extra) - 1);
  const unsigned __int128 half = static_cast<unsigned __int128>(1)
                                 << (extra - 1);
  if (dropped > half || (dropped == half && (sticky || (mantissa & 1) != 0))) {
    ++mantissa;  // may become 2**53: still exact
  }
  return std::ldexp(static_cast<double>(mantissa), extra - shift);
}

uint64_t PythonCeilTrueDivide(uint64_t a, uint64_t b) {
  if (a < kTwoTo53) {
    // The rounded quotient never crosses an integer here, so the exact
    // integer ceiling is Python's.
    return a / b + (a % b != 0 ? 1 : 0);
  }
  // a <= 2**63, so the rounded quotient and its ceiling are <= 2**63.
  return static_cast<uint64_t>(std::ceil(CorrectlyRoundedQuotient(a, b)));
}

}  // namespace chunkplan::planner
