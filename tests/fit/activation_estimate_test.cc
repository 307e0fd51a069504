// EstimateActivationBytes against values worked by hand from Korthikanti et
// al. 2022 (arXiv 2205.05198): Table 2 per layer, sbh(34 + 5as/h) =
// 34sbh + 5as^2b without recomputation and 2sbh with full recomputation,
// 34sbh under flash attention; outside the layers at p = t = 1: sbh
// (embedding dropout mask) + 2sbh (last layer norm) + 2sbh (output layer
// input) + 4sbv (fp32 logits). Each expectation is the arithmetic itself.

#include "chunkplan/planner/activation_estimate.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace chunkplan::planner {
namespace {

using ::testing::HasSubstr;

// LLaMA-2 7B: L = 32, h = 4096, a = 32 (no GQA), v = 32000.
constexpr TransformerShape kLlama2_7b{32, 4096, 32, 32000};

ActivationWorkload Work(uint32_t b, uint32_t s, bool checkpointing,
                        bool flash) {
  return ActivationWorkload{b, s, checkpointing, flash};
}

// The four parts outside the layers, s = 4096, b = 1, h = 4096, v = 32000.
void ExpectLlamaOutside(const ActivationBytes& got) {
  EXPECT_EQ(got.embedding_dropout_bytes, 4096ull * 1 * 4096);  // sbh
  EXPECT_EQ(got.final_norm_bytes, 2ull * 4096 * 1 * 4096);     // 2sbh
  EXPECT_EQ(got.output_input_bytes, 2ull * 4096 * 1 * 4096);   // 2sbh
  EXPECT_EQ(got.logits_bytes, 4ull * 4096 * 1 * 32000);        // 4sbv
}

// LoRA r = 8 on q_proj and v_proj of every layer (64 modules, in_features
// 4096 each) and on lm_head (in 4096): per module 2sbr, and with dropout
// 3sb x in (docs/lora.md); s = 4096, b = 1.
TransformerShape Llama2_7bWithLora(bool dropout) {
  TransformerShape shape = kLlama2_7b;
  shape.adapters = {.rank = 8,
                    .dropout = dropout,
                    .layer_modules = 64,
                    .layer_in_features = 64 * 4096,
                    .other_modules = 1,
                    .other_in_features = 4096};
  return shape;
}

TEST(ActivationEstimateTest, LoraAdaptersWithoutDropout) {
  auto got = EstimateActivationBytes(Llama2_7bWithLora(false),
                                     Work(1, 4096, false, true));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->adapter_bytes, 65ull * 2 * 4096 * 1 * 8);  // 65 x 2sbr
  EXPECT_EQ(got->total_bytes, 18'861'785'088ull + 4'259'840);
}

TEST(ActivationEstimateTest, LoraAdaptersWithDropout) {
  auto got = EstimateActivationBytes(Llama2_7bWithLora(true),
                                     Work(1, 4096, false, true));
  ASSERT_TRUE(got.ok()) << got.status();
  // 65 x 2sbr + 3sb x (64 x 4096 + 4096).
  EXPECT_EQ(got->adapter_bytes,
            65ull * 2 * 4096 * 8 + 3ull * 4096 * (65 * 4096));
}

TEST(ActivationEstimateTest, RecomputedLayersKeepNoAdapterTensors) {
  auto got = EstimateActivationBytes(Llama2_7bWithLora(true),
                                     Work(1, 4096, true, true));
  ASSERT_TRUE(got.ok()) << got.status();
  // Only lm_head's adapter, outside the layers: 2sbr + 3sb x 4096.
  EXPECT_EQ(got->adapter_bytes, 2ull * 4096 * 8 + 3ull * 4096 * 4096);
}

TEST(ActivationEstimateTest, Llama2_7bAt4096NoRecomputation) {
  auto got = EstimateActivationBytes(kLlama2_7b, Work(1, 4096, false, false));
  ASSERT_TRUE(got.ok()) << got.status();
  // 34sbh + 5as^2b = 570'425'344 + 2'684'354'560.
  EXPECT_EQ(got->per_layer_bytes,
            34ull * 4096 * 1 * 4096 + 5ull * 32 * 4096 * 4096 * 1);
  EXPECT_EQ(got->per_layer_bytes, 3'254'779'904ull);
  EXPECT_EQ(got->layers_bytes, 32ull * 3'254'779'904);
  ExpectLlamaOutside(*got);
  // 104'152'956'928 + 5 * 16'777'216 + 524'288'000 (97.57 GiB).
  EXPECT_EQ(got->total_bytes, 104'761'131'008ull);
}

TEST(ActivationEstimateTest, Llama2_7bAt4096FlashAttention) {
  auto got = EstimateActivationBytes(kLlama2_7b, Work(1, 4096, false, true));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->per_layer_bytes, 34ull * 4096 * 1 * 4096);  // 570'425'344
  EXPECT_EQ(got->layers_bytes, 32ull * 570'425'344);
  ExpectLlamaOutside(*got);
  // 18'253'611'008 + 83'886'080 + 524'288'000 (17.57 GiB).
  EXPECT_EQ(got->total_bytes, 18'861'785'088ull);
}

TEST(ActivationEstimateTest, Llama2_7bAt4096FullRecomputation) {
  for (bool flash : {false, true}) {
    auto got = EstimateActivationBytes(kLlama2_7b, Work(1, 4096, true, flash));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->per_layer_bytes, 2ull * 4096 * 1 * 4096);  // 33'554'432
    EXPECT_EQ(got->layers_bytes, 32ull * 33'554'432);
    ExpectLlamaOutside(*got);
    // 1'073'741'824 + 83'886'080 + 524'288'000 (1.57 GiB).
    EXPECT_EQ(got->total_bytes, 1'681'915'904ull);
  }
}

TEST(ActivationEstimateTest, Gpt3At2048AsThePaperWorksIt) {
  // GPT-3 175B as in the paper's experiments: a = 96, h = 12288, L = 96,
  // s = 2048, b = 1, where 5as/h = 5 * 96 * 2048 / 12288 = 80; v = 50257
  // (GPT-2's tokenizer).
  const TransformerShape gpt3{96, 12288, 96, 50257};
  auto got = EstimateActivationBytes(gpt3, Work(1, 2048, false, false));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->per_layer_bytes, 2048ull * 1 * 12288 * (34 + 80));
  EXPECT_EQ(got->layers_bytes, 96ull * 2'868'903'936);
  EXPECT_EQ(got->total_bytes,
            96ull * 2'868'903'936 + 5ull * 2048 * 12288 + 4ull * 2048 * 50257);
  // Flash attention keeps 34 of the 114: 80 / 114 (70%) of a layer is
  // attention scores.
  auto flash = EstimateActivationBytes(gpt3, Work(1, 2048, false, true));
  ASSERT_TRUE(flash.ok()) << flash.status();
  EXPECT_EQ(flash->per_layer_bytes * 114, got->per_layer_bytes * 34);
}

TEST(ActivationEstimateTest, MicroBatchScalesEveryPart) {
  // b = 3, s = 5, h = 7, a = 11, L = 13, v = 17, by hand:
  // sbh = 105; 34 * 105 + 5 * 11 * 25 * 3 = 3570 + 4125 = 7695.
  auto got = EstimateActivationBytes({13, 7, 11, 17}, Work(3, 5, false, false));
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->per_layer_bytes, 7695u);
  // 13 * 7695 + 5 * 105 + 4 * 5 * 3 * 17 = 100'035 + 525 + 1020.
  EXPECT_EQ(got->total_bytes, 101'580u);
}

TEST(ActivationEstimateTest, RefusesZeroSizesNamingTheField) {
  const struct {
    TransformerShape shape;
    ActivationWorkload work;
    const char* field;
  } cases[] = {
      {kLlama2_7b, Work(0, 4096, false, false), "workload.micro_batch"},
      {kLlama2_7b, Work(1, 0, true, true), "workload.sequence_length"},
      {{0, 4096, 32, 32000}, Work(1, 1, false, false), "shape.num_layers"},
      {{32, 0, 32, 32000}, Work(1, 1, false, false), "shape.hidden_size"},
      {{32, 4096, 0, 32000},
       Work(1, 1, true, false),
       "shape.num_attention_heads"},
      {{32, 4096, 32, 0}, Work(1, 1, false, false), "shape.vocab_size"},
  };
  for (const auto& c : cases) {
    auto got = EstimateActivationBytes(c.shape, c.work);
    ASSERT_FALSE(got.ok()) << c.field;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(got.status().message(), HasSubstr(c.field));
  }
}

// The part named when a count passes 2^64-1 bytes.
void ExpectOverflow(const TransformerShape& shape,
                    const ActivationWorkload& work, const char* part) {
  auto got = EstimateActivationBytes(shape, work);
  ASSERT_FALSE(got.ok()) << part << " gave " << got->total_bytes;
  EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(),
            std::string("activations.") + part + " exceeds 2^64-1 bytes");
}

TEST(ActivationEstimateTest, RefusesEachPartPast64Bits) {
  // 34sbh with h = 2^60: 34 * 2^60 > 2^64.
  ExpectOverflow({1, 1ull << 60, 1, 1}, Work(1, 1, false, true),
                 "per_layer_bytes");
  // 2^40 layers of 3'254'779'904 bytes.
  ExpectOverflow({1ull << 40, 4096, 32, 32000}, Work(1, 4096, false, false),
                 "layers_bytes");
  // 4sbv = 4 * 2^62.
  ExpectOverflow({1, 1, 1, 1ull << 62}, Work(1, 1, true, false),
                 "logits_bytes");
  // Every part fits: (2^63 - 2^41) + 2^40 + 2^41 + 2^41 + 2^63 does not.
  ExpectOverflow({(1ull << 22) - 1, 1ull << 40, 1, 1ull << 61},
                 Work(1, 1, true, false), "total_bytes");
}

TEST(ActivationEstimateTest, Refuses128BitWrapInsteadOfAnswering) {
  // 5as^2b = 5 * 2^63 * 2^62 * 8 = 5 * 2^128: a 128-bit product would wrap
  // to 0 and leave 34sbh = 34 * 2^34 looking like an answer.
  ExpectOverflow({1, 1, 1ull << 63, 1}, Work(8, 1u << 31, false, false),
                 "per_layer_bytes");
}

}  // namespace
}  // namespace chunkplan::planner
