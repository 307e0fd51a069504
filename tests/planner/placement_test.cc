// The placement policies (server/planner/layout/placement.h,
// offload_order.h) on cases worked by hand from the rules in
// docs/placement.md; the differential test holds them to the Python oracle
// on random requests.

#include "server/planner/layout/placement.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/layout/byte_model_of.h"
#include "server/planner/layout/offload_order.h"
#include "server/planner/layout/rank_memory.h"

namespace chunkplan::planner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// One group at degree 1, chunks of 400 elements holding (100, 200),
// (300, 50) and (60, 70): used 300, 350 and 130, two parameters each.
// Each chunk is 800 fp16 bytes; the inflated total is 3 x 2 x 800 = 4800.
std::vector<GroupLayout> ThreeChunks() {
  return {GroupLayout{{1, 400, false},
                      {ChunkLayout{400, 300, 0, 2}, ChunkLayout{400, 350, 2, 2},
                       ChunkLayout{400, 130, 4, 2}},
                      420}};
}

LayoutResult Place(const std::vector<GroupLayout>& groups,
                   const GeminiSettings& s, uint64_t frozen = 0) {
  LayoutResult r;
  const absl::Status status = PlaceOnDevices(groups, frozen, s, &r);
  EXPECT_TRUE(status.ok()) << status;
  return r;
}

TEST(Placement, DefaultSettingsAreStaticWithNothingMoved) {
  const auto groups = ThreeChunks();
  const LayoutResult r = Place(groups, {});
  const auto today = RankBytes(groups, 0, ByteModelOf({}), RankOfGroup::kFirst,
                               "most_loaded_rank");
  ASSERT_TRUE(today.ok());
  EXPECT_EQ(r.most_loaded_rank, *today);
  EXPECT_EQ(r.most_loaded_rank_least, *today);
  EXPECT_EQ(r.most_loaded_rank.offloaded_host_bytes, 0u);
  EXPECT_EQ(r.most_loaded_rank.host_bytes, 7200u);  // (2 + 4) x 1200 pinned
  EXPECT_EQ(r.placement, PlacementOutcome{});
}

TEST(Placement, OptimizerOffloadCountsTheInflatedTotal) {
  // budget = 0.3 x 4800 = 1440: two chunks of 800 reach it (a third of the
  // parameters' "fraction" would have been one chunk). Worst order for the
  // device: the chunks with the fewest real elements (300 and 130) go to the
  // host, so 350 keep their Adam states (8 bytes) on the device.
  GeminiSettings s;
  s.offload_optim_frac = 0.3;
  const LayoutResult r = Place(ThreeChunks(), s);
  EXPECT_EQ(r.placement.offloaded_chunks, 2u);
  EXPECT_EQ(r.placement.offloaded_chunks_max, 2u);
  EXPECT_DOUBLE_EQ(r.placement.effective_offload_optim_frac, 2.0 / 3.0);
  const RankMemory& most = r.most_loaded_rank;
  EXPECT_EQ(most.param_bytes, 2u * 1200);  // every fp16 shard stays
  EXPECT_EQ(most.master_bytes, 4u * 400);  // one chunk's master
  EXPECT_EQ(most.optimizer_bytes, 8u * 350);
  EXPECT_EQ(most.device_bytes, 2400u + 1600 + 2800);
  // Pinned: fp16 and master shards are pinned already; the states are not.
  EXPECT_EQ(most.offloaded_host_bytes, 8u * (300 + 130));
  EXPECT_EQ(most.host_bytes, 7200u + 3440);
  // The best order offloads 350 and 300: 130 stay.
  EXPECT_EQ(r.most_loaded_rank_least.optimizer_bytes, 8u * 130);
  ASSERT_THAT(r.placement.notes, ::testing::SizeIs(1));
  EXPECT_THAT(r.placement.notes[0], HasSubstr("offloads 2 to 2 of 3"));
  EXPECT_THAT(r.placement.notes[0], HasSubstr("4800 bytes"));
}

