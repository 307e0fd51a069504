// Plan's answer in nodes (docs/plan.md, "Whole nodes"): the nodes of an
// option, ceil(world size / GPUs per node), the world sizes of whole nodes,
// their checks, and the first fitting option on the fewest nodes. Expected
// values are worked from the rule in the comments, and the plan on the
// hand-written layout of plan_search_test.cc (two chunks of 100 holding 100
// and 60 elements, GeminiPlugin's defaults), not taken from the code.

#include "server/planner/plan_search/plan_nodes.h"

#include <cstdint>
#include <string>
#include <vector>

#include "chunkplan/planner/cluster_checks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/plan_search/plan_search.h"

namespace chunkplan::planner {
namespace {

using ::testing::HasSubstr;

TEST(PlanNodesTest, NodesRoundUp) {
  EXPECT_EQ(NodesOf(1, 8), 1u);
  EXPECT_EQ(NodesOf(8, 8), 1u);
  EXPECT_EQ(NodesOf(9, 8), 2u);
  EXPECT_EQ(NodesOf(16, 8), 2u);
  EXPECT_EQ(NodesOf(17, 8), 3u);
  EXPECT_EQ(NodesOf(7, 3), 3u);
  EXPECT_EQ(NodesOf(5, 1), 5u);
  EXPECT_EQ(NodesOf(4, 16), 1u);
  // (2^32 - 1) / 2 = 2^31 - 1/2: 2^31 nodes; no overflow at the top.
  EXPECT_EQ(NodesOf(UINT32_MAX, 2), uint32_t{1} << 31);
  EXPECT_EQ(NodesOf(UINT32_MAX, UINT32_MAX), 1u);
}

Cluster WholeNodes(uint32_t gpus_per_node, uint32_t max_nodes) {
  Cluster c;
  c.device_memory_bytes = 1000;
  c.gpus_per_node = gpus_per_node;
  c.whole_nodes = true;
  c.max_nodes = max_nodes;
  return c;
}

TEST(PlanNodesTest, WholeNodesAreEveryMultipleUpToTheBound) {
  EXPECT_EQ(PlanWorldSizes(WholeNodes(8, 4)),
            (std::vector<uint32_t>{8, 16, 24, 32}));
  EXPECT_EQ(PlanWorldSizes(WholeNodes(3, 1)), (std::vector<uint32_t>{3}));
  Cluster listed;
  listed.world_sizes = {16, 4, 9};
  EXPECT_EQ(PlanWorldSizes(listed), (std::vector<uint32_t>{16, 4, 9}));
}

void ExpectRefused(const Cluster& c, const char* field) {
  const absl::Status s = CheckCluster(c);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << field;
  EXPECT_THAT(std::string(s.message()), ::testing::StartsWith(field));
}

TEST(PlanNodesTest, TheChecksOfWholeNodes) {
  EXPECT_TRUE(CheckCluster(WholeNodes(8, 1)).ok());
  EXPECT_TRUE(CheckCluster(WholeNodes(8, 64)).ok());
  Cluster c = WholeNodes(8, 2);
  c.world_sizes = {8};
  ExpectRefused(c, "cluster.world_sizes:");
  ExpectRefused(WholeNodes(8, 0), "cluster.max_nodes:");
  ExpectRefused(WholeNodes(8, 65), "cluster.max_nodes:");
  // 2 nodes of 2^31 GPUs: a world size of 2^32. 2^31 - 1 GPUs: 2^32 - 2.
  ExpectRefused(WholeNodes(uint32_t{1} << 31, 2), "cluster.max_nodes:");
  EXPECT_TRUE(CheckCluster(WholeNodes((uint32_t{1} << 31) - 1, 2)).ok());
  ExpectRefused(WholeNodes(0, 2), "cluster.gpus_per_node:");
  c = WholeNodes(8, 2);
  c.margin = 1.0;
  ExpectRefused(c, "cluster.margin:");
  c = WholeNodes(8, 2);
  c.whole_nodes = false;
  c.world_sizes = {8};
  ExpectRefused(c, "cluster.max_nodes:");
  // Layout takes neither.
  Cluster layout;
  layout.device_memory_bytes = 1000;
  layout.whole_nodes = true;
  EXPECT_THAT(std::string(CheckLayoutCluster(layout).message()),
              ::testing::StartsWith("cluster.whole_nodes:"));
  layout.whole_nodes = false;
  layout.max_nodes = 2;
  EXPECT_THAT(std::string(CheckLayoutCluster(layout).message()),
              ::testing::StartsWith("cluster.max_nodes:"));
}

// Every source at every world size P answers two chunks of 100 holding 100
// and 60 elements, one parameter each.
absl::StatusOr<LayoutResult> TwoChunks(const LayoutRequest& l) {
  const uint32_t p = l.search.dp_degrees.at(0);
  LayoutResult r;
  r.search = SearchResult{};
  r.search->configs = {{p, 100, false}};
  GroupLayout g{{p, 100, false}, {}, 0};
  g.chunks.push_back({100, 100, 0, 1});
  g.chunks.push_back({100, 60, 1, 1});
  g.padding = 40;
  r.layout_padding = 40;
  r.groups = {g};
  return r;
}

PlanRequest Request(Cluster cluster) {
  PlanRequest r;
  r.search.numels = {100, 60};
  r.search.search_interval = 1;
  r.cluster = std::move(cluster);
  r.cluster.reserve_bytes = 100;
  r.cluster.margin = 0.0;  // the needs below against the whole memory
  r.max_options = 100;
  return r;
}

// Two GPUs a node, host memory 1000 a node, device 1000, up to 3 nodes:
// world sizes 2, 4, 6. At P = 2 rank 0 holds shards of 50 (50 real of
// each chunk): nothing moved 2*100 + 4*100 + 8*100 = 1400, + gathered 200
// + reserve 100 = 1700 > 1000; one chunk's optimizer offloaded frees 600:
// 1100 > 1000; both: 500, but the host then holds pinned 6*100 + 8*100 =
// 1400 a rank, 2800 a node > 1000 (auto too). At P = 4 shards of 25 (25
// real of each): 2*50 + 4*50 + 8*50 = 700, + 300 = 1000 <= 1000, pinned
// 6*50 = 300 a rank, 600 a node: the first option that fits is P = 4 on
// 2 nodes, nothing moved.
TEST(PlanNodesTest, TheFirstFitIsTheFewestNodes) {
  Cluster c = WholeNodes(2, 3);
  c.host_memory_bytes = 1000;
  auto got = PlanSearch(Request(c), TwoChunks, {});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_FALSE(got->options.empty());
  const PlanOption& first = got->options[0];
  EXPECT_TRUE(first.verdict.fits) << first.verdict.why_not;
  EXPECT_EQ(first.world_size, 4u);
  EXPECT_EQ(first.nodes, 2u);
  EXPECT_EQ(first.placement, PlanPlacement::kNothingMoved);
  EXPECT_EQ(first.verdict.device_need_bytes, 1000u);
  EXPECT_EQ(first.verdict.host_bytes_per_node, 600u);
  for (const PlanOption& o : got->options) {
    EXPECT_EQ(o.nodes * 2, o.world_size);
    if (o.world_size == 2) EXPECT_FALSE(o.verdict.fits);
  }

  // The same plan as world sizes listed 2, 4, 6, option for option.
  Cluster listed = c;
  listed.whole_nodes = false;
  listed.max_nodes = 0;
  listed.world_sizes = {2, 4, 6};
  auto same = PlanSearch(Request(listed), TwoChunks, {});
  ASSERT_TRUE(same.ok()) << same.status();
  ASSERT_EQ(same->options.size(), got->options.size());
  EXPECT_EQ(same->options_considered, got->options_considered);
  for (size_t i = 0; i < got->options.size(); ++i) {
    EXPECT_EQ(same->options[i].world_size, got->options[i].world_size);
    EXPECT_EQ(same->options[i].nodes, got->options[i].nodes);
    EXPECT_EQ(same->options[i].verdict, got->options[i].verdict);
  }
}

// Listed world sizes that are not whole nodes: 3 GPUs a node.
TEST(PlanNodesTest, ListedWorldSizesNameTheirNodes) {
  Cluster c;
  c.device_memory_bytes = uint64_t{1} << 40;
  c.gpus_per_node = 3;
  c.world_sizes = {7, 1, 3, 4};
  auto got = PlanSearch(Request(c), TwoChunks, {});
  ASSERT_TRUE(got.ok()) << got.status();
  for (const PlanOption& o : got->options) {
    const uint32_t expected = o.world_size == 7 ? 3 : o.world_size == 4 ? 2 : 1;
    EXPECT_EQ(o.nodes, expected) << o.world_size;
  }
}

TEST(PlanNodesTest, WholeNodesAreRefusedBeforeAnyLayout) {
  Cluster c = WholeNodes(8, 65);
  const auto never = [](const LayoutRequest&) -> absl::StatusOr<LayoutResult> {
    ADD_FAILURE() << "laid out a refused request";
    return absl::InternalError("unreachable");
  };
  auto got = PlanSearch(Request(c), never, {});
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("cluster.max_nodes: 65"));
}

}  // namespace
}  // namespace chunkplan::planner
