#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_TILED_WASTE_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_TILED_WASTE_H_

// One candidate's total padding as the CUDA kernel computes it: the swept
// sizes of all groups, back to back, arrive in tiles (the block stages each
// tile in shared memory), and the candidate's next-fit state runs on across
// tiles, closing its open chunk at every group boundary. Plain C++, marked
// host+device, so the CPU tests check the kernel's walk against NextFitWaste.

#include <cstdint>

#include "server/planner/candidate/host_device.h"
#include "server/planner/candidate/next_fit.h"

namespace chunkplan::planner {

class TiledWaste {
 public:
  // `group_begin` holds the num_groups + 1 offsets of the groups in the
  // flattened size sequence (SweepProblem::group_begin), the last one its
  // length; it must outlive this object. `chunk_size` is the candidate.
  CHUNKPLAN_HOST_DEVICE TiledWaste(const uint64_t* group_begin,
                                   uint64_t chunk_size)
      : group_begin_(group_begin), chunk_size_(chunk_size) {}

  // Places sizes [first, first + len) of the sequence, `tile[0..len)`. Tiles
  // must come in order, each starting where the previous one ended, and
  // together cover the sequence.
  CHUNKPLAN_HOST_DEVICE void Feed(const uint64_t* tile, uint64_t first,
                                  uint32_t len) {
    uint32_t pos = 0;
    while (pos < len) {
      // Close every group that ends at or before this position.
      while (group_begin_[next_group_] <= first + pos) {
        state_.Close();
        ++next_group_;
      }
      const uint64_t group_end = group_begin_[next_group_];
      const uint32_t end = group_end - first < len
                               ? static_cast<uint32_t>(group_end - first)
                               : len;
      for (; pos < end; ++pos) state_.Place(tile[pos], chunk_size_);
    }
  }

  // Total padding over all groups once every tile has been fed.
  CHUNKPLAN_HOST_DEVICE uint64_t Waste() const { return state_.Waste(); }

 private:
  const uint64_t* group_begin_;
  uint64_t chunk_size_;
  uint64_t next_group_ = 1;  // group_begin_[next_group_] ends the current group
  NextFitState state_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_TILED_WASTE_H_
