#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_ERRORS_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_ERRORS_H_

// The errors of a frontier, made in one place for every engine.

#include <cstdint>

#include "absl/status/status.h"

namespace chunkplan::planner {

// INVALID_ARGUMENT: candidate `candidate` (grid size `chunk`) has a layout
// measure beyond 2^64-1.
absl::Status MeasureOverflowError(uint64_t candidate, uint64_t chunk);

// RESOURCE_EXHAUSTED: the frontier has more than `max_points` points.
absl::Status TooManyPointsError(uint64_t max_points);

// INTERNAL: the engine valued candidate `candidate` `engine_value`, the
// host's measures `host_value`.
absl::Status MeasureMismatchError(uint64_t candidate, uint64_t engine_value,
                                  uint64_t host_value);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_OBJECTIVE_ERRORS_H_