TEST(Placement, WithoutPinnedMemoryOffloadedShardsArePageable) {
  GeminiSettings s;
  s.offload_optim_frac = 1.0;
  s.pin_memory = false;
  const LayoutResult r = Place(ThreeChunks(), s);
  EXPECT_EQ(r.placement.offloaded_chunks, 3u);
  const RankMemory& m = r.most_loaded_rank;
  EXPECT_EQ(m.pinned_host_bytes, 0u);
  EXPECT_EQ(m.master_bytes, 0u);
  EXPECT_EQ(m.optimizer_bytes, 0u);
  // (2 + 4) x 1200 shard bytes + 8 x 780 states.
  EXPECT_EQ(m.offloaded_host_bytes, 6u * 1200 + 8 * 780);
  EXPECT_EQ(m.host_bytes, m.offloaded_host_bytes);
}

TEST(Placement, AnExactThresholdAndTheNextDouble) {
  // Three chunks of 800 bytes, one parameter each: total 2400. At 1/3 the
  // float budget is 2400 x 0.333... = 800.0: one chunk reaches it. At the
  // next double the budget exceeds 800: a second chunk goes.
  std::vector<GroupLayout> groups = {
      GroupLayout{{1, 400, false},
                  {ChunkLayout{400, 400, 0, 1}, ChunkLayout{400, 400, 1, 1},
                   ChunkLayout{400, 400, 2, 1}},
                  0}};
  GeminiSettings s;
  s.offload_optim_frac = 1.0 / 3.0;
  EXPECT_EQ(Place(groups, s).placement.offloaded_chunks, 1u);
  s.offload_optim_frac = std::nextafter(1.0 / 3.0, 1.0);
  EXPECT_EQ(Place(groups, s).placement.offloaded_chunks, 2u);
}

TEST(OffloadOrder, MixedSizesGiveBothCounts) {
  // Chunks of 10, 10 and 1 byte, budget 15: {10, 10} (sum 20, 20 - 10 < 15)
  // and all three (21 - 10 < 15) are what some order offloads; {10, 1}
  // (11 < 15, not all) is not.
  const auto counts = CountOffloaded({10, 10, 1}, 15);
  EXPECT_EQ(counts.least, 2u);
  EXPECT_EQ(counts.most, 3u);
  EXPECT_EQ(counts.least_bytes, 20u);
  const std::vector<OffloadItem> items = {
      {.index = 0, .weight = 10, .saving = 5, .host = 1},
      {.index = 1, .weight = 10, .saving = 7, .host = 1},
      {.index = 2, .weight = 1, .saving = 100, .host = 1}};
  auto most = ExtremeOffloadSet(items, 15, OffloadExtreme::kMostDevice);
  ASSERT_TRUE(most.ok());
  EXPECT_THAT(*most, ElementsAre(0, 1));
  auto least = ExtremeOffloadSet(items, 15, OffloadExtreme::kLeastDevice);
  ASSERT_TRUE(least.ok());
  EXPECT_THAT(*least, ElementsAre(0, 1, 2));
  auto none = ExtremeOffloadSet(items, 0, OffloadExtreme::kLeastDevice);
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(*none, IsEmpty());
}

TEST(OffloadOrder, ALargeChunkLastCanCarryTheSumPastTheBudget) {
  // Sizes 3, 3, 3 and 8, budget 7. Reachable: {8}, {3, 8} (11 - 8 < 7),
  // {3, 3, 8} (14 - 8 < 7) and {3, 3, 3} (9 - 3 < 7); not all four
  // (17 - 8 >= 7). Savings 2 per 3-byte chunk, 1 for the 8: {3, 3, 3}
  // saves the most (6), {8} the least (1).
  const std::vector<OffloadItem> items = {
      {.index = 0, .weight = 3, .saving = 2},
      {.index = 1, .weight = 3, .saving = 2},
      {.index = 2, .weight = 3, .saving = 2},
      {.index = 3, .weight = 8, .saving = 1}};
  auto least = ExtremeOffloadSet(items, 7, OffloadExtreme::kLeastDevice);
  ASSERT_TRUE(least.ok());
  EXPECT_THAT(*least, ElementsAre(0, 1, 2));
  auto most = ExtremeOffloadSet(items, 7, OffloadExtreme::kMostDevice);
  ASSERT_TRUE(most.ok());
  EXPECT_THAT(*most, ElementsAre(3));
}

