#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_ARGMIN_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_ARGMIN_H_

// The argmin rule of every sweep and its reduction steps, plain C++ marked
// host+device so that host threads and CUDA blocks run the same code and the
// CPU tests run exactly what the kernels run: the rule (ArgminPrecedes: the
// seed keeps the first candidate with the least waste), a candidate's
// (waste, index) pair, the merge that keeps the preferred of two, and one
// level of a block's tree reduction.

#include <cstdint>

#include "server/planner/candidate/host_device.h"

namespace chunkplan::planner {

// True when (waste_a, index_a) must be kept over (waste_b, index_b): less
// waste wins, and on equal waste the smaller candidate index.
CHUNKPLAN_HOST_DEVICE inline bool ArgminPrecedes(uint64_t waste_a,
                                                 uint64_t index_a,
                                                 uint64_t waste_b,
                                                 uint64_t index_b) {
  return waste_a < waste_b || (waste_a == waste_b && index_a < index_b);
}

// A partial answer: the least waste seen and the first grid index with it.
struct WasteIndex {
  uint64_t waste;
  uint64_t index;
};

// "Nothing seen": loses to every pair of a real candidate (a real waste is
// below UINT64_MAX, and a real index below the grid's count).
CHUNKPLAN_HOST_DEVICE constexpr WasteIndex NoCandidate() {
  return {UINT64_MAX, UINT64_MAX};
}

// Replaces *into by `other` when `other` must be kept over it.
CHUNKPLAN_HOST_DEVICE inline void KeepPreferred(WasteIndex* into,
                                                const WasteIndex& other) {
  if (ArgminPrecedes(other.waste, other.index, into->waste, into->index)) {
    *into = other;
  }
}

// One level of a tree reduction over `slots`, as thread `i` (< half) runs it:
// slot i keeps the preferred of slots i and i + half. Levels with half =
// n/2, n/4, ..., 1 (n a power of two, a barrier between levels) leave the
// preferred pair of slots[0..n) in slots[0], whatever order the pairs came in.
CHUNKPLAN_HOST_DEVICE inline void TreeLevel(WasteIndex* slots, uint32_t i,
                                            uint32_t half) {
  KeepPreferred(&slots[i], slots[i + half]);
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_ARGMIN_H_
