#ifndef CHUNKPLAN_SERVER_PLANNER_NEXT_FIT_H_
#define CHUNKPLAN_SERVER_PLANNER_NEXT_FIT_H_

// The per-candidate arithmetic of the sweep, shared by the CPU sweep and the
// CUDA kernel: the CPU tests exercise exactly what the kernel runs.

#include <cstdint>

#include "server/planner/host_device.h"

namespace chunkplan::planner {

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
  uint64_t acc = 0;
  uint64_t left = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t s = sizes[i];
    if (s > left) {
      acc += left;
      left = chunk_size;
    }
    left -= s;
  }
  return left + acc;
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_NEXT_FIT_H_
