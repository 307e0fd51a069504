// The Layout request's workload (proto/chunkplan/v1/chunk_search.proto):
// converted as Plan's, from the model's own config text (the expected shape
// is read off the text below, not the converter), refused without a
// decoder-only model, and activation_bytes carried back.
#include <cstdint>

#include "absl/status/status.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/proto_convert.h"

namespace chunkplan::service {
namespace {

using ::testing::HasSubstr;

// A LLaMA-style decoder: 3 layers, hidden 64, 4 heads, vocabulary 1000.
constexpr char kLlama[] = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 3,
  "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000})";

constexpr char kBert[] = R"({
  "architectures": ["BertForMaskedLM"], "model_type": "bert",
  "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
  "num_attention_heads": 4, "vocab_size": 1000})";

v1::LayoutRequest WithWorkload(const char* config) {
  v1::LayoutRequest r;
  r.mutable_search()->mutable_model()->set_hf_config_json(config);
  r.mutable_workload()->set_micro_batch(2);
  r.mutable_workload()->set_sequence_length(512);
  r.mutable_workload()->set_activation_checkpointing(true);
  return r;
}

TEST(LayoutWorkloadConvert, AModelsShapeFillsTheWorkload) {
  const absl::StatusOr<planner::LayoutRequest> got =
      FromProto(WithWorkload(kLlama));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->search.numels.size(), 1u + 3 * 9 + 2);
  ASSERT_TRUE(got->workload.has_value());
  EXPECT_EQ(got->workload->shape.num_layers, 3u);
  EXPECT_EQ(got->workload->shape.hidden_size, 64u);
  EXPECT_EQ(got->workload->shape.num_attention_heads, 4u);
  EXPECT_EQ(got->workload->shape.vocab_size, 1000u);
  EXPECT_EQ(got->workload->workload.micro_batch, 2u);
  EXPECT_EQ(got->workload->workload.sequence_length, 512u);
  EXPECT_TRUE(got->workload->workload.activation_checkpointing);
  EXPECT_FALSE(got->workload->workload.flash_attention);
  v1::LayoutRequest none = WithWorkload(kLlama);
  none.clear_workload();
  const absl::StatusOr<planner::LayoutRequest> without = FromProto(none);
  ASSERT_TRUE(without.ok()) << without.status();
  EXPECT_FALSE(without->workload.has_value());
}

TEST(LayoutWorkloadConvert, AWorkloadNeedsADecoderOnlyModel) {
  v1::LayoutRequest numels;
  numels.mutable_search()->add_numels(100);
  numels.mutable_workload()->set_micro_batch(1);
  numels.mutable_workload()->set_sequence_length(8);
  absl::StatusOr<planner::LayoutRequest> got = FromProto(numels);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));

  got = FromProto(WithWorkload(kBert));
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(got.status().message(), HasSubstr("workload: "));
  EXPECT_THAT(got.status().message(), HasSubstr("bert"));
}

TEST(LayoutWorkloadConvert, ActivationBytesTravelBack) {
  planner::LayoutResult result;
  result.activation_bytes = 101'580;
  EXPECT_EQ(ToProto(result).activation_bytes(), 101'580u);
  EXPECT_EQ(ToProto(planner::LayoutResult{}).activation_bytes(), 0u);
}

}  // namespace
}  // namespace chunkplan::service
