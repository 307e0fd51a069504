// Malformed and hostile configs: each refused with its precise message, the
// text's size and nesting bounded before parsing, and a model past
// max_params refused before its parameters are stored.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/models/model_description.h"
#include "server/models/param_builder.h"

namespace chunkplan::models {
namespace {

using testing::HasSubstr;

constexpr uint64_t kMaxParams = 1'000'000;  // the server's default

// The status of describing `text` (as the default class).
absl::Status Refusal(const std::string& text,
                     uint64_t max_params = kMaxParams) {
  return DescribeModel(text, "", max_params).status();
}

// `message` as INVALID_ARGUMENT.
absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(message);
}

TEST(HostileConfigTest, TextThatIsNotAJsonObject) {
  absl::Status status = Refusal("{\"model_type\": \"gpt2\"");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("config: not JSON: "));
  EXPECT_THAT(status.message(), HasSubstr("parse error"));
  EXPECT_EQ(Refusal("[1, 2]"),
            Invalid("config: expected a JSON object, got [1,2]"));
  EXPECT_EQ(Refusal("\"gpt2\""),
            Invalid("config: expected a JSON object, got \"gpt2\""));
  // Bytes that are not UTF-8 inside a string.
  EXPECT_THAT(Refusal("{\"model_type\": \"gpt\xff\"}").message(),
              HasSubstr("config: not JSON: "));
}

TEST(HostileConfigTest, TenMegabytesAreRefusedUnread) {
  std::string text = "{\"model_type\": \"gpt2\", \"x\": \"";
  text.append(10 << 20, 'a');
  text += "\"}";
  EXPECT_EQ(Refusal(text),
            Invalid(absl::StrCat("config: ", text.size(),
                                 " bytes, more than the 1048576 a "
                                 "config.json may have")));
}

TEST(HostileConfigTest, DeepNestingIsRefusedBeforeParsing) {
  // A million open brackets: refused at the 65th, no parser stack.
  EXPECT_EQ(Refusal(std::string(1'000'000, '[')),
            Invalid("config: nested more than 64 deep at byte 64"));
  std::string deep = "{\"model_type\": \"gpt2\", \"x\": ";
  const size_t at = deep.size() + 63;
  deep += std::string(64, '[') + std::string(64, ']') + "}";
  EXPECT_EQ(
      Refusal(deep),
      Invalid(absl::StrCat("config: nested more than 64 deep at byte ", at)));
  // 64 deep is fine, and brackets inside strings do not count.
  std::string fine =
      "{\"model_type\": \"gpt2\", \"x\": " + std::string(63, '[') +
      std::string(63, ']') + ", \"y\": \"" + std::string(100, '[') + "\\\"[\"}";
  EXPECT_TRUE(Refusal(fine).ok()) << Refusal(fine);
}

TEST(HostileConfigTest, ModelTypeMissingWrongOrUnknown) {
  EXPECT_EQ(Refusal("{}"),
            Invalid("config model_type: expected a string naming the model "
                    "type, got nothing"));
  EXPECT_EQ(Refusal("{\"model_type\": 5}"),
            Invalid("config model_type: expected a string naming the model "
                    "type, got 5"));
  EXPECT_EQ(Refusal("{\"model_type\": \"t5\"}"),
            Invalid("config model_type: not a supported model type; "
                    "supported: bert, bloom, cohere, deepseek_v2, "
                    "deepseek_v3, falcon, gemma, gemma2, gemma3_text, gpt2, "
                    "gpt_neox, gptj, llama, llama4_text, mistral, mixtral, "
                    "opt, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, got "
                    "\"t5\""));
}

TEST(HostileConfigTest, SupportedModelTypesAreSorted) {
  const std::vector<std::string> types = SupportedModelTypes();
  EXPECT_TRUE(std::is_sorted(types.begin(), types.end()));
  EXPECT_EQ(types.size(), 22u);
}

