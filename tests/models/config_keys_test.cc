// Every key of a config accounted for (issue 43, item 2): the rule that
// warns of an ignored key that looks like a known one, the published
// configs (none warns: their ignored keys are real options that change no
// parameter), and Qwen2.5-7B with a misspelled num_hidden_layers.

#include "server/models/config_keys.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/models/model_description.h"

namespace chunkplan::models {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string DataFile(const std::string& name) {
  std::ifstream file(std::string(CHUNKPLAN_MODEL_DATA_DIR) + "/" + name);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(LooksLikeTest, EditDistanceAndPrefix) {
  EXPECT_TRUE(LooksLike("num_hidden_layer", "num_hidden_layers"));
  EXPECT_TRUE(LooksLike("num_hiden_layers", "num_hidden_layers"));
  EXPECT_TRUE(LooksLike("num_hidden_lyaers", "num_hidden_layers"));
  EXPECT_TRUE(LooksLike("hidden_sise", "hidden_size"));
  EXPECT_TRUE(LooksLike("num_hidden", "num_hidden_layers"));  // a prefix
  EXPECT_TRUE(LooksLike("n_layers", "n_layer"));
  EXPECT_FALSE(LooksLike("num_hidden_layers", "num_hidden_layers"));
  EXPECT_FALSE(LooksLike("num", "num_hidden_layers"));  // a short prefix
  EXPECT_FALSE(LooksLike("rope_theta", "rope_scaling"));
  EXPECT_FALSE(LooksLike("n_head", "n_embd"));
  // Under 8 characters one edit only.
  EXPECT_FALSE(LooksLike("n_hxxd", "n_head"));
  EXPECT_TRUE(LooksLike("n_hxad", "n_head"));
}

TEST(AccountForKeysTest, EachKeyInOneListAndTheWarningNamesBoth) {
  const nlohmann::json config = nlohmann::json::parse(
      R"({"model_type": "llama", "hidden_size": 8, "num_hidden_layer": 2,
          "torch_dtype": "bfloat16", "rope_thetaa": 1, "sliding_window": 4})");
  const nlohmann::json defaults =
      nlohmann::json::parse(R"({"num_hidden_layers": 32, "hidden_size": 4})");
  const ConfigKeys keys = AccountForKeys(
      config, {"model_type", "hidden_size", "num_hidden_layers"}, defaults);
  EXPECT_THAT(keys.read, ElementsAre("hidden_size", "model_type"));
  EXPECT_THAT(keys.ignored,
              ElementsAre("num_hidden_layer", "rope_thetaa", "sliding_window"));
  EXPECT_THAT(keys.harmless, ElementsAre("torch_dtype"));
  ASSERT_EQ(keys.warnings.size(), 1u);
  EXPECT_EQ(keys.warnings[0],
            "config key \"num_hidden_layer\" was ignored; did you mean "
            "\"num_hidden_layers\"? (\"num_hidden_layers\" took its "
            "default, 32)");
}

TEST(ConfigKeysTest, NoPublishedConfigWarns) {
  for (const char* name : {"bert-large-uncased.json",
                           "bloom-560m.json",
                           "command-r-v01.json",
                           "deepseek-v2-lite.json",
                           "deepseek-v3.json",
                           "falcon-40b.json",
                           "falcon-7b.json",
                           "falcon-rw-1b.json",
                           "gemma-2-9b.json",
                           "gemma-3-1b.json",
                           "gpt-j-6b.json",
                           "gpt-neox-20b.json",
                           "gpt2-xl.json",
                           "llama-2-70b.json",
                           "llama-3.2-1b.json",
                           "llama-4-scout-17b-16e-text.json",
                           "meta-llama-3-8b.json",
                           "mistral-7b-v0.1.json",
                           "mixtral-8x7b-v0.1.json",
                           "opt-30b.json",
                           "phi-3-mini-4k-instruct.json",
                           "qwen1.5-moe-a2.7b.json",
                           "qwen2.5-7b.json",
                           "qwen3-30b-a3b.json",
                           "qwen3-8b.json"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<ModelDescription> d =
        DescribeModel(DataFile(name), "", 10'000'000);
    ASSERT_TRUE(d.ok()) << d.status();
    EXPECT_THAT(d->config_keys.warnings, IsEmpty());
    EXPECT_FALSE(d->config_keys.read.empty());
  }
}

TEST(ConfigKeysTest, AMisspelledLayerCountWarnsNamingBoth) {
  nlohmann::json config = nlohmann::json::parse(DataFile("qwen2.5-7b.json"));
  config["num_hidden_layer"] = config["num_hidden_layers"];
  config.erase("num_hidden_layers");
  absl::StatusOr<ModelDescription> d =
      DescribeModel(config.dump(), "", 10'000'000);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_EQ(d->config_keys.warnings.size(), 1u);
  EXPECT_THAT(d->config_keys.warnings[0],
              HasSubstr("\"num_hidden_layer\" was ignored; did you mean "
                        "\"num_hidden_layers\"?"));
  EXPECT_THAT(d->config_keys.ignored, ::testing::Contains("num_hidden_layer"));
}

}  // namespace
}  // namespace chunkplan::models
