#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_FRACTIONS_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_FRACTIONS_H_

// The smallest offload fractions that pass a check (docs/plan.md: f* and
// g*). Positive doubles order like their bit patterns, so a bisection over
// the bits finds the smallest passing double exactly, in at most 64 checks,
// wherever the check is monotone (false below some double, true from it on).

#include <optional>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace chunkplan::planner {

// Whether a fraction passes; an error ends the search with it.
using FractionCheck = absl::FunctionRef<absl::StatusOr<bool>(double)>;

// The smallest double x in [lo, hi] with passes(x), for 0 < lo <= hi, when
// passes(hi); nullopt when passes(hi) is false. Requires `passes` monotone on
// [lo, hi]. Errors: the first error of `passes`.
absl::StatusOr<std::optional<double>> SmallestPassing(double lo, double hi,
                                                      FractionCheck passes);

// f*: the smallest double in (0, 1) that passes, or nullopt.
absl::StatusOr<std::optional<double>> SmallestOptimFraction(
    FractionCheck passes);

// g*: the smallest double in (0, 1] that passes, or nullopt.
absl::StatusOr<std::optional<double>> SmallestParamFraction(
    FractionCheck passes);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_FRACTIONS_H_
