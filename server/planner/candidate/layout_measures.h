#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_LAYOUT_MEASURES_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_LAYOUT_MEASURES_H_

// The layout objectives of one candidate chunk size, in one next-fit pass
// over the parameters: host+device C++ that the CPU sweep runs and a CUDA
// kernel can run unchanged (no allocation, no 128-bit arithmetic, no
// exceptions). The rules are the layout's (docs/layout.md,
// layout/chunk_placement.h and layout/rank_memory.h, which lay out one
// configuration in full); here only the totals the objectives need are kept:
//
//   layout_padding(C')   the real padding of every group at C'
//   peak_rank_bytes(C')  rank 0's device bytes at C' plus the largest
//                        non-gathered chunk's gathered bytes
//
// where C' is the candidate rounded up to the lcm of the degrees, every
// non-gathered group is laid out at C' and the kept-gathered groups as the
// search keeps them (constants of the problem).

#include <cstdint>

#include "server/planner/candidate/host_device.h"

namespace chunkplan::planner {

// `a + b`, or sets `*overflow` (and returns anything) when it exceeds 2^64-1.
CHUNKPLAN_HOST_DEVICE inline uint64_t AddOrFlag(uint64_t a, uint64_t b,
                                                bool* overflow) {
  const uint64_t sum = a + b;
  if (sum < a) *overflow = true;
  return sum;
}

// `a * b`, or sets `*overflow` when it exceeds 2^64-1.
CHUNKPLAN_HOST_DEVICE inline uint64_t MulOrFlag(uint64_t a, uint64_t b,
                                                bool* overflow) {
  if (a != 0 && b > UINT64_MAX / a) *overflow = true;
  return a * b;
}

// One non-gathered group laid out at one chunk size.
struct GroupTotals {
  uint64_t chunk_elements = 0;   // sum of the chunks' sizes
  uint64_t padding = 0;          // sum of size - used
  uint64_t first_rank_real = 0;  // real elements in rank 0's shards
  uint64_t largest_chunk = 0;    // the largest chunk's size
  bool overflow = false;         // a sum passed 2^64-1
};

// Adds a closed chunk of `size` elements, `used` of them real, to `t`.
CHUNKPLAN_HOST_DEVICE inline void CloseChunk(uint64_t size, uint64_t used,
                                             uint32_t degree, GroupTotals* t) {
  t->chunk_elements = AddOrFlag(t->chunk_elements, size, &t->overflow);
  t->padding = AddOrFlag(t->padding, size - used, &t->overflow);
  const uint64_t shard = size / degree;
  t->first_rank_real += used < shard ? used : shard;
  if (size > t->largest_chunk) t->largest_chunk = size;
}

// ChunkManager's placement of `numels[0..n)` (a group's parameters that are
// not frozen, in visit order) at chunk size `chunk` for degree `degree`:
// next-fit with no alignment; the first tensor opens a chunk; a tensor
// above `chunk` opens one of its size rounded up to `degree`, which later
// tensors may join. Requires `chunk` a multiple of `degree`, chunk < 2^63
// and every numel < 2^63 (BuildSearchPlan's limits), so sizes fit.
CHUNKPLAN_HOST_DEVICE inline GroupTotals PlaceGroup(const uint64_t* numels,
                                                    uint64_t n, uint64_t chunk,
                                                    uint32_t degree) {
  GroupTotals t;
  uint64_t size = 0;  // the open chunk's size; 0: none open yet
  uint64_t used = 0;
  bool open = false;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t numel = numels[i];
    if (open && numel <= size - used) {
      used += numel;
      continue;
    }
    if (open) CloseChunk(size, used, degree, &t);
    size = numel <= chunk ? chunk : numel + (degree - numel % degree) % degree;
    used = numel;
    open = true;
  }
  if (open) CloseChunk(size, used, degree, &t);
  return t;
}

// Bytes per element of each part under the request's Gemini settings
// (layout/rank_memory.h): held elements (shards and gathered chunks) cost
// `held_bytes` (params + master + separate grads), optimized elements
// (rank 0's real ones and gathered used ones) `state_bytes`.
struct ByteRates {
  uint64_t held_bytes = 2;
  uint64_t state_bytes = 8;
};

// What does not depend on the candidate: the kept-gathered groups and the
// frozen parameters.
struct FixedTotals {
  uint64_t gathered_elements = 0;  // sum of gathered chunk sizes
  uint64_t gathered_used = 0;      // their used elements
  uint64_t gathered_padding = 0;
  uint64_t frozen_bytes = 0;  // 2 x the frozen numels
};

// The two layout objectives of one candidate.
struct LayoutValues {
  uint64_t layout_padding = 0;
  uint64_t peak_rank_bytes = 0;
  bool overflow = false;  // a value passed 2^64-1: no answer
};

// The layout objectives at chunk size `rounded` (C') for the non-gathered
// groups `g` in [0, groups): group g's placed numels are
// numels[begin[g] .. begin[g+1]) and its degree degrees[g].
CHUNKPLAN_HOST_DEVICE inline LayoutValues MeasureLayout(
    const uint64_t* numels, const uint64_t* begin, const uint32_t* degrees,
    uint64_t groups, uint64_t rounded, const FixedTotals& fixed,
    const ByteRates& rates) {
  LayoutValues v;
  bool overflow = false;
  uint64_t padding = fixed.gathered_padding;
  uint64_t held = fixed.gathered_elements;
  uint64_t optimized = fixed.gathered_used;
  uint64_t largest = 0;
  for (uint64_t g = 0; g < groups; ++g) {
    const GroupTotals t = PlaceGroup(numels + begin[g], begin[g + 1] - begin[g],
                                     rounded, degrees[g]);
    overflow |= t.overflow;
    padding = AddOrFlag(padding, t.padding, &overflow);
    // Every chunk is a multiple of the degree: its shards sum exactly.
    held = AddOrFlag(held, t.chunk_elements / degrees[g], &overflow);
    optimized = AddOrFlag(optimized, t.first_rank_real, &overflow);
    if (t.largest_chunk > largest) largest = t.largest_chunk;
  }
  uint64_t peak = MulOrFlag(held, rates.held_bytes, &overflow);
  peak = AddOrFlag(peak, MulOrFlag(optimized, rates.state_bytes, &overflow),
                   &overflow);
  peak = AddOrFlag(peak, fixed.frozen_bytes, &overflow);
  peak = AddOrFlag(peak, MulOrFlag(largest, 2, &overflow), &overflow);
  v.layout_padding = padding;
  v.peak_rank_bytes = peak;
  v.overflow = overflow;
  return v;
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_LAYOUT_MEASURES_H_
