#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_LAYOUT_MEASURES_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_LAYOUT_MEASURES_H_

// The layout objectives of candidate chunk sizes, in one next-fit pass over
// the parameters: host+device C++ that the CPU sweep runs and the CUDA kernel
// runs unchanged (no allocation, no 128-bit arithmetic, no exceptions). The
// rules are the layout's (docs/layout.md, layout/chunk_placement.h and
// layout/rank_memory.h, which lay out one configuration in full); here only
// the totals the objectives need are kept:
//
//   layout_padding(C')   the real padding of every group at C'
//   peak_rank_bytes(C')  rank 0's device bytes at C' plus the largest
//                        non-gathered chunk's gathered bytes
//
// where C' is the candidate rounded up to the lcm of the degrees, every
// non-gathered group is laid out at C' and the kept-gathered groups as the
// search keeps them (constants of the problem).
//
// The walk is written once for a lane type V: uint64_t (one candidate: a
// CUDA thread, and the host's reference) or a GCC vector of uint64_t (the
// CPU measures 8 candidates per pass in vector instructions,
// layout/measure_lanes.cc). The body only adds, subtracts, compares and
// selects with `?:` on V, which both kinds support with the same meaning per
// lane, so every lane computes what the scalar walk computes.

#include <cstdint>
#include <cstring>

#include "chunkplan/planner/objective.h"
#include "server/planner/candidate/byte_model.h"
#include "server/planner/candidate/host_device.h"
#include "server/planner/candidate/round_up.h"

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

// One placed tensor of a group, as every candidate's placement sees it.
struct PlacedTensor {
  uint64_t numel = 0;
  // The chunk it opens when it is above the chunk size: numel rounded up to
  // the group's degree, and that chunk's shard (oversize / degree).
  uint64_t oversize = 0;
  uint64_t oversize_shard = 0;
};

// `numel` in a group of degree `degree`. Requires numel rounded up to the
// degree to fit 64 bits (BuildSearchPlan's limits: numel < 2^63).
CHUNKPLAN_HOST_DEVICE inline PlacedTensor Placed(uint64_t numel,
                                                 uint32_t degree) {
  const uint64_t oversize = RoundUp(numel, degree);
  return {numel, oversize, oversize / degree};
}

// ChunkManager's next-fit placement of one group's placed tensors, in visit
// order, at each lane's chunk size: no alignment; the first tensor opens a
// chunk; a tensor above the chunk size opens one of its oversize, which
// later tensors may join. Each lane's chunk size must be a multiple of the
// degree and below 2^63.
template <typename V>
struct LaneWalk {
  V chunk;
  V chunk_shard;  // chunk / degree
  // The open chunk.
  V size;
  V used;
  V shard;
  // The group's chunks closed so far (all of them after Finish).
  V padding;     // sum of size - used
  V held;        // sum of shards: each rank's elements
  V first_real;  // real elements in rank 0's shards (below 2^63)
  V largest;     // the largest chunk's size
  V overflow;    // not 0 where padding or held passed 2^64-1

  // Opens the first chunk with the group's first tensor `t`.
  CHUNKPLAN_ALWAYS_INLINE CHUNKPLAN_HOST_DEVICE void Start(
      const PlacedTensor& t) {
    const V numel = V{} + t.numel;
    size = numel > chunk ? V{} + t.oversize : chunk;
    shard = numel > chunk ? V{} + t.oversize_shard : chunk_shard;
    used = numel;
    padding = held = first_real = largest = overflow = V{};
  }

  // Places the next tensor `t`: it joins the open chunk where it fits, else
  // the open chunk closes and `t` opens the next one.
  CHUNKPLAN_ALWAYS_INLINE CHUNKPLAN_HOST_DEVICE void Place(
      const PlacedTensor& t) {
    const V numel = V{} + t.numel;
    const V room = size - used;
    // bool for a scalar V, a lane mask for a vector V
    const auto fits = numel <= room;
    const V closed_padding = fits ? V{} : room;
    const V closed_shard = fits ? V{} : shard;
    const V closed_real = fits ? V{} : (used < shard ? used : shard);
    const V closed_size = fits ? V{} : size;
    padding += closed_padding;
    overflow |= V(padding < closed_padding);
    held += closed_shard;
    overflow |= V(held < closed_shard);
    first_real += closed_real;
    largest = closed_size > largest ? closed_size : largest;
    const V next_size = numel > chunk ? V{} + t.oversize : chunk;
    const V next_shard = numel > chunk ? V{} + t.oversize_shard : chunk_shard;
    size = fits ? size : next_size;
    shard = fits ? shard : next_shard;
    used = fits ? used + numel : numel;
  }

  // Closes the open chunk: the sums are then the group's.
  CHUNKPLAN_ALWAYS_INLINE CHUNKPLAN_HOST_DEVICE void Finish() {
    const V closed_padding = size - used;
    padding += closed_padding;
    overflow |= V(padding < closed_padding);
    held += shard;
    overflow |= V(held < shard);
    first_real += used < shard ? used : shard;
    largest = size > largest ? size : largest;
  }
};

// Lane l of `v` (l = 0 for a scalar).
template <typename V>
CHUNKPLAN_ALWAYS_INLINE CHUNKPLAN_HOST_DEVICE uint64_t LaneOf(const V& v,
                                                              int l) {
  uint64_t lanes[sizeof(V) / sizeof(uint64_t)];
  memcpy(lanes, &v, sizeof(V));
  return lanes[l];
}

