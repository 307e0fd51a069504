// The one verdict (plan_search/verdict.h; docs/plan.md, "The verdict"): the
// margin in bytes, fits, tight, the headroom and why_not, worked by hand; and
// Planner::Layout's verdict on a layout worked by hand (the two chunks of
// plan_search_test.cc: rank 0 holds 1400 device bytes and 600 pinned host
// bytes, the gathered chunk is 200).

#include "server/planner/plan_search/verdict.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "chunkplan/planner/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/plan_search/plan_checks.h"

namespace chunkplan::planner {
namespace {

using ::testing::StartsWith;

Cluster Device(uint64_t memory, std::optional<double> margin) {
  Cluster c;
  c.device_memory_bytes = memory;
  c.margin = margin;
  return c;
}

// The product is a double's: 0.07 x 100 is 7.000000000000001, so its
// ceiling is 8; 0.05 x 1000 rounds to 50 exactly.
TEST(VerdictTest, TheMarginInBytesIsTheDoublesCeiling) {
  EXPECT_EQ(MarginBytes(0.07, 100), 8u);
  EXPECT_EQ(MarginBytes(0.05, 1000), 50u);
  EXPECT_EQ(MarginBytes(0.05, 1001), 51u);  // 50.05
  EXPECT_EQ(MarginBytes(0.0, 1000), 0u);
  // 2^64 - 1 is 2^64 as a double; (1 - 2^-53) x 2^64 = 2^64 - 2^11.
  EXPECT_EQ(MarginBytes(std::nextafter(1.0, 0.0), UINT64_MAX),
            UINT64_MAX - 2047);
  EXPECT_EQ(MarginOf(Device(1, std::nullopt)), 0.05);
  EXPECT_EQ(DeviceBudgetBytes(Device(1000, std::nullopt)), 950u);
  EXPECT_EQ(DeviceBudgetBytes(Device(100, 0.07)), 92u);
}

TEST(VerdictTest, MarginsOutsideZeroToOneAreRefused) {
  for (const double bad : {-0.01, 1.0, 2.0, std::nan(""),
                           std::numeric_limits<double>::infinity()}) {
    const absl::Status s = CheckMargin(Device(1, bad));
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), StartsWith("cluster.margin: "));
  }
  EXPECT_TRUE(CheckMargin(Device(1, 0.0)).ok());
  EXPECT_TRUE(CheckMargin(Device(1, std::nextafter(1.0, 0.0))).ok());
  EXPECT_TRUE(CheckMargin(Device(1, std::nullopt)).ok());
}

// Device 100, margin 0.07: 8 bytes of margin, a budget of 92.
TEST(VerdictTest, FitsTightAndNot) {
  Cluster c = Device(100, 0.07);
  c.reserve_bytes = 5;
  const Verdict fits = Judge(c, 92, 0);
  EXPECT_TRUE(fits.fits);
  EXPECT_FALSE(fits.tight);
  EXPECT_EQ(fits.margin, 0.07);
  EXPECT_EQ(fits.margin_bytes, 8u);
  EXPECT_EQ(fits.headroom_bytes, 8u);
  EXPECT_EQ(fits.device_excess_bytes, 0u);
  EXPECT_EQ(fits.reserve_bytes, 5u);
  EXPECT_EQ(fits.why_not, "");

  // Within the memory, not the margin: tight, and not fits.
  const Verdict tight = Judge(c, 100, 0);
  EXPECT_FALSE(tight.fits);
  EXPECT_TRUE(tight.tight);
  EXPECT_EQ(tight.headroom_bytes, 0u);
  EXPECT_EQ(tight.device_excess_bytes, 8u);
  EXPECT_EQ(tight.why_not,
            "device: 100 > 92 by 8 (device memory 100 less margin 8)");

  const Verdict over = Judge(c, 101, 0);
  EXPECT_FALSE(over.fits);
  EXPECT_FALSE(over.tight);
  EXPECT_EQ(over.headroom_bytes, 0u);
  EXPECT_EQ(over.device_excess_bytes, 9u);

  // A host that does not hold it is never tight.
  c.host_memory_bytes = 50;
  const Verdict host = Judge(c, 93, 60);
  EXPECT_FALSE(host.fits);
  EXPECT_FALSE(host.tight);
  EXPECT_EQ(host.host_excess_bytes, 10u);
  EXPECT_EQ(host.why_not,
            "device: 93 > 92 by 1 (device memory 100 less margin 8); "
            "host: 60 > 50 by 10");
  EXPECT_EQ(Judge(c, 92, 60).why_not, "host: 60 > 50 by 10");
  EXPECT_TRUE(Judge(c, 92, 50).fits);

  // No margin: the whole memory, and why_not without the parenthesis.
  const Verdict whole = Judge(Device(100, 0.0), 101, 0);
  EXPECT_EQ(whole.why_not, "device: 101 > 100 by 1");
  EXPECT_TRUE(Judge(Device(100, 0.0), 100, 0).fits);
}

