// The CUDA kernel's arithmetic, run on the CPU: the tiled walk over grouped
// sizes (TiledWaste over NextFitState) against NextFitWaste per group, for
// every tile size; and the block reduction (TreeLevel over KeepPreferred)
// against the seed's first-strict-minimum scan, ties included.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "server/planner/candidate/argmin.h"
#include "server/planner/candidate/next_fit.h"
#include "server/planner/candidate/tiled_waste.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "testing/test_problems.h"

namespace chunkplan::planner {
namespace {

// The kernel's loop over tiles of `tile_size`, for one candidate.
uint64_t TiledTotal(const SweepProblem& p, uint64_t chunk, uint32_t tile_size) {
  const std::vector<uint64_t> offsets(p.group_begin.begin(),
                                      p.group_begin.end());
  TiledWaste walk(offsets.data(), chunk);
  std::vector<uint64_t> tile(tile_size);  // a copy, as in shared memory
  for (uint64_t first = 0; first < p.sizes.size(); first += tile_size) {
    const uint32_t len = static_cast<uint32_t>(
        std::min<uint64_t>(tile_size, p.sizes.size() - first));
    std::copy_n(p.sizes.begin() + first, len, tile.begin());
    walk.Feed(tile.data(), first, len);
  }
  return walk.Waste();
}

TEST(NextFitState, PlacesAsTheSeedsUnusedBytes) {
  // _get_unused_byte([3, 4, 2, 5], 6): [3] [4, 2] [5] -> 3 + 0 + 1.
  NextFitState s;
  for (uint64_t size : {3, 4, 2, 5}) s.Place(size, 6);
  EXPECT_EQ(s.Waste(), 4u);
  // Closing ends the chunk: a group boundary. [5] closed (1), then [1] (5).
  NextFitState t;
  t.Place(5, 6);
  t.Close();
  t.Place(1, 6);
  EXPECT_EQ(t.Waste(), 6u);
  // Without the close the 1 fits in the open chunk.
  NextFitState u;
  u.Place(5, 6);
  u.Place(1, 6);
  EXPECT_EQ(u.Waste(), 0u);
}

TEST(TiledWaste, EqualsNextFitWastePerGroupForEveryTileSize) {
  std::mt19937_64 rng(4242);
  for (int round = 0; round < 150; ++round) {
    const SweepProblem p = problems::RandomSweepProblem(rng, 60, 40);
    const uint64_t n = p.sizes.size();
    for (uint64_t i = 0; i < p.grid.count; i += 1 + p.grid.count / 5) {
      const uint64_t chunk = p.grid.At(i);
      uint64_t want = 0;
      for (size_t g = 0; g < p.num_groups(); ++g) {
        want += NextFitWaste(p.group(g).data(), p.group(g).size(), chunk);
      }
      ASSERT_EQ(want, TotalWasteAt(p, chunk));
      for (uint32_t tile = 1; tile <= n + 1; ++tile) {
        ASSERT_EQ(TiledTotal(p, chunk, tile), want)
            << "round " << round << " chunk " << chunk << " tile " << tile;
      }
    }
  }
}

TEST(TiledWaste, GroupsEndingAtTileEdgesAndEmptyGroups) {
  // Chunk 6. Groups {4, 4} {} {4} {}: [4] [4] | [4] -> 2 + 2 + 2 = 6.
  // Groups {2} {2} {2}: each closes its own chunk, 4 + 4 + 4 = 12 (as one
  // group they would share a chunk and pad nothing).
  SweepProblem a;
  problems::AddGroup(a, {4, 4});
  problems::AddGroup(a, {});
  problems::AddGroup(a, {4});
  problems::AddGroup(a, {});
  SweepProblem b;
  problems::AddGroup(b, {2});
  problems::AddGroup(b, {2});
  problems::AddGroup(b, {2});
  for (uint32_t tile : {1u, 2u, 3u, 4u}) {
    EXPECT_EQ(TiledTotal(a, 6, tile), 6u) << tile;
    EXPECT_EQ(TiledTotal(b, 6, tile), 12u) << tile;
  }
  SweepProblem empty;
  problems::AddGroup(empty, {});
  EXPECT_EQ(TiledTotal(empty, 6, 4), 0u);
}

// The block's reduction as the kernel runs it: levels half = n/2 ... 1.
WasteIndex TreeReduce(std::vector<WasteIndex> slots) {
  for (uint32_t half = static_cast<uint32_t>(slots.size()) / 2; half > 0;
       half /= 2) {
    for (uint32_t i = 0; i < half; ++i) TreeLevel(slots.data(), i, half);
  }
  return slots[0];
}

TEST(BlockArgmin, TreeKeepsTheFirstLeastWasteWhateverTheOrder) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 500; ++round) {
    const uint32_t n = uint32_t{1} << (rng() % 9);  // 1 .. 256 threads
    // Few distinct wastes, so ties are common; some idle threads.
    std::vector<WasteIndex> slots(n);
    std::vector<uint64_t> indices(n);
    for (uint32_t i = 0; i < n; ++i) indices[i] = rng() % 1000;
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    for (uint32_t i = 0; i < n; ++i) {
      slots[i] = i < indices.size() && rng() % 8 != 0
                     ? WasteIndex{rng() % 3, indices[i]}
                     : NoCandidate();
    }
    // The seed's loop: candidates in index order, strict `<`.
    std::vector<WasteIndex> by_index = slots;
    std::sort(by_index.begin(), by_index.end(),
              [](const WasteIndex& a, const WasteIndex& b) {
                return a.index < b.index;
              });
    WasteIndex want = NoCandidate();
    for (const WasteIndex& w : by_index) {
      if (w.index != UINT64_MAX && w.waste < want.waste) want = w;
    }
    std::shuffle(slots.begin(), slots.end(), rng);
    const WasteIndex got = TreeReduce(slots);
    EXPECT_EQ(got.waste, want.waste) << "round " << round;
    EXPECT_EQ(got.index, want.index) << "round " << round;
  }
}

TEST(BlockArgmin, NothingSeenLosesToEveryCandidate) {
  WasteIndex best = NoCandidate();
  KeepPreferred(&best, {UINT64_MAX - 1, 5});
  EXPECT_EQ(best.index, 5u);
  KeepPreferred(&best, NoCandidate());
  EXPECT_EQ(best.index, 5u);
  KeepPreferred(&best, {UINT64_MAX - 1, 4});  // equal waste, smaller index
  EXPECT_EQ(best.index, 4u);
  KeepPreferred(&best, {UINT64_MAX - 1, 6});
  EXPECT_EQ(best.index, 4u);
}

}  // namespace
}  // namespace chunkplan::planner
