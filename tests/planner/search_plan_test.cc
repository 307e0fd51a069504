// Validation and the plan's structure. Each invalid-input rule of the seed
// (and each 64-bit guard) gets INVALID_ARGUMENT naming the field and index.
#include "server/planner/request/search_plan.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMaxInt64 = (uint64_t{1} << 63) - 1;

SearchRequest Small() {
  SearchRequest r;
  r.numels = {100, 200, 300, 400};
  r.search_range_m = 0;
  r.search_interval = 16;
  r.min_chunk_size_m = 0;
  return r;
}

void ExpectInvalid(const SearchRequest& r, const std::string& prefix) {
  const auto plan = BuildSearchPlan(r);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(plan.status().message()), StartsWith(prefix));
}

TEST(SearchPlanValidation, NoNumels) {
  SearchRequest r = Small();
  r.numels.clear();
  ExpectInvalid(r, "numels is empty");
}

TEST(SearchPlanValidation, DegreeListOfWrongLength) {
  SearchRequest r = Small();
  r.dp_degrees = {1, 2};
  ExpectInvalid(r, "dp_degrees has 2 entries");
}

TEST(SearchPlanValidation, DegreeZeroNamesItsIndex) {
  SearchRequest r = Small();
  r.dp_degrees = {1, 1, 1, 0};
  ExpectInvalid(r, "dp_degrees[3] is 0");
  r.dp_degrees = {0};
  ExpectInvalid(r, "dp_degrees[0] is 0");
}

TEST(SearchPlanValidation, IntervalZero) {
  SearchRequest r = Small();
  r.search_interval = 0;
  ExpectInvalid(r, "search_interval is 0");
}

TEST(SearchPlanValidation, NonFiniteMebiValues) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    SearchRequest r = Small();
    r.search_range_m = bad;
    ExpectInvalid(r, "search_range_m is");
    r = Small();
    r.min_chunk_size_m = bad;
    ExpectInvalid(r, "min_chunk_size_m is");
  }
}

TEST(SearchPlanValidation, NegativeOnlyWhenItRoundsBelowZero) {
  SearchRequest r = Small();
  r.search_range_m = -1.0;
  ExpectInvalid(r, "search_range_m is -1");
  r = Small();
  r.min_chunk_size_m = -3.0 / 1048576;
  ExpectInvalid(r, "min_chunk_size_m is");
  // round(-0.5) == 0 in Python: the seed accepts it.
  r = Small();
  r.search_range_m = -0.5 / 1048576;
  r.min_chunk_size_m = -0.5 / 1048576;
  EXPECT_TRUE(BuildSearchPlan(r).ok());
}

TEST(SearchPlanValidation, MebiValuesTooLarge) {
  SearchRequest r = Small();
  r.search_range_m = 1e300;
  ExpectInvalid(r, "search_range_m is");
  r = Small();
  r.min_chunk_size_m = 0x1p43;  // 2**63 elements
  ExpectInvalid(r, "min_chunk_size_m is");
}

TEST(SearchPlanOverflow, NumelAboveInt64) {
  SearchRequest r = Small();
  r.numels[2] = kMaxInt64 + 1;
  ExpectInvalid(r, "numels[2] is 9223372036854775808");
}

TEST(SearchPlanOverflow, TotalAboveInt64NamesWhereItOverflows) {
  SearchRequest r = Small();
  r.numels = {1, kMaxInt64 - 1, 1, 5};
  ExpectInvalid(r, "numels[2]: the total");
}

TEST(SearchPlanOverflow, DegreeLcm) {
  SearchRequest r = Small();
  r.dp_degrees = {4294967291u, 4294967279u, 4294967231u, 1};
  ExpectInvalid(r, "dp_degrees[1]: the least common multiple");
}

TEST(SearchPlanOverflow, LargestCandidate) {
  SearchRequest r = Small();
  r.search_range_m = 0x1p42;  // 2**62 elements
  r.numels = {uint64_t{1} << 62};
  ExpectInvalid(r, "search_range_m: the largest candidate");
  // The lcm round-up of the last candidate counts too.
  // 2**63 - 1024 is a multiple of 1024 only, so a degree of 2048 pushes it
  // to 2**63.
  r.search_range_m = 0;
  r.numels = {(uint64_t{1} << 63) - 1024};
  r.search_interval = 1;
  r.dp_degrees = {2048};
  ExpectInvalid(r, "search_range_m: the largest candidate");
}

TEST(SearchPlanOverflow, WasteSums) {
  SearchRequest r = Small();
  // 2 * S + G * C = 6 * 2**61 + 3 * 2**61 > 2**64.
  r.numels = {uint64_t{1} << 61, uint64_t{1} << 61, uint64_t{1} << 61};
  r.dp_degrees = {1, 2, 3};
  r.filter_exlarge_params = false;
  r.search_interval = 1;
  ExpectInvalid(r, "search_range_m: padding sums");
}