LayoutRequest TwoChunkLayout() {
  LayoutRequest r;
  r.search.numels = {100, 60};
  r.search.dp_degrees = {2};
  r.search.search_interval = 1;
  r.configs = {{2, 100, false}};
  return r;
}

// Need 1400 + 200 + reserve 100 = 1700. Device 2000, margin 0.1: margin 200,
// budget 1800: fits, headroom 300. Host per node min(8, 2) x 600 = 1200.
TEST(LayoutVerdictTest, TheLayoutJudgedAgainstItsCluster) {
  const Planner planner;
  LayoutRequest r = TwoChunkLayout();
  const absl::StatusOr<LayoutResult> none = planner.Layout(r);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->verdict.has_value());

  Cluster c = Device(2000, 0.1);
  c.reserve_bytes = 100;
  c.gpus_per_node = 8;
  r.cluster = c;
  const absl::StatusOr<LayoutResult> got = planner.Layout(r);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_TRUE(got->verdict.has_value());
  EXPECT_EQ(got->most_loaded_rank.device_bytes, 1400u);
  EXPECT_EQ(got->gathered_chunk_bytes, 200u);
  const Verdict& v = *got->verdict;
  EXPECT_EQ(v.device_need_bytes, 1700u);
  EXPECT_EQ(v.margin_bytes, 200u);
  EXPECT_EQ(v.headroom_bytes, 300u);
  EXPECT_EQ(v.host_bytes_per_node, 1200u);
  EXPECT_TRUE(v.fits);

  // 1750 of memory: margin 175, budget 1575: tight. A host of 1000 fails.
  r.cluster->device_memory_bytes = 1750;
  EXPECT_TRUE(planner.Layout(r)->verdict->tight);
  r.cluster->host_memory_bytes = 1000;
  const Verdict host = *planner.Layout(r)->verdict;
  EXPECT_FALSE(host.fits);
  EXPECT_FALSE(host.tight);
  EXPECT_EQ(host.why_not,
            "device: 1700 > 1575 by 125 (device memory 1750 less margin "
            "175); host: 1200 > 1000 by 200");
}

TEST(LayoutVerdictTest, TheClusterIsCheckedAndFrontierRefusesIt) {
  const Planner planner;
  LayoutRequest r = TwoChunkLayout();
  const auto refused = [&](const Cluster& c) {
    r.cluster = c;
    const absl::StatusOr<LayoutResult> got = planner.Layout(r);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(got.status().message());
  };
  EXPECT_THAT(refused(Device(0, std::nullopt)),
              StartsWith("cluster.device_memory_bytes"));
  Cluster host = Device(10, std::nullopt);
  host.host_memory_bytes = 5;
  EXPECT_THAT(refused(host), StartsWith("cluster.gpus_per_node"));
  Cluster sizes = Device(10, std::nullopt);
  sizes.world_sizes = {2};
  EXPECT_THAT(refused(sizes), StartsWith("cluster.world_sizes"));
  EXPECT_THAT(refused(Device(10, 1.5)), StartsWith("cluster.margin"));

  // gpus_per_node 0 without a host check: no host bytes per node.
  r.cluster = Device(10, std::nullopt);
  const absl::StatusOr<LayoutResult> got = planner.Layout(r);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->verdict->host_bytes_per_node, 0u);
  EXPECT_FALSE(got->verdict->fits);

  LayoutRequest f = TwoChunkLayout();
  f.configs.clear();
  f.cluster = Device(10, std::nullopt);
  const absl::StatusOr<FrontierResult> frontier = planner.Frontier(f);
  EXPECT_EQ(frontier.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(frontier.status().message()),
              StartsWith("cluster: "));
}

}  // namespace
}  // namespace chunkplan::planner
