#ifndef CHUNKPLAN_SERVER_PLANNER_SWEEP_ARGMIN_H_
#define CHUNKPLAN_SERVER_PLANNER_SWEEP_ARGMIN_H_

// The reduction rule of every sweep, shared by host threads and CUDA blocks:
// the seed keeps the first candidate with the least waste, so of two partial
// answers the one with less waste wins, and on equal waste the smaller
// candidate index.

#include <cstdint>

#include "server/planner/host_device.h"

namespace chunkplan::planner {

// True when (waste_a, index_a) must be kept over (waste_b, index_b).
CHUNKPLAN_HOST_DEVICE inline bool ArgminPrecedes(uint64_t waste_a,
                                                 uint64_t index_a,
                                                 uint64_t waste_b,
                                                 uint64_t index_b) {
  return waste_a < waste_b || (waste_a == waste_b && index_a < index_b);
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_SWEEP_ARGMIN_H_
