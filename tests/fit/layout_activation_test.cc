// Planner::Layout with a workload: LayoutResult.activation_bytes is the
// activation estimate, worked by hand from the formula (docs/plan.md;
// Korthikanti et al. 2022, Table 2 and Sec. 4), and nothing else of the
// layout moves; Frontier refuses a workload.

#include <cstdint>

#include "chunkplan/planner/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

using ::testing::HasSubstr;

LayoutRequest SmallLayout() {
  LayoutRequest r;
  r.search.numels = {70001, 3, 1023, 65536, 77777};
  r.search.dp_degrees = {2};
  r.search.search_range_m = 0.25;
  r.search.search_interval = 1024;
  r.search.min_chunk_size_m = 0;
  return r;
}

TEST(LayoutActivation, AWorkloadGivesTheHandWorkedEstimate) {
  const Planner planner;
  LayoutRequest r = SmallLayout();
  const absl::StatusOr<LayoutResult> without = planner.Layout(r);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_EQ(without->activation_bytes, 0u);

  // L = 13, h = 7, a = 11, v = 17; b = 3, s = 5. sbh = 105; per layer
  // 34sbh + 5as^2b = 3570 + 4125 = 7695; outside the layers sbh + 2sbh +
  // 2sbh + 4sbv = 525 + 1020: 13 * 7695 + 1545 = 101,580.
  r.workload = PlanWorkload{{13, 7, 11, 17}, {3, 5, false, false}};
  const absl::StatusOr<LayoutResult> with = planner.Layout(r);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->activation_bytes, 101'580u);
  // Not in the rank's bytes: the layout is the same as without.
  EXPECT_EQ(with->most_loaded_rank.device_bytes,
            without->most_loaded_rank.device_bytes);
  EXPECT_EQ(with->gathered_chunk_bytes, without->gathered_chunk_bytes);

  // Full recomputation: 2sbh per layer, 13 * 210 + 1545 = 4,275.
  r.workload->workload.activation_checkpointing = true;
  const absl::StatusOr<LayoutResult> checkpointed = planner.Layout(r);
  ASSERT_TRUE(checkpointed.ok()) << checkpointed.status();
  EXPECT_EQ(checkpointed->activation_bytes, 4'275u);
}

TEST(LayoutActivation, TheEstimatesErrorsAreLayouts) {
  const Planner planner;
  LayoutRequest r = SmallLayout();
  r.workload = PlanWorkload{{13, 7, 11, 17}, {0, 5, false, false}};
  const absl::StatusOr<LayoutResult> got = planner.Layout(r);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload.micro_batch"));
}

TEST(LayoutActivation, FrontierRefusesAWorkload) {
  const Planner planner;
  LayoutRequest r = SmallLayout();
  r.objective = Objective::kLayoutPadding;
  ASSERT_TRUE(planner.Frontier(r).ok());
  r.workload = PlanWorkload{{13, 7, 11, 17}, {3, 5, false, false}};
  const absl::StatusOr<FrontierResult> got = planner.Frontier(r);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));
}

}  // namespace
}  // namespace chunkplan::planner