// A LLaMA config with `key` set to the JSON text `value`.
std::string Llama(const std::string& key, const std::string& value) {
  return absl::StrCat("{\"model_type\": \"llama\", \"", key, "\": ", value,
                      "}");
}

TEST(HostileConfigTest, SizesOfTheWrongTypeOrRange) {
  const std::string want =
      "config hidden_size: expected a positive integer below 2^64, got ";
  for (const char* value :
       {"\"4096\"", "-4096", "4096.5", "4096.0", "0", "true", "null", "[4096]",
        "18446744073709551616", "1e30"}) {
    absl::Status status = Refusal(Llama("hidden_size", value));
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_THAT(status.message(), HasSubstr(want)) << value;
  }
  EXPECT_EQ(Refusal(Llama("hidden_size", "-4096")), Invalid(want + "-4096"));
  EXPECT_EQ(Refusal(Llama("hidden_size", "4096.5")), Invalid(want + "4096.5"));
  EXPECT_EQ(Refusal(Llama("vocab_size", "null")),
            Invalid("config vocab_size: expected a positive integer below "
                    "2^64, got null"));
  EXPECT_EQ(Refusal(Llama("tie_word_embeddings", "\"yes\"")),
            Invalid("config tie_word_embeddings: expected true or false, got "
                    "\"yes\""));
  // A long value is shown cut short.
  EXPECT_EQ(Refusal(Llama("hidden_size", "\"" + std::string(1000, 'x') + "\"")),
            Invalid(want + "\"" + std::string(59, 'x') + "..."));
}

TEST(HostileConfigTest, ShapesTheClassesRefuse) {
  EXPECT_EQ(Refusal(Llama("num_attention_heads", "3")),
            Invalid("config hidden_size / num_attention_heads: 4096 is not "
                    "divisible by 3"));
  EXPECT_EQ(Refusal(Llama("num_key_value_heads", "5")),
            Invalid("config num_attention_heads / num_key_value_heads: 32 is "
                    "not divisible by 5"));
  EXPECT_EQ(Refusal("{\"model_type\": \"qwen2_moe\", \"mlp_only_layers\": "
                    "\"none\"}"),
            Invalid("config mlp_only_layers: expected a list of integers, "
                    "got \"none\""));
  EXPECT_EQ(Refusal("{\"model_type\": \"gemma\", \"head_dim\": null}"),
            Invalid("config head_dim: expected a positive integer below "
                    "2^64, got null"));
}

TEST(HostileConfigTest, SizesPast64Bits) {
  // embed_tokens alone: 2^32 * 2^32 elements.
  EXPECT_EQ(Refusal("{\"model_type\": \"llama\", \"vocab_size\": 4294967296, "
                    "\"hidden_size\": 4294967296, \"num_attention_heads\": "
                    "1}"),
            Invalid("config: parameter model.embed_tokens.weight of shape "
                    "[4294967296, 4294967296] has more than 2^64 - 1 "
                    "elements"));
  // Each tensor fits, their sum does not: wte 2^63, wpe 2^63.
  EXPECT_EQ(Refusal("{\"model_type\": \"gpt2\", \"vocab_size\": "
                    "4611686018427387904, \"n_positions\": "
                    "4611686018427387904, \"n_embd\": 2, \"n_head\": 1}"),
            Invalid("config: the model's total passes 2^64 - 1 elements at "
                    "parameter transformer.wpe.weight"));
  // A width the class derives: 3 * n_embd.
  EXPECT_EQ(Refusal("{\"model_type\": \"gpt2\", \"n_embd\": "
                    "9223372036854775808, \"n_head\": 1}"),
            Invalid("config 3 * n_embd: passes 2^64 - 1"));
}

