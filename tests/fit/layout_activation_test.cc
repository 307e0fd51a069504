// Planner::Layout with a workload: LayoutResult.activation_bytes and
// transient_bytes are the activation estimate's, worked by hand tensor by
// tensor (docs/plan.md, "Activations"), and nothing else of the layout
// moves; Frontier refuses a workload.

#include <cstdint>

#include "chunkplan/planner/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

using ::testing::HasSubstr;

PlanWorkload TinyLlamaWorkload() {
  PlanWorkload w;
  w.shape.num_layers = 2;
  w.shape.hidden_size = 8;
  w.shape.num_attention_heads = 2;
  w.shape.vocab_size = 16;
  w.shape.intermediate_size = 16;
  w.workload.micro_batch = 1;
  w.workload.sequence_length = 4;
  return w;
}

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

  // A LLaMA of L = 2, h = 8, a = 2, intermediate 16, v = 16 at b = 1,
  // s = 4 under SDPA (activation_estimate_test works it tensor by tensor):
  // 3484 held, 468 transient (the loss's two fp32 gradients, 512, the
  // second once nll_loss's targets and weight, 44, are released).
  r.workload = TinyLlamaWorkload();
  const absl::StatusOr<LayoutResult> with = planner.Layout(r);
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ(with->activation_bytes, 3484u);
  EXPECT_EQ(with->transient_bytes, 468u);
  // Not in the rank's bytes: the layout is the same as without.
  EXPECT_EQ(with->most_loaded_rank.device_bytes,
            without->most_loaded_rank.device_bytes);
  EXPECT_EQ(with->gathered_chunk_bytes, without->gathered_chunk_bytes);

  // Checkpointing: 2N per layer, the positions instead of cos and sin
  // (held), one layer re-run (and its output held): 956 held, 1284
  // transient.
  r.workload->workload.activation_checkpointing = true;
  const absl::StatusOr<LayoutResult> checkpointed = planner.Layout(r);
  ASSERT_TRUE(checkpointed.ok()) << checkpointed.status();
  EXPECT_EQ(checkpointed->activation_bytes, 956u);
  EXPECT_EQ(checkpointed->transient_bytes, 1284u);
}

TEST(LayoutActivation, TheEstimatesErrorsAreLayouts) {
  const Planner planner;
  LayoutRequest r = SmallLayout();
  r.workload = TinyLlamaWorkload();
  r.workload->workload.micro_batch = 0;
  const absl::StatusOr<LayoutResult> got = planner.Layout(r);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload.micro_batch"));
}

TEST(LayoutActivation, FrontierRefusesAWorkload) {
  const Planner planner;
  LayoutRequest r = SmallLayout();
  r.objective = Objective::kLayoutPadding;
  ASSERT_TRUE(planner.Frontier(r).ok());
  r.workload = TinyLlamaWorkload();
  const absl::StatusOr<FrontierResult> got = planner.Frontier(r);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));
}

}  // namespace
}  // namespace chunkplan::planner
