#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_NEXT_FIT_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_NEXT_FIT_H_

// The per-candidate arithmetic of the sweep, shared by the CPU sweep and the
// CUDA kernel: the CPU tests exercise exactly what the kernel runs.

#include <cstdint>

#include "server/planner/candidate/host_device.h"

namespace chunkplan::planner {

// Next-fit's running state over a sequence of sizes placed one at a time:
// `acc` is the unused tail of every closed chunk, `left` what is left of the
// open one (0 when none is open). NextFitWaste is written with it, and the
// CUDA kernel feeds it tile by tile, so there is one implementation of the
// rule.
struct NextFitState {
  uint64_t acc = 0;
  uint64_t left = 0;

  // Places one size (<= chunk_size): a new chunk opens when it does not fit
  // in what is left of the current one. A size of 0 never opens a chunk.
  CHUNKPLAN_HOST_DEVICE void Place(uint64_t size, uint64_t chunk_size) {
    if (size > left) {
      acc += left;
      left = chunk_size;
    }
    left -= size;
  }

  // Closes the open chunk, as at the end of a group: the next size opens a
  // new one.
  CHUNKPLAN_HOST_DEVICE void Close() {
    acc += left;
    left = 0;
  }

  // The padding so far, the open chunk's unused tail included.
  CHUNKPLAN_HOST_DEVICE uint64_t Waste() const { return acc + left; }
};

// Padding that next-fit leaves when it places `sizes[0..n)` in order into
// chunks of `chunk_size` elements: a new chunk opens when a size does not fit
// in what is left of the current one, and every chunk's unused tail counts,
// the last one's too (the seed's `_get_unused_byte`). A size of 0 never opens
// a chunk.
//
// Requires every size <= chunk_size, and k * chunk_size to fit in 64 bits,
// where k is the number of chunks opened (BuildSearchPlan guarantees both for
// every candidate of a plan).
CHUNKPLAN_HOST_DEVICE inline uint64_t NextFitWaste(const uint64_t* sizes,
                                                   uint64_t n,
                                                   uint64_t chunk_size) {
  NextFitState state;
  for (uint64_t i = 0; i < n; ++i) state.Place(sizes[i], chunk_size);
  return state.Waste();
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_NEXT_FIT_H_
