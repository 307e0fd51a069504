// The layout replay (server/planner/layout/) on cases worked by hand from
// the rules in docs/layout.md; the differential test holds it to the Python
// oracle on random requests.

#include <algorithm>
#include <vector>

#include "chunkplan/planner/planner.h"
#include "common/worker_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/candidate/next_fit.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "server/planner/engines/frontier_merge.h"
#include "server/planner/engines/frontier_points.h"
#include "server/planner/layout/byte_model_of.h"
#include "server/planner/layout/chunk_placement.h"
#include "server/planner/layout/objective_problem.h"
#include "server/planner/layout/rank_memory.h"
#include "server/planner/request/search_plan.h"

namespace chunkplan::planner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SearchRequest Params(std::vector<uint64_t> numels,
                     std::vector<uint32_t> degrees) {
  SearchRequest r;
  r.numels = std::move(numels);
  r.dp_degrees = std::move(degrees);
  r.search_interval = 1;
  return r;
}

TEST(ChunkPlacement, NextFitClosesForGoodAndRoundsOversizeToTheDegree) {
  // Degree 2, C = 8: 5 opens [8], 3 fills it (5 + 3 <= 8); 10 > 8 opens an
  // oversize chunk of 10 (already a multiple of 2); 2 does not fit its
  // slack of 0 and opens [8]; 1 joins it (3 of 8 used).
  const std::vector<ChunkConfig> configs = {{2, 8, false}};
  const auto groups =
      PlaceChunks(Params({5, 3, 10, 2, 1}, {2}), configs, /*frozen=*/{});
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->size(), 1u);
  EXPECT_THAT((*groups)[0].chunks,
              ElementsAre(ChunkLayout{8, 8, 0, 2}, ChunkLayout{10, 10, 2, 1},
                          ChunkLayout{8, 3, 3, 2}));
  EXPECT_EQ((*groups)[0].padding, 5u);
}

TEST(ChunkPlacement, AnOversizeChunkKeepsItsSlackOpen) {
  // Degree 4, C = 4: 9 > 4 opens a chunk of 12 (9 rounded up to 4); 1 joins
  // its slack (10 <= 12); 0 joins too.
  const std::vector<ChunkConfig> configs = {{4, 4, false}};
  const auto groups = PlaceChunks(Params({9, 1, 0}, {4}), configs, {});
  ASSERT_TRUE(groups.ok()) << groups.status();
  EXPECT_THAT((*groups)[0].chunks, ElementsAre(ChunkLayout{12, 10, 0, 3}));
  EXPECT_EQ((*groups)[0].padding, 2u);
}

TEST(ChunkPlacement, FrozenParametersAreLeftOutAndGroupsFollowTheConfigs) {
  // Degrees 1 and 3, configs in the order (3, 1). Parameter 1 is frozen, so
  // degree 1 places 4 and 4 into one chunk of 8; degree 3 places 6 alone.
  const std::vector<ChunkConfig> configs = {{3, 9, false}, {1, 8, false}};
  const auto groups = PlaceChunks(Params({4, 4, 4, 6}, {1, 1, 1, 3}), configs,
                                  {false, true, false, false});
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].config.dp_degree, 3u);
  EXPECT_THAT((*groups)[0].chunks, ElementsAre(ChunkLayout{9, 6, 3, 1}));
  EXPECT_THAT((*groups)[1].chunks, ElementsAre(ChunkLayout{8, 8, 0, 2}));
}

TEST(RankMemory, PaddingSitsOnTheHighestRanks) {
  // One chunk of 12 holding 10 at degree 4: shards of 3; rank 0 holds 3
  // real elements, rank 3 clamp(10 - 9, 0, 3) = 1. Defaults: params 2 x 3,
  // master 4 x 3, gradients reuse the fp16 chunk, Adam 2 x 4 x real,
  // pinned (2 + 4) x 3; nothing offloaded, so host = pinned.
  GroupLayout group{{4, 4, false}, {ChunkLayout{12, 10, 0, 2}}, 2};
  const std::vector<GroupLayout> groups = {group};
  const auto most =
      RankBytes(groups, 0, ByteModelOf({}), RankOfGroup::kFirst, "most");
  const auto least =
      RankBytes(groups, 0, ByteModelOf({}), RankOfGroup::kLast, "least");
  ASSERT_TRUE(most.ok() && least.ok());
  EXPECT_EQ(*most, (RankMemory{6, 12, 0, 24, 0, 42, 18, 0, 18}));
  EXPECT_EQ(*least, (RankMemory{6, 12, 0, 8, 0, 26, 18, 0, 18}));
}