// What does not depend on the candidate: the kept-gathered groups and the
// frozen parameters.
struct FixedTotals {
  uint64_t gathered_elements = 0;  // sum of gathered chunk sizes
  uint64_t gathered_used = 0;      // their used elements
  uint64_t gathered_padding = 0;
  uint64_t frozen_elements = 0;  // the frozen numels
};

// The non-gathered groups as flat arrays: group g's placed tensors are
// tensors[begin[g] .. begin[g+1]), its degree degrees[g]. Not owned.
struct LayoutArrays {
  const PlacedTensor* tensors = nullptr;
  const uint64_t* begin = nullptr;  // groups + 1 offsets
  const uint32_t* degrees = nullptr;
  uint64_t groups = 0;
  FixedTotals fixed;
  ByteModel bytes;
};

// The two layout objectives of one candidate.
struct LayoutValues {
  uint64_t layout_padding = 0;
  uint64_t peak_rank_bytes = 0;
  bool overflow = false;  // a value passed 2^64-1: no answer
};

// The value of `objective` at a candidate whose seed waste is `seed_waste`
// and whose layout measures are `layout`.
CHUNKPLAN_HOST_DEVICE inline uint64_t ObjectiveValue(
    Objective objective, uint64_t seed_waste, const LayoutValues& layout) {
  switch (objective) {
    case Objective::kLayoutPadding:
      return layout.layout_padding;
    case Objective::kPeakRankBytes:
      return layout.peak_rank_bytes;
    case Objective::kSeedWaste:
      break;
  }
  return seed_waste;
}

// One candidate's sums over the non-gathered groups.
struct LayoutSums {
  uint64_t padding = 0;
  uint64_t held = 0;
  uint64_t optimized = 0;  // rank 0's real elements
  uint64_t largest = 0;    // the largest non-gathered chunk
  bool overflow = false;

  // Adds lane l of a finished walk.
  template <typename V>
  CHUNKPLAN_ALWAYS_INLINE CHUNKPLAN_HOST_DEVICE void Add(
      const LaneWalk<V>& walk, int l) {
    overflow |= LaneOf(walk.overflow, l) != 0;
    padding = AddOrFlag(padding, LaneOf(walk.padding, l), &overflow);
    held = AddOrFlag(held, LaneOf(walk.held, l), &overflow);
    optimized = AddOrFlag(optimized, LaneOf(walk.first_real, l), &overflow);
    const uint64_t group_largest = LaneOf(walk.largest, l);
    if (group_largest > largest) largest = group_largest;
  }

  // The objectives, with the problem's constants.
  CHUNKPLAN_HOST_DEVICE LayoutValues Values(const FixedTotals& fixed,
                                            const ByteModel& bytes) const {
    LayoutValues v;
    bool over = overflow;
    v.layout_padding = AddOrFlag(padding, fixed.gathered_padding, &over);
    // The sums' overflow as before; the non-gathered chunks' sides at
    // their own rates (the placement may keep them on the host).
    AddOrFlag(held, fixed.gathered_elements, &over);
    AddOrFlag(optimized, fixed.gathered_used, &over);
    uint64_t peak = MulOrFlag(held, bytes.held() - bytes.host_side, &over);
    peak = AddOrFlag(
        peak, MulOrFlag(fixed.gathered_elements, bytes.held(), &over), &over);
    peak = AddOrFlag(
        peak,
        MulOrFlag(optimized, bytes.optimizer - bytes.host_optimizer, &over),
        &over);
    peak = AddOrFlag(
        peak, MulOrFlag(fixed.gathered_used, bytes.optimizer, &over), &over);
    peak = AddOrFlag(
        peak, MulOrFlag(fixed.frozen_elements, bytes.frozen, &over), &over);
    peak = AddOrFlag(peak, MulOrFlag(largest, bytes.gathered, &over), &over);
    v.peak_rank_bytes = peak;
    v.overflow = over;
    return v;
  }
};

// The layout objectives of V's lanes: lane l laid out at chunk size
// rounded[l] (its C'), into out[l].
template <typename V>
CHUNKPLAN_ALWAYS_INLINE CHUNKPLAN_HOST_DEVICE void MeasureLayout(
    const LayoutArrays& a, const uint64_t* rounded, LayoutValues* out) {
  constexpr int kLanes = sizeof(V) / sizeof(uint64_t);
  LayoutSums sums[kLanes];
  LaneWalk<V> walk;
  memcpy(&walk.chunk, rounded, sizeof(V));
  for (uint64_t g = 0; g < a.groups; ++g) {
    const uint64_t first = a.begin[g];
    const uint64_t end = a.begin[g + 1];
    if (first == end) continue;
    uint64_t shards[kLanes];
    for (int l = 0; l < kLanes; ++l) shards[l] = rounded[l] / a.degrees[g];
    memcpy(&walk.chunk_shard, shards, sizeof(V));
    walk.Start(a.tensors[first]);
    for (uint64_t i = first + 1; i < end; ++i) walk.Place(a.tensors[i]);
    walk.Finish();
    for (int l = 0; l < kLanes; ++l) sums[l].Add(walk, l);
  }
  for (int l = 0; l < kLanes; ++l) out[l] = sums[l].Values(a.fixed, a.bytes);
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_LAYOUT_MEASURES_H_
