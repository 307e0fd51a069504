#include "server/planner/layout/objective_errors.h"

#include "absl/strings/str_cat.h"

namespace chunkplan::planner {

absl::Status MeasureOverflowError(uint64_t candidate, uint64_t chunk) {
  return absl::InvalidArgumentError(
      absl::StrCat("candidate ", candidate, " (chunk size ", chunk,
                   "): a layout measure exceeds 2^64-1"));
}

absl::Status TooManyPointsError(uint64_t max_points) {
  return absl::ResourceExhaustedError(
      absl::StrCat("the frontier has more than ", max_points,
                   " points; narrow search_range_m or widen search_interval"));
}

absl::Status MeasureMismatchError(uint64_t candidate, uint64_t engine_value,
                                  uint64_t host_value) {
  return absl::InternalError(
      absl::StrCat("candidate ", candidate, ": the engine measured ",
                   engine_value, ", the host ", host_value));
}

}  // namespace chunkplan::planner