TEST(RankMemory, SettingsChangeEachPart) {
  // Kept gathered: the chunk of 7 (4 used) is whole on every rank, never
  // pinned. Master weights off: gradients are their own chunk (2 x 7) and
  // Adam's states 2 bytes (2 x 2 x 4). 5 frozen elements: 10 bytes.
  GroupLayout group{{2, 7, true}, {ChunkLayout{7, 4, 0, 1}}, 3};
  const std::vector<GroupLayout> groups = {group};
  GeminiSettings settings;
  settings.master_weights = false;
  const auto bytes =
      RankBytes(groups, 5, ByteModelOf(settings), RankOfGroup::kLast, "least");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, (RankMemory{14, 0, 14, 16, 10, 54, 0}));
  settings.optimizer = Optimizer::kNone;
  settings.pin_memory = false;
  EXPECT_EQ(
      RankBytes(groups, 5, ByteModelOf(settings), RankOfGroup::kLast, "least")
          ->optimizer_bytes,
      0u);
}

// The byte model's rates, read from GeminiPlugin's rules (docs/layout.md):
// fp16 params 2, fp32 master 4 with master weights, gradients their own 2
// without master weights or with gradient accumulation, Adam's two states
// of the master's width, pinned copies of everything a shard holds.
TEST(ByteModel, RatesFollowTheSettings) {
  GeminiSettings s;
  EXPECT_EQ(ByteModelOf(s).held(), 6u);
  EXPECT_EQ(ByteModelOf(s).optimizer, 8u);
  EXPECT_EQ(ByteModelOf(s).pinned, 6u);
  EXPECT_EQ(ByteModelOf(s).frozen, 2u);
  EXPECT_EQ(ByteModelOf(s).gathered, 2u);
  s.gradient_accumulation = true;
  EXPECT_EQ(ByteModelOf(s).grad, 2u);
  EXPECT_EQ(ByteModelOf(s).pinned, 8u);
  s.master_weights = false;
  EXPECT_EQ(ByteModelOf(s).held(), 4u);
  EXPECT_EQ(ByteModelOf(s).optimizer, 4u);
  s.optimizer = Optimizer::kNone;
  s.pin_memory = false;
  EXPECT_EQ(ByteModelOf(s).optimizer, 0u);
  EXPECT_EQ(ByteModelOf(s).pinned, 0u);
}

// Layout and the peak objective count with the same byte model: at every
// point of the frontier, the objective's peak is Layout's most loaded rank
// on the device plus the gathered chunk, under each setting.
TEST(ByteModel, LayoutAndThePeakObjectiveAgree) {
  const Planner planner;
  LayoutRequest r;
  r.search = Params({70001, 3, 1023, 65536, 77777, 5, 40000, 9}, {2});
  r.search.search_range_m = 0.25;
  r.search.search_interval = 1024;
  r.search.min_chunk_size_m = 0;
  r.frozen = {false, false, true, false, false, false, false, true};
  r.objective = Objective::kPeakRankBytes;
  for (int bits = 0; bits < 16; ++bits) {
    r.gemini.master_weights = bits & 1;
    r.gemini.gradient_accumulation = bits & 2;
    r.gemini.pin_memory = bits & 4;
    r.gemini.optimizer = bits & 8 ? Optimizer::kNone : Optimizer::kAdam;
    const auto frontier = planner.Frontier(r);
    ASSERT_TRUE(frontier.ok()) << frontier.status();
    for (const FrontierPoint& p : frontier->points) {
      LayoutRequest given = r;
      given.objective = Objective::kSeedWaste;
      given.configs = {{2, p.chunk_size, false}};
      const auto layout = planner.Layout(given);
      ASSERT_TRUE(layout.ok()) << layout.status();
      EXPECT_EQ(p.peak_rank_bytes, layout->most_loaded_rank.device_bytes +
                                       layout->gathered_chunk_bytes)
          << bits << " at " << p.chunk_size;
      EXPECT_EQ(p.layout_padding, layout->layout_padding);
    }
  }
}

