#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_FRONTIER_MERGE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_FRONTIER_MERGE_H_

// A frontier gathered from candidates offered in grid order (CPU_SWEEP's
// ranges merged in turn, the CUDA engine's slices): each candidate whose
// value is a new strict minimum, the first `keep` of them.

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "server/planner/engines/sweep_engine.h"
#include "server/planner/layout/objective_errors.h"

namespace chunkplan::planner {

class FrontierMerge {
 public:
  // Keeps at most `keep` (>= 1) points.
  explicit FrontierMerge(uint64_t keep) : keep_(keep) {}

  // Candidate `index` (grid size `chunk`) valued `value`, after every lower
  // candidate: kept when it improves on the last point. False once `keep`
  // points are held and this one improves too: the frontier is longer than
  // wanted, and the caller may stop.
  bool Offer(uint64_t index, uint64_t chunk, uint64_t value) {
    if (!points_.empty() && value >= points_.back().waste) return true;
    if (points_.size() == keep_) return false;
    points_.push_back({index, chunk, value});
    return true;
  }

  // Offer for candidates first, first + 1, ... of `grid`, valued `values`
  // (a slice that a device measured); `overflow_at`: the slice's lowest
  // candidate with a measure beyond 2^64-1, which ends the frontier with
  // MeasureOverflowError (earlier slices had none: it is the grid's
  // lowest). False once the frontier is longer than wanted.
  absl::StatusOr<bool> OfferSlice(const CandidateGrid& grid, uint64_t first,
                                  std::span<const uint64_t> values,
                                  std::optional<uint64_t> overflow_at) {
    if (overflow_at.has_value()) {
      return MeasureOverflowError(*overflow_at, grid.At(*overflow_at));
    }
    for (size_t k = 0; k < values.size(); ++k) {
      if (!Offer(first + k, grid.At(first + k), values[k])) return false;
    }
    return true;
  }

  // The points as an answer, the best last; an empty frontier answers
  // candidate 0 at UINT64_MAX (no candidate was offered).
  SweepOutcome Take() {
    SweepOutcome out;
    out.waste = UINT64_MAX;
    if (!points_.empty()) {
      out.best_index = points_.back().index;
      out.chunk_size = points_.back().chunk_size;
      out.waste = points_.back().waste;
    }
    out.improvements = std::move(points_);
    return out;
  }

 private:
  uint64_t keep_;
  std::vector<Improvement> points_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_FRONTIER_MERGE_H_