// Numbers a double cannot hold: the parser's out_of_range error is caught
// at the JSON edge (it used to escape and end the server) and named by the
// key whose value it was, however deep; a syntax error stays "not JSON".
TEST(HostileConfigTest, NumbersBeyondADoubleNameTheirKey) {
  const std::string beyond =
      ": a number beyond the range of a double (about 1.8e308)";
  EXPECT_EQ(Refusal("{\"model_type\": \"gpt2\", \"n_layer\": 1e400}"),
            Invalid(absl::StrCat("config n_layer", beyond)));
  EXPECT_EQ(Refusal("{\"n_embd\": -1e400, \"model_type\": \"gpt2\"}"),
            Invalid(absl::StrCat("config n_embd", beyond)));
  // An integer of 500,000 digits: past 2^64, then past a double; the
  // message does not quote it.
  const std::string digits = "1" + std::string(499'999, '0');
  const absl::Status long_integer = Refusal(
      absl::StrCat("{\"model_type\": \"gpt2\", \"vocab_size\": ", digits, "}"));
  EXPECT_EQ(long_integer, Invalid(absl::StrCat("config vocab_size", beyond)));
  // Nested in an object, and in a list after a closed object.
  EXPECT_EQ(Refusal("{\"model_type\": \"llama\", \"rope_scaling\": "
                    "{\"type\": \"linear\", \"factor\": 1e999}}"),
            Invalid(absl::StrCat("config rope_scaling.factor", beyond)));
  EXPECT_EQ(Refusal("{\"layer_types\": [{\"a\": 1}, 2, 1E+400]}"),
            Invalid(absl::StrCat("config layer_types", beyond)));
  EXPECT_EQ(Refusal("1e400"), Invalid(absl::StrCat("config", beyond)));
  // A long syntax error is cut short.
  const absl::Status bad_literal =
      Refusal(absl::StrCat("{\"x\": ", std::string(100'000, 't'), "}"));
  EXPECT_THAT(bad_literal.message(), HasSubstr("config: not JSON: "));
  EXPECT_LT(bad_literal.message().size(), 300u);
}

TEST(HostileConfigTest, OptionsNotModelledAreRefusedByName) {
  EXPECT_EQ(Refusal("{\"model_type\": \"gpt2\", \"add_cross_attention\": "
                    "true}"),
            Invalid("config add_cross_attention: GPT-2 with cross attention "
                    "is not supported, got true"));
  EXPECT_EQ(Refusal("{\"model_type\": \"bert\", \"position_embedding_type\": "
                    "\"relative_key\"}"),
            Invalid("config position_embedding_type: only \"absolute\" is "
                    "supported, got \"relative_key\""));
  EXPECT_EQ(Refusal("{\"model_type\": \"bert\", \"add_cross_attention\": "
                    "true}"),
            Invalid("config add_cross_attention: BERT with cross attention "
                    "is not supported, got true"));
  EXPECT_EQ(Refusal("{\"model_type\": \"llama\", \"pruned_heads\": "
                    "{\"0\": [1]}}"),
            Invalid("config pruned_heads: not supported (it changes the "
                    "parameters), got {\"0\":[1]}"));
  EXPECT_EQ(Refusal("{\"model_type\": \"opt\", \"torchscript\": true}"),
            Invalid("config torchscript: not supported (it changes the "
                    "parameters), got true"));
  // Their falsy values change nothing.
  EXPECT_TRUE(Refusal("{\"model_type\": \"llama\", \"pruned_heads\": {}, "
                      "\"torchscript\": false}")
                  .ok());
  // Falcon's legacy n_embed (its ffn default reads hidden_size instead);
  // DeepSeek-V2's remote code builds one rank's experts past ep_size 1.
  EXPECT_EQ(Refusal("{\"model_type\": \"falcon\", \"n_embed\": 64}"),
            Invalid("config n_embed: not supported (give hidden_size), got "
                    "64"));
  EXPECT_EQ(Refusal("{\"model_type\": \"deepseek_v2\", \"ep_size\": 2}"),
            Invalid("config ep_size: only 1 is supported (the remote code "
                    "builds one rank's experts), got 2"));
  // Qwen3's attention cannot size a null head_dim (its config keeps None).
  EXPECT_EQ(Refusal("{\"model_type\": \"qwen3\", \"head_dim\": null}"),
            Invalid("config head_dim: expected a positive integer below "
                    "2^64, got null"));
}

TEST(HostileConfigTest, ArchitecturesNotSupported) {
  EXPECT_EQ(DescribeModel("{\"model_type\": \"llama\"}",
                          "LlamaForSequenceClassification", kMaxParams)
                .status(),
            Invalid("architecture: \"LlamaForSequenceClassification\" is not "
                    "supported for model_type \"llama\"; supported: "
                    "LlamaForCausalLM, LlamaModel"));
  EXPECT_EQ(Refusal("{\"model_type\": \"llama\", \"architectures\": "
                    "[\"MistralForCausalLM\"]}"),
            Invalid("config architectures[0]: \"MistralForCausalLM\" is not "
                    "supported for model_type \"llama\"; supported: "
                    "LlamaForCausalLM, LlamaModel"));
  // A caller's name is shown escaped and cut to 100 bytes: a message is
  // UTF-8 whatever the caller sent.
  EXPECT_EQ(DescribeModel("{\"model_type\": \"gpt2\"}",
                          "GPT2\xff\"" + std::string(200, 'x'), kMaxParams)
                .status(),
            Invalid("architecture: \"GPT2\\xff\\\"" + std::string(94, 'x') +
                    "\" is not supported for model_type \"gpt2\"; "
                    "supported: GPT2LMHeadModel, GPT2Model"));
  EXPECT_EQ(Refusal("{\"model_type\": \"llama\", \"architectures\": "
                    "\"LlamaModel\"}"),
            Invalid("config architectures: expected a list of class names, "
                    "got \"LlamaModel\""));
}

TEST(MaxParamsTest, ATrillionLayersAreRefusedBeforeAnyIsBuilt) {
  absl::Status status = Refusal(Llama("num_hidden_layers", "1000000000000"));
  EXPECT_EQ(status,
            absl::ResourceExhaustedError(
                "config: the model has more than 1000000 parameters "
                "(tensors), the most a request may have (--max_params): "
                "1000000000000 model.layers of at least one parameter each"));
  // The experts of one layer, likewise.
  EXPECT_EQ(Refusal("{\"model_type\": \"mixtral\", \"num_local_experts\": "
                    "1000000000000}")
                .code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(MaxParamsTest, TheLimitIsExact) {
  // GPT-2 small (GPT2Config's defaults), lm_head tied: wte, wpe, 12 blocks
  // of 12 tensors (ln_1, c_attn, c_proj, ln_2, c_fc, c_proj: weight and
  // bias each), ln_f's 2: 148 tensors.
  const std::string gpt2 = "{\"model_type\": \"gpt2\"}";
  absl::StatusOr<ModelDescription> d = DescribeModel(gpt2, "", 148);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->numels.size(), 148u);
  EXPECT_EQ(DescribeModel(gpt2, "", 147).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(ParamBuilderTest, CountingStoresNothing) {
  ParamBuilder counting(10, /*store=*/false);
  counting.In("a", [&] { counting.Add("weight", {3, 4}); });
  EXPECT_EQ(counting.count(), 1u);
  EXPECT_EQ(counting.total(), 12u);
  EXPECT_TRUE(counting.names().empty());
  EXPECT_TRUE(counting.numels().empty());
  ParamBuilder storing(10, /*store=*/true);
  storing.In("a", [&] { storing.Add("weight", {3, 4}); });
  EXPECT_EQ(storing.names(), std::vector<std::string>{"a.weight"});
  EXPECT_EQ(storing.numels(), std::vector<uint64_t>{12});
}

TEST(ParamBuilderTest, RepeatPastTheLimitRunsNoBody) {
  ParamBuilder b(10, /*store=*/true);
  b.Add("x", {1});
  int bodies = 0;
  b.Repeat("layers", 10, [&](uint64_t) { ++bodies; });
  EXPECT_EQ(bodies, 0);
  EXPECT_EQ(b.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(b.numels().size(), 1u);
}

}  // namespace
}  // namespace chunkplan::models
