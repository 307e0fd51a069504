// OBJECTIVE_PEAK_RANK_BYTES under a placement that moves chunks by their
// size (docs/placement.md, "The objectives and the frontier"): each
// candidate laid out and placed, on a case worked by hand from the rules;
// the differential test holds it to the Python oracle on random requests.

#include <string>
#include <vector>

#include "chunkplan/planner/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/engines/cpu_sweep_frontier.h"

namespace chunkplan::planner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Four tensors of 8 elements at dp 2, candidates C = 8, 16, 24, 32 (the
// lcm 2 divides each). Adam with master weights and pinned memory: per
// element 2 (fp16) + 4 (master) bytes held, 8 per real element on rank 0,
// gradients in the fp16 chunk, the gathered buffer 2 x C.
//
//   C    chunks (used)     shards  real on rank 0  inflated total T
//   8    8, 8, 8, 8        4 each  4 each          4 x 16 = 64
//   16   16, 16            8 each  8 each          4 x 32 = 128
//   24   24, 24 (used 8)   12 each 12 and 8        4 x 48 = 192
//   32   32                16      16              4 x 64 = 256
//
// Nothing offloaded, rank 0 holds 6 x shards + 8 x real: 224, 224, 304, 224
// bytes; with the buffer 240, 256, 352, 288. Offloading a chunk frees
// 4 x shard + 8 x real (48, 96, 144 or 112, 192).
LayoutRequest FourTensors(double offload_optim_frac, Objective objective) {
  LayoutRequest r;
  r.search.numels = {8, 8, 8, 8};
  r.search.dp_degrees = {2};
  r.search.search_range_m = 24.0 / (1 << 20);
  r.search.search_interval = 8;
  r.search.min_chunk_size_m = 0;
  r.gemini.offload_optim_frac = offload_optim_frac;
  r.objective = objective;
  return r;
}

std::vector<std::vector<uint64_t>> Rows(const FrontierResult& f) {
  std::vector<std::vector<uint64_t>> rows;
  for (const FrontierPoint& p : f.points) {
    rows.push_back({p.candidate, p.chunk_size, p.value, p.seed_waste,
                    p.layout_padding, p.peak_rank_bytes});
  }
  return rows;
}

// offload_optim_frac 0.25: the budget ceil(T / 4) = 16, 32, 48, 64 bytes
// takes one chunk at every C. At C = 24 the worst order offloads the chunk
// with 8 real elements (frees 112, not 144): 304 - 112 + 48 = 240.
// Peaks 192, 160, 240, 96: the frontier is C = 8, 16, 32.
TEST(PlacedPeak, PartialOffloadScoresEachCandidatePlaced) {
  const Planner planner;
  const auto f = planner.Frontier(FourTensors(0.25, Objective::kPeakRankBytes));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->engine, Engine::kCpuSweep);  // AUTO's pick
  EXPECT_THAT(Rows(*f), ElementsAre(ElementsAre(0, 8, 192, 0, 0, 192),
                                    ElementsAre(1, 16, 160, 0, 0, 160),
                                    ElementsAre(3, 32, 96, 0, 0, 96)));
  // Layout lays out the best, C = 32: one chunk, offloaded.
  const auto layout =
      planner.Layout(FourTensors(0.25, Objective::kPeakRankBytes));
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(layout->search->configs[0].chunk_size, 32u);
  EXPECT_EQ(layout->most_loaded_rank.device_bytes, 32u);
  EXPECT_EQ(layout->gathered_chunk_bytes, 64u);
}

// offload_optim_frac 0.5: budgets 32, 64, 96, 128 take 2 of 4 chunks at
// C = 8 (224 - 96 + 16 = 144) and every chunk above (64, 96, 96).
TEST(PlacedPeak, HalfOffloadTakesEveryChunkAboveTheSmallestCandidate) {
  const auto f =
      Planner().Frontier(FourTensors(0.5, Objective::kPeakRankBytes));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_THAT(Rows(*f), ElementsAre(ElementsAre(0, 8, 144, 0, 0, 144),
                                    ElementsAre(1, 16, 64, 0, 0, 64)));
}

// Another objective's points carry the peak as Layout counts it, placed:
// the padding's one point, C = 8, at 192 bytes (240 with nothing moved).
TEST(PlacedPeak, OtherObjectivesPointsCarryThePlacedPeak) {
  for (const Engine engine : {Engine::kCpuPlateau, Engine::kCpuSweep}) {
    LayoutRequest r = FourTensors(0.25, Objective::kLayoutPadding);
    r.search.engine = engine;
    const auto f = Planner().Frontier(r);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_THAT(Rows(*f), ElementsAre(ElementsAre(0, 8, 0, 0, 0, 192)));
  }
}

TEST(PlacedPeak, OnlyCpuSweepServesIt) {
  LayoutRequest r = FourTensors(0.25, Objective::kPeakRankBytes);
  r.search.engine = Engine::kCpuPlateau;
  const auto refused = Planner().Frontier(r);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("search.engine: CPU_PLATEAU does not serve"));
  r.search.engine = Engine::kCpuSweep;
  EXPECT_TRUE(Planner().Frontier(r).ok());
}

// 4 candidates x 4 parameters, each step weighing kPlacedStepWeight, against
// --max_sweep_work; the same request with nothing moved is 16 steps.
TEST(PlacedPeak, WorkBeyondTheSweepLimitIsRefused) {
  PlannerOptions options;
  options.cpu_sweep.max_work = 16 * kPlacedStepWeight - 1;
  const Planner planner(options);
  const auto refused =
      planner.Frontier(FourTensors(0.25, Objective::kPeakRankBytes));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("--max_sweep_work"));
  LayoutRequest r = FourTensors(0.0, Objective::kPeakRankBytes);
  r.search.engine = Engine::kCpuSweep;
  EXPECT_TRUE(planner.Frontier(r).ok());
  options.cpu_sweep.max_work = 16 * kPlacedStepWeight;
  EXPECT_TRUE(Planner(options)
                  .Frontier(FourTensors(0.25, Objective::kPeakRankBytes))
                  .ok());
}

TEST(PlacedPeak, TheStopCheckEndsIt) {
  const auto stopped =
      Planner().Frontier(FourTensors(0.25, Objective::kPeakRankBytes),
                         [] { return absl::DeadlineExceededError("budget"); });
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace chunkplan::planner