TEST(SearchPlanOverflow, StartBelowLargestSizeFromFloatDivision) {
  // math.ceil((2**60 + 1) / 1024) * 1024 == 2**60 < 2**60 + 1.
  SearchRequest r = Small();
  r.numels = {(uint64_t{1} << 60) + 1};
  r.search_interval = 1024;
  ExpectInvalid(r, "search_interval is 1024: ColossalAI's float division");
}

TEST(SearchPlan, GroupsInFirstSeenOrderAndGathersSmallOnes) {
  SearchRequest r;
  r.numels = {5, 3 << 20, 7, 1 << 20, 2 << 20};
  r.dp_degrees = {3, 2, 3, 5, 2};
  r.search_range_m = 0;
  r.search_interval = 1024;
  r.min_chunk_size_m = 1.5;  // 1572864 elements
  r.filter_exlarge_params = false;
  const auto plan = BuildSearchPlan(r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->groups.size(), 3u);
  EXPECT_EQ(plan->groups[0].dp_degree, 3u);
  EXPECT_TRUE(plan->groups[0].keep_gathered);
  EXPECT_EQ(plan->groups[0].total, 12u);
  EXPECT_EQ(plan->groups[1].dp_degree, 2u);
  EXPECT_FALSE(plan->groups[1].keep_gathered);
  EXPECT_EQ(plan->groups[2].dp_degree, 5u);
  EXPECT_TRUE(plan->groups[2].keep_gathered);  // 2**20 < 1.5 * 2**20
  EXPECT_EQ(plan->degree_lcm, 30u);
  EXPECT_EQ(plan->total_param_size, 12u + (5u << 20) + (1u << 20));
  EXPECT_THAT(plan->sweep.sizes, ElementsAre(3u << 20, 2u << 20));
  EXPECT_EQ(plan->sweep.num_groups(), 1u);
  // start = ceil(max(1572864, 3 * 2**20) / 1024) * 1024
  EXPECT_EQ(plan->sweep.grid.start, 3u << 20);
  EXPECT_EQ(plan->sweep.grid.count, 1u);
}

TEST(SearchPlan, GridCountIsTheSeedsRange) {
  SearchRequest r = Small();
  r.search_range_m = 100.0 / 1048576;  // range(start, start + 101, 16): 7
  const auto plan = BuildSearchPlan(r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->sweep.grid.count, 7u);
  EXPECT_EQ(plan->sweep.grid.start, 400u);
}

TEST(SearchPlan, FilterCanEmptyAGroup) {
  // Degree 2's only parameter is far above mean + 3 std of all swept sizes:
  // the seed crashes on max([]); chunkplan keeps the group, empty.
  SearchRequest r;
  for (int i = 0; i < 20; ++i) r.numels.push_back(1000);
  r.numels.push_back(1000000);
  r.dp_degrees.assign(20, 1);
  r.dp_degrees.push_back(2);
  r.search_range_m = 0;
  r.search_interval = 100;
  r.min_chunk_size_m = 0;
  const auto plan = BuildSearchPlan(r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->sweep.num_groups(), 2u);
  EXPECT_EQ(plan->sweep.group(0).size(), 20u);
  EXPECT_TRUE(plan->sweep.group(1).empty());
  EXPECT_EQ(plan->sweep.grid.start, 1000u);
}

