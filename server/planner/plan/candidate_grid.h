#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_CANDIDATE_GRID_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_CANDIDATE_GRID_H_

// The candidate chunk sizes of a sweep: start, start + interval, ... , in
// the seed's `range(start, start + search_range + 1, interval)`.

#include <cstdint>

#include "server/planner/candidate/host_device.h"

namespace chunkplan::planner {

struct CandidateGrid {
  uint64_t start = 0;
  uint64_t interval = 1;  // >= 1
  uint64_t count = 1;     // >= 1: the range always holds `start`

  // The i-th candidate, i < count. BuildSearchPlan guarantees the last one
  // fits in 64 bits.
  CHUNKPLAN_HOST_DEVICE uint64_t At(uint64_t i) const {
    return start + i * interval;
  }

  // The first index whose candidate is >= value, or `count` if none is.
  uint64_t FirstIndexAtLeast(uint64_t value) const {
    if (value <= start) return 0;
    const uint64_t delta = value - start;
    const uint64_t index = delta / interval + (delta % interval != 0 ? 1 : 0);
    return index < count ? index : count;
  }
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_CANDIDATE_GRID_H_