TEST(Placement, ShardParamFracKeepsTheLastChunksGathered) {
  // Degree 2, three chunks of 400 (800 bytes), one parameter each: total
  // 2400.
  std::vector<GroupLayout> groups = {
      GroupLayout{{2, 400, false},
                  {ChunkLayout{400, 400, 0, 1}, ChunkLayout{400, 400, 1, 1},
                   ChunkLayout{400, 400, 2, 1}},
                  0}};
  GeminiSettings s;
  // keep = 2400 x 0.5 = 1200: the first two are released (2400 and 1600
  // > 1200), the last stays whole.
  s.shard_param_frac = 0.5;
  const LayoutResult r = Place(groups, s);
  EXPECT_EQ(r.placement.gathered_at_run_time, 1u);
  // Shards of 200: 2 x (200 + 200 + 400).
  EXPECT_EQ(r.most_loaded_rank.param_bytes, 2u * 800);
  EXPECT_EQ(r.most_loaded_rank.master_bytes, 4u * 600);
}

TEST(Placement, OffloadParamFracIsHonouredOnlyWithEverythingElseOffloaded) {
  GeminiSettings s;
  s.offload_param_frac = 0.5;
  LayoutResult r = Place(ThreeChunks(), s);
  EXPECT_EQ(r.placement.param_offloaded_chunks, 0u);
  ASSERT_THAT(r.placement.notes, ::testing::SizeIs(1));
  EXPECT_THAT(r.placement.notes[0], HasSubstr("is ignored"));
  // keep_cuda_chunk_mem = 4800 x 0.5 = 2400 = all three chunks: none moves.
  s.offload_optim_frac = 1.0;
  r = Place(ThreeChunks(), s);
  EXPECT_EQ(r.placement.param_offloaded_chunks, 0u);
  // 4800 x 0.25 = 1200: the first two chunks' fp16 shards move.
  s.offload_param_frac = 0.75;
  r = Place(ThreeChunks(), s);
  EXPECT_EQ(r.placement.param_offloaded_chunks, 2u);
  EXPECT_EQ(r.most_loaded_rank.param_bytes, 2u * 400);
}

TEST(Placement, AutoPutsEveryOptimizerSideOnTheHostAndJudgesWarmUp) {
  GeminiSettings s;
  s.placement = Placement::kAuto;
  s.device_memory_bytes = 10000;  // warm-up share 2000 < 2400 of fp16 shards
  const LayoutResult r = Place(ThreeChunks(), s);
  EXPECT_EQ(r.placement.offloaded_chunks, 3u);
  EXPECT_EQ(r.most_loaded_rank.device_bytes, 2400u);
  ASSERT_THAT(r.placement.notes, ::testing::SizeIs(2));
  EXPECT_THAT(r.placement.notes[1], HasSubstr("will be moved"));
  s.device_memory_bytes = 12000;  // 2400 fits the share exactly
  EXPECT_THAT(Place(ThreeChunks(), s).placement.notes[1],
              HasSubstr("no chunk is moved"));
}

TEST(PlacementChecks, RefuseFractionsAndTheOtherPolicysFields) {
  const auto refused = [](const GeminiSettings& s, const char* field) {
    const absl::Status status = CheckPlacement(s);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << field;
    EXPECT_THAT(std::string(status.message()),
                ::testing::StartsWith(std::string("gemini.") + field));
  };
  GeminiSettings s;
  EXPECT_TRUE(CheckPlacement(s).ok());
  s.offload_optim_frac = std::numeric_limits<double>::quiet_NaN();
  refused(s, "offload_optim_frac");
  s = {};
  s.shard_param_frac = 1.5;
  refused(s, "shard_param_frac");
  s = {};
  s.offload_param_frac = -0.1;
  refused(s, "offload_param_frac");
  s = {};
  s.placement = Placement::kAuto;
  s.offload_optim_frac = 0.5;
  refused(s, "offload_optim_frac");
  s = {};
  s.device_memory_bytes = 1;
  refused(s, "device_memory_bytes");
}

}  // namespace
}  // namespace chunkplan::planner
