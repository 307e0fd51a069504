#ifndef CHUNKPLAN_SERVER_PLANNER_REQUEST_SEARCH_PLAN_H_
#define CHUNKPLAN_SERVER_PLANNER_REQUEST_SEARCH_PLAN_H_

// A validated request turned into the values every engine and every later
// feature shares: the degree groups, the swept sizes after the filter, the
// candidate grid and the lcm of the degrees.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/search_types.h"
#include "chunkplan/planner/search_work.h"
#include "server/planner/request/candidate_grid.h"

namespace chunkplan::planner {

// The parameters of one data-parallel degree.
struct DegreeGroup {
  uint32_t dp_degree = 0;
  uint64_t total = 0;          // sum of the group's numels
  bool keep_gathered = false;  // total < min_chunk_size: not swept
};

// What an engine sweeps: the swept sizes of each non-gathered group (after
// the extra-large filter; a group the filter emptied is present and empty),
// back to back, and the candidate grid.
//
// Invariants, established by BuildSearchPlan: every size <= grid.start, and
// for every candidate C the sum over groups of k_g(C) * C fits in 64 bits,
// where k_g is the number of chunks next-fit opens (so no engine overflows).
struct SweepProblem {
  std::vector<uint64_t> sizes;
  // num_groups() + 1 offsets; inline for up to 3 groups (no allocation)
  absl::InlinedVector<size_t, 4> group_begin = {0};
  CandidateGrid grid;
  uint64_t swept_total = 0;  // sum of `sizes`

  size_t num_groups() const { return group_begin.size() - 1; }
  std::span<const uint64_t> group(size_t g) const {
    return std::span<const uint64_t>(sizes).subspan(
        group_begin[g], group_begin[g + 1] - group_begin[g]);
  }
  // candidates x max(1, swept sizes): the steps a full sweep takes, with a
  // candidate that has nothing to place counted as one step (it is still
  // visited). Never 0; UINT64_MAX when the product overflows.
  uint64_t SweepWork() const;
};

struct SearchPlan {
  absl::InlinedVector<DegreeGroup, 2> groups;  // first-seen order
  uint64_t total_param_size = 0;
  uint64_t degree_lcm = 1;  // lcm of all group degrees
  SweepProblem sweep;

  // The seed's config_dict with every non-gathered group at `chunk_size`:
  // the kept-gathered degrees first (each at its group's total), then the
  // others, each in first-seen order.
  std::vector<ChunkConfig> Configs(uint64_t chunk_size) const;
};

// Validates `request` and builds its plan, following the seed step by step.
//
// Errors (INVALID_ARGUMENT, the message naming the field and index): no
// numels; a numel above 2**63 - 1 or a total that is; a dp_degrees list of
// the wrong length or a degree of 0; an lcm of the degrees above 2**63 - 1;
// search_interval 0; a NaN or infinite _m value, or one that rounds below 0
// or above 2**63 - 1; a candidate that, rounded up to the lcm, exceeds
// 2**63 - 1, or whose waste sums would overflow 64 bits; a start size that
// the seed's float division puts below the largest swept size (quotients
// beyond 2**53, where the seed's own arithmetic breaks down).
// SweepWorkBound(request) (search_work.h) bounds its sweep.SweepWork().
absl::StatusOr<SearchPlan> BuildSearchPlan(const SearchRequest& request);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_REQUEST_SEARCH_PLAN_H_
