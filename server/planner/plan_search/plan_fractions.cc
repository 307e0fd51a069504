#include "server/planner/plan_search/plan_fractions.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/status_macros.h"

namespace chunkplan::planner {

absl::StatusOr<std::optional<double>> SmallestPassing(double lo, double hi,
                                                      FractionCheck passes) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const bool top, passes(hi));
  if (!top) return std::nullopt;
  // Invariant: passes(bits b); the smallest passing double is in [a, b].
  uint64_t a = std::bit_cast<uint64_t>(lo);
  uint64_t b = std::bit_cast<uint64_t>(hi);
  while (a < b) {
    const uint64_t m = a + (b - a) / 2;
    CHUNKPLAN_ASSIGN_OR_RETURN(const bool ok, passes(std::bit_cast<double>(m)));
    if (ok) {
      b = m;
    } else {
      a = m + 1;
    }
  }
  return std::bit_cast<double>(b);
}

absl::StatusOr<std::optional<double>> SmallestOptimFraction(
    FractionCheck passes) {
  return SmallestPassing(std::numeric_limits<double>::denorm_min(),
                         std::nextafter(1.0, 0.0), passes);
}

absl::StatusOr<std::optional<double>> SmallestParamFraction(
    FractionCheck passes) {
  return SmallestPassing(std::numeric_limits<double>::denorm_min(), 1.0,
                         passes);
}

}  // namespace chunkplan::planner