// The one-degree path (dp_degrees of 0 or 1 entries) builds what the
// general path builds for the same degree given once per parameter: the
// same groups, sizes, offsets, totals and grid, on random requests with
// and without the filter, gathered or not, with zeros and outliers.
TEST(SearchPlan, OneDegreePathEqualsTheGeneralPath) {
  std::mt19937_64 rng(20261203);
  for (int round = 0; round < 2000; ++round) {
    SearchRequest shared;
    const size_t count = 1 + rng() % 300;
    for (size_t i = 0; i < count; ++i) {
      const uint64_t kind = rng() % 10;
      shared.numels.push_back(kind == 0   ? 0
                              : kind == 1 ? uint64_t{1} << (20 + rng() % 20)
                                          : 1 + rng() % 100000);
    }
    if (round % 4 == 0) {
      // 9k sizes a and k sizes b: b sits exactly at mean + 3 std in real
      // arithmetic, so numpy's rounding alone decides it (the band's
      // fallback); all equal sizes (std 0) are at the limit too.
      const uint64_t a = 1 + rng() % 100000;
      const uint64_t b = round % 8 == 0 ? a : a + 1 + rng() % 100000;
      const size_t k = 1 + rng() % 30;
      shared.numels.assign(9 * k, a);
      shared.numels.insert(shared.numels.begin() + rng() % (9 * k), k, b);
    }
    const size_t n = shared.numels.size();
    const uint32_t degree = 1 + rng() % 8;
    if (rng() % 4 != 0) shared.dp_degrees = {degree};
    shared.search_range_m = static_cast<double>(rng() % 8) / 4;
    shared.search_interval = 1 + rng() % 4096;
    shared.min_chunk_size_m = static_cast<double>(rng() % 5) / 8;
    shared.filter_exlarge_params = rng() % 3 != 0;
    SearchRequest listed = shared;
    listed.dp_degrees.assign(n, shared.dp_degrees.empty() ? 1 : degree);
    if (n == 1) listed.dp_degrees.push_back(degree);  // keep it a list
    if (n == 1) continue;  // one entry is the shared form itself
    const absl::StatusOr<SearchPlan> fast = BuildSearchPlan(shared);
    const absl::StatusOr<SearchPlan> general = BuildSearchPlan(listed);
    ASSERT_EQ(fast.ok(), general.ok()) << "round " << round;
    if (!fast.ok()) continue;
    ASSERT_EQ(fast->groups.size(), general->groups.size());
    for (size_t g = 0; g < fast->groups.size(); ++g) {
      EXPECT_EQ(fast->groups[g].dp_degree, general->groups[g].dp_degree);
      EXPECT_EQ(fast->groups[g].total, general->groups[g].total);
      EXPECT_EQ(fast->groups[g].keep_gathered,
                general->groups[g].keep_gathered);
    }
    EXPECT_EQ(fast->total_param_size, general->total_param_size);
    EXPECT_EQ(fast->degree_lcm, general->degree_lcm);
    EXPECT_EQ(fast->sweep.sizes, general->sweep.sizes) << "round " << round;
    EXPECT_EQ(fast->sweep.group_begin, general->sweep.group_begin);
    EXPECT_EQ(fast->sweep.swept_total, general->sweep.swept_total);
    EXPECT_EQ(fast->sweep.grid.start, general->sweep.grid.start);
    EXPECT_EQ(fast->sweep.grid.interval, general->sweep.grid.interval);
    EXPECT_EQ(fast->sweep.grid.count, general->sweep.grid.count);
  }
}

// SweepWorkBound bounds the plan's work from the fields alone.
TEST(SearchPlan, SweepWorkBoundBoundsTheSweepWork) {
  SearchRequest r = Small();
  r.search_range_m = 1;
  r.search_interval = 1024;
  const absl::StatusOr<SearchPlan> plan = BuildSearchPlan(r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(SweepWorkBound(r), (uint64_t{1} << 20) / 1024 * 4 + 4);
  EXPECT_GE(SweepWorkBound(r), plan->sweep.SweepWork());
  r.search_interval = 0;
  EXPECT_EQ(SweepWorkBound(r), UINT64_MAX);
  r.search_interval = 1;
  r.search_range_m = std::nan("");
  EXPECT_EQ(SweepWorkBound(r), UINT64_MAX);
  // 4e12 * 2^20 + 1 candidates (about 4.2e18) x 8 sizes: beyond 2^64.
  r.search_range_m = 4e12;
  r.numels.assign(8, 100);
  EXPECT_EQ(SweepWorkBound(r), UINT64_MAX);
  r.numels.assign(4, 100);
  EXPECT_EQ(SweepWorkBound(r), (uint64_t{4'000'000'000'000} << 20) * 4 + 4);
}

// GridIndexFinder answers as CandidateGrid::FirstIndexAtLeast (a division)
// on random grids, with intervals from 1 to 2^63 and values to 2^64 - 1.
TEST(GridIndexFinder, EqualsTheDivision) {
  std::mt19937_64 rng(20261203);
  for (int round = 0; round < 200000; ++round) {
    CandidateGrid grid;
    const int bits = 1 + static_cast<int>(rng() % 63);
    grid.interval = 1 + (rng() >> (64 - bits));
    grid.start = rng() % 3 == 0 ? 0 : rng() >> (rng() % 64);
    grid.count = 1 + (rng() >> (rng() % 63 + 1));
    const GridIndexFinder finder(grid);
    uint64_t value = rng() >> (rng() % 64);
    if (round % 7 == 0) value = UINT64_MAX - rng() % 4;
    if (round % 11 == 0) value = grid.start + grid.interval * (rng() % 1000);
    ASSERT_EQ(finder.FirstIndexAtLeast(value), grid.FirstIndexAtLeast(value))
        << "interval " << grid.interval << " start " << grid.start << " value "
        << value;
  }
}

}  // namespace
}  // namespace chunkplan::planner
