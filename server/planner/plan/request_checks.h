#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_REQUEST_CHECKS_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_REQUEST_CHECKS_H_

// Field-by-field checks of a SearchRequest. Each error is INVALID_ARGUMENT
// with a message that starts with the field (and index) at fault.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/planner/search_types.h"

namespace chunkplan::planner {

// The largest size, total or chunk the planner accepts: numpy holds the
// seed's sizes as int64.
inline constexpr uint64_t kMaxElements = (uint64_t{1} << 63) - 1;

// numels non-empty, each <= kMaxElements; dp_degrees of length 0, 1 or
// numels.size(), each >= 1; search_interval >= 1.
absl::Status CheckShape(const SearchRequest& request);

// The degree of parameter i under the dp_degrees rule (empty: 1; one value:
// shared). Requires CheckShape to have passed.
uint32_t DegreeOf(const SearchRequest& request, size_t i);

// Python's round(value * 1024**2) as an element count, for the field named
// `field`: finite, and rounding to a value in [0, kMaxElements].
absl::StatusOr<uint64_t> RoundedMebiElements(double value,
                                             absl::string_view field);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_REQUEST_CHECKS_H_
