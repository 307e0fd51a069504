#ifndef CHUNKPLAN_SERVER_PLANNER_REQUEST_CANDIDATE_GRID_H_
#define CHUNKPLAN_SERVER_PLANNER_REQUEST_CANDIDATE_GRID_H_

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

// CandidateGrid::FirstIndexAtLeast without a division: the grid's interval
// is fixed for a whole sweep, so its reciprocal is taken once and each
// quotient is a multiply and at most one correction (the plateau engine asks
// for one per evaluation, where a 64-bit division is a sizable share of a
// small search). Host code.
class GridIndexFinder {
 public:
  explicit GridIndexFinder(const CandidateGrid& grid)
      : start_(grid.start),
        interval_(grid.interval),
        count_(grid.count),
        reciprocal_(UINT64_MAX / grid.interval) {}

  // Equals grid.FirstIndexAtLeast(value).
  uint64_t FirstIndexAtLeast(uint64_t value) const {
    if (value <= start_) return 0;
    const uint64_t delta = value - start_;
    // reciprocal_ = floor((2^64 - 1) / interval) makes the estimate at most
    // one below floor(delta / interval), never above it.
    uint64_t quotient = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(delta) * reciprocal_) >> 64);
    uint64_t rest = delta - quotient * interval_;
    if (rest >= interval_) {
      ++quotient;
      rest -= interval_;
    }
    const uint64_t index = quotient + (rest != 0 ? 1 : 0);
    return index < count_ ? index : count_;
  }

 private:
  uint64_t start_;
  uint64_t interval_;
  uint64_t count_;
  uint64_t reciprocal_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_REQUEST_CANDIDATE_GRID_H_