TEST(PlannerLayout, RefusesConfigsColossalAiWouldRefuse) {
  const Planner planner;
  LayoutRequest r;
  r.search = Params({10, 20}, {4, 2});
  r.configs = {{4, 8, false}, {2, 7, false}};
  EXPECT_THAT(planner.Layout(r).status().message(),
              HasSubstr("configs[1].chunk_size"));
  r.configs = {{4, 8, false}};
  EXPECT_THAT(planner.Layout(r).status().message(),
              HasSubstr("no config for degree 2"));
  r.configs = {{4, 8, false}, {2, 8, false}};
  r.frozen = {true};
  EXPECT_THAT(planner.Layout(r).status().message(), HasSubstr("frozen"));
  r.frozen.clear();
  r.search.search_interval = 0;
  EXPECT_THAT(planner.Layout(r).status().message(),
              HasSubstr("search.search_interval"));
}

TEST(PlannerFrontier, EndsWithTheStopChecksStatusAndRefusesWhatItCannotServe) {
  const Planner planner;
  LayoutRequest r;
  r.search = Params({10, 20, 30}, {1});
  r.search.search_range_m = 1;  // 2^20 + 1 candidates
  r.search.min_chunk_size_m = 0;
  r.objective = Objective::kPeakRankBytes;
  r.search.engine = Engine::kCpuSweep;
  int asked = 0;
  const auto status = planner.Frontier(r, [&asked] {
    return ++asked < 3 ? absl::OkStatus()
                       : absl::DeadlineExceededError("budget spent");
  });
  EXPECT_EQ(status.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(asked, 3);
  // CPU_PLATEAU (AUTO's pick) asks before its first layout.
  r.search.engine = Engine::kAuto;
  asked = 0;
  const auto walked = planner.Frontier(r, [&asked] {
    ++asked;
    return absl::DeadlineExceededError("budget spent");
  });
  EXPECT_EQ(walked.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(asked, 1);

  r.search.search_range_m = 0;
  r.search.engine = Engine::kCpuPlateau;
  const auto on_plateau = planner.Frontier(r);
  ASSERT_TRUE(on_plateau.ok()) << on_plateau.status();
  EXPECT_EQ(on_plateau->engine, Engine::kCpuPlateau);
  // CUDA serves the layout objectives where a device is usable (else
  // FAILED_PRECONDITION says why), never the seed's.
  r.search.engine = Engine::kCuda;
  const auto on_cuda = planner.Frontier(r);
  if (on_cuda.ok()) {
    EXPECT_EQ(on_cuda->engine, Engine::kCuda);
  } else {
    EXPECT_EQ(on_cuda.status().code(), absl::StatusCode::kFailedPrecondition)
        << on_cuda.status();
  }
  r.objective = Objective::kSeedWaste;
  EXPECT_THAT(planner.Frontier(r).status().message(),
              HasSubstr("search.engine: CUDA serves the layout objectives"));
  r.objective = Objective::kPeakRankBytes;
  r.search.engine = Engine::kAuto;
  r.configs = {{1, 64, false}};
  EXPECT_THAT(planner.Frontier(r).status().message(), HasSubstr("configs"));
  EXPECT_THAT(planner.Layout(r).status().message(), HasSubstr("objective"));
}

// CPU_SWEEP's frontier of `objective` for `r` (on `pool`) with every
// point's measures.
absl::StatusOr<std::vector<FrontierPoint>> CpuSweepFrontier(
    const SearchPlan& plan, const ObjectiveProblem& problem,
    Objective objective, common::WorkerPool* pool) {
  const SweepTask task{&plan.sweep, &problem, objective, Want::kFrontier,
                       1 << 20};
  const CpuSweepEngine engine(CpuSweepOptions{.max_work = UINT64_MAX}, pool);
  const absl::StatusOr<SweepOutcome> outcome = engine.Run(task, {});
  if (!outcome.ok()) return outcome.status();
  return FrontierPoints(task, *outcome);
}

// The frontier merged from many ranges on a pool equals the frontier of
// one plain loop over every candidate (the differential test's requests are
// too small to be split).
TEST(CpuSweepFrontier, RangesOnAPoolMergeToTheOneLoopFrontier) {
  LayoutRequest r;
  r.search = Params({70001, 3, 1023, 65536, 77777, 5, 40000}, {2});
  r.search.search_range_m = 1;  // 2^20 + 1 candidates: many ranges
  r.search.min_chunk_size_m = 0;
  r.frozen = {false, false, true, false, false, false, false};
  const auto plan = BuildSearchPlan(r.search);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ObjectiveProblem problem = BuildObjectiveProblem(r, *plan);
  common::WorkerPool pool(2);
  for (const Objective objective :
       {Objective::kSeedWaste, Objective::kLayoutPadding,
        Objective::kPeakRankBytes}) {
    std::vector<FrontierPoint> expected;
    for (uint64_t i = 0; i < plan->sweep.grid.count; ++i) {
      const uint64_t chunk = plan->sweep.grid.At(i);
      uint64_t waste = 0;
      for (size_t g = 0; g < plan->sweep.num_groups(); ++g) {
        const auto sizes = plan->sweep.group(g);
        waste += NextFitWaste(sizes.data(), sizes.size(), chunk);
      }
      const LayoutValues v = problem.At(chunk);
      ASSERT_FALSE(v.overflow);
      const uint64_t value = objective == Objective::kSeedWaste ? waste
                             : objective == Objective::kLayoutPadding
                                 ? v.layout_padding
                                 : v.peak_rank_bytes;
      if (!expected.empty() && value >= expected.back().value) continue;
      expected.push_back({i, problem.Rounded(chunk), value, waste,
                          v.layout_padding, v.peak_rank_bytes});
    }
    const auto got = CpuSweepFrontier(*plan, problem, objective, &pool);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, expected) << static_cast<int>(objective);
    EXPECT_GT(expected.size(), 1u);
  }
}

// The merge that takes a device's values slice by slice gives CPU_SWEEP's
// frontier, whatever the slicing; an overflow ends it, and a value that is
// not the host's fails the points.
TEST(FrontierMerge, SlicesOfValuesGiveTheSweepsFrontier) {
  LayoutRequest r;
  r.search = Params({70001, 3, 1023, 65536, 77777, 5, 40000}, {2});
  r.search.search_range_m = 1;
  r.search.min_chunk_size_m = 0;
  const auto plan = BuildSearchPlan(r.search);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ObjectiveProblem problem = BuildObjectiveProblem(r, *plan);
  const CandidateGrid& grid = plan->sweep.grid;
  for (const Objective objective :
       {Objective::kLayoutPadding, Objective::kPeakRankBytes}) {
    const SweepTask task{&plan->sweep, &problem, objective, Want::kFrontier,
                         1 << 20};
    std::vector<uint64_t> values;
    for (uint64_t i = 0; i < grid.count; ++i) {
      const LayoutValues v = problem.At(grid.At(i));
      values.push_back(objective == Objective::kLayoutPadding
                           ? v.layout_padding
                           : v.peak_rank_bytes);
    }
    const auto want = CpuSweepFrontier(*plan, problem, objective, nullptr);
    ASSERT_TRUE(want.ok()) << want.status();
    const auto merged = [&](uint64_t slice) {
      FrontierMerge merge(task.keep());
      for (uint64_t first = 0; first < grid.count; first += slice) {
        const uint64_t n = std::min(slice, grid.count - first);
        EXPECT_TRUE(*merge.OfferSlice(grid, first, {values.data() + first, n},
                                      std::nullopt));
      }
      return FrontierPoints(task, merge.Take());
    };
    for (const uint64_t slice : {uint64_t{1000}, uint64_t{77777}, grid.count}) {
      EXPECT_EQ(*merged(slice), *want) << slice;
    }
    FrontierMerge overflowed(task.keep());
    EXPECT_THAT(overflowed.OfferSlice(grid, 0, {values.data(), 10}, 7)
                    .status()
                    .message(),
                HasSubstr("candidate 7"));
    values[0] += 1;  // the device and the host disagree at a point
    EXPECT_EQ(merged(grid.count).status().code(), absl::StatusCode::kInternal);
  }
}

}  // namespace
}  // namespace chunkplan::planner
