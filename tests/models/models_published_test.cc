// Every family's total against a published parameter count, read from the
// real config.json of the published model (tests/oracle/models/data, the
// files the oracle's published.py checks too). Each count's source is
// cited beside it; "KerasHub" is the `params` of the named preset in
// keras-team/keras-hub's keras_hub/src/models/<family>/<family>_presets.py
// (the KerasHub port of the same checkpoint); "HF API" is safetensors.total
// of huggingface.co/api/models/<repo> (the checkpoint's tensors).

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/models/model_description.h"

namespace chunkplan::models {
namespace {

constexpr uint64_t kNoLimit = 100'000'000;

std::string ReadData(const std::string& name) {
  std::ifstream file(std::string(CHUNKPLAN_MODEL_DATA_DIR) + "/" + name);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

struct Published {
  const char* file;
  const char* architecture;
  uint64_t total;
  const char* citation;
};

// clang-format off
const Published kPublished[] = {
  {"gpt2-xl.json", "GPT2LMHeadModel", 1'557'611'200,
   "KerasHub gpt2_extra_large_en (lm_head tied)"},
  {"gpt2-defaults.json", "GPT2LMHeadModel", 124'439'808,
   "KerasHub gpt2_base_en: GPT2Config's defaults are GPT-2 small"},
  {"bert-large-uncased.json", "BertModel", 335'141'888,
   "KerasHub bert_large_en_uncased (the backbone has the pooler)"},
  // OPT's paper (Zhang et al. 2022, arXiv:2205.01068, Table 1) publishes
  // the shape (48 layers, width 7168) and "30B"; the count is derived:
  // embed_tokens 50272*7168, embed_positions 2050*7168, final_layer_norm
  // 2*7168, 48 layers of 4*(7168^2 + 7168) + 4*7168 + (7168*28672 + 28672)
  // + (28672*7168 + 7168).
  {"opt-30b.json", "OPTForCausalLM",
   360'349'696 + 14'694'400 + 14'336 + 48 * uint64_t{616'655'872},
   "derived from the OPT paper's Table 1 shape"},
  {"llama-2-7b.json", "LlamaForCausalLM", 6'738'415'616,
   "KerasHub llama2_7b_en"},
  // The 13B and 70B checkpoints also hold each layer's rotary inv_freq
  // buffer (64 values), which is not a parameter.
  {"llama-2-13b.json", "LlamaForCausalLM", 13'015'866'880 - 40 * 64,
   "HF API meta-llama/Llama-2-13b-hf 13,015,866,880 less 40 inv_freq"},
  {"llama-2-70b.json", "LlamaForCausalLM", 68'976'653'312 - 80 * 64,
   "HF API meta-llama/Llama-2-70b-hf 68,976,653,312 less 80 inv_freq"},
  {"meta-llama-3-8b.json", "LlamaForCausalLM", 8'030'261'248,
   "KerasHub llama3_8b_en; HF API meta-llama/Llama-3.1-8B"},
  {"llama-3.2-1b.json", "LlamaForCausalLM", 1'235'814'400,
   "HF API meta-llama/Llama-3.2-1B (lm_head tied)"},
  {"llama-3.2-3b.json", "LlamaForCausalLM", 3'212'749'824,
   "HF API meta-llama/Llama-3.2-3B (lm_head tied)"},
  {"mistral-7b-v0.1.json", "MistralForCausalLM", 7'241'732'096,
   "KerasHub mistral_7b_en"},
  {"mixtral-8x7b-v0.1.json", "MixtralForCausalLM", 46'702'792'704,
   "KerasHub mixtral_8_7b_en"},
  {"qwen2.5-7b.json", "Qwen2ForCausalLM", 7'615'616'512,
   "HF API Qwen/Qwen2.5-7B; KerasHub qwen2.5_math_7b_en"},
  {"qwen2.5-0.5b.json", "Qwen2ForCausalLM", 494'032'768,
   "KerasHub qwen2.5_0.5b_en (lm_head tied)"},
  {"gemma-7b.json", "GemmaForCausalLM", 8'537'680'896,
   "KerasHub gemma_7b_en (lm_head tied)"},
  {"gemma-2b.json", "GemmaForCausalLM", 2'506'172'416,
   "KerasHub gemma_2b_en"},
  {"gemma-2-9b.json", "Gemma2ForCausalLM", 9'241'705'984,
   "KerasHub gemma2_9b_en"},
  {"gemma-2-2b.json", "Gemma2ForCausalLM", 2'614'341'888,
   "KerasHub gemma2_2b_en"},
  {"phi-3-mini-4k-instruct.json", "Phi3ForCausalLM", 3'821'079'552,
   "KerasHub phi3_mini_4k_instruct_en"},
  {"gpt-neox-20b.json", "GPTNeoXForCausalLM", 20'554'567'680,
   "EleutherAI/gpt-neox-20b model card, n_parameters"},
  // The Pythia paper publishes the non-embedding count; embed_in and
  // embed_out (untied) add 2 * 50304 * 768.
  {"pythia-160m.json", "GPTNeoXForCausalLM", 85'056'000 + 2 * 50'304 * 768,
   "Pythia paper (Biderman et al. 2023, arXiv:2304.01373) Table 1"},
  {"qwen1.5-moe-a2.7b.json", "Qwen2MoeForCausalLM", 14'315'784'192,
   "KerasHub qwen1.5_moe_2.7b_en; model card Qwen/Qwen1.5-MoE-A2.7B: 14.3B"},
  // The families of issue 43 (transformers 4.51.3 classes).
  {"qwen3-8b.json", "Qwen3ForCausalLM", 8'190'735'360,
   "KerasHub qwen3_8b_en (q/k norms, no q/k/v biases)"},
  {"qwen3-0.6b.json", "Qwen3ForCausalLM", 596'049'920,
   "KerasHub qwen3_0.6b_en (lm_head tied)"},
  {"qwen3-30b-a3b.json", "Qwen3MoeForCausalLM", 30'532'122'624,
   "KerasHub qwen3_moe_30b_a3b_en (128 experts per layer, 48 layers)"},
  {"gemma-3-1b.json", "Gemma3ForCausalLM", 999'885'952,
   "KerasHub gemma3_1b (text-only, lm_head tied)"},
  {"bloom-560m.json", "BloomForCausalLM", 559'214'592,
   "KerasHub bloom_560m_multi (lm_head tied)"},
  {"falcon-rw-1b.json", "FalconForCausalLM", 1'311'625'216,
   "KerasHub falcon_refinedweb_1b_en (sequential attention and MLP)"},
  // Derived, as OPT-30B above, where the source publishes a rounded count:
  // the arithmetic is in tests/oracle/models/published.py.
  // DeepSeek-V3: the model card's "671B" main model (its 14B multi-token
  // prediction layer is not part of the HF model).
  {"deepseek-v3.json", "DeepseekV3ForCausalLM", 671'026'404'352,
   "derived; DeepSeek-V3 model card: 671B main model weights"},
  {"deepseek-v2-lite.json", "DeepseekV2ForCausalLM", 15'706'484'224,
   "derived; DeepSeek-V2-Lite model card: 15.7B total (q_lora_rank null)"},
  {"llama-4-scout-17b-16e-text.json", "Llama4ForCausalLM", 107'769'861'120,
   "derived; Llama-4-Scout model card: 109B total with the vision model"},
  {"command-r-v01.json", "CohereForCausalLM", 34'980'831'232,
   "derived; c4ai-command-r-v01 model card: 35 billion"},
  {"falcon-7b.json", "FalconForCausalLM", 6'921'720'704,
   "derived; Falcon-7B model card: 7B (multi-query, lm_head tied)"},
  {"falcon-40b.json", "FalconForCausalLM", 41'303'293'952,
   "derived; Falcon-40B model card: 40B (new decoder architecture)"},
  {"gpt-j-6b.json", "GPTJForCausalLM", 6'050'882'784,
   "derived from the GPT-J 6B model card's shape (its n_parameters "
   "6,053,381,344 is Mesh Transformer JAX's count)"},
};
// clang-format on

class PublishedTotalTest : public testing::TestWithParam<Published> {};

TEST_P(PublishedTotalTest, TotalMatchesThePublishedCount) {
  const Published& p = GetParam();
  absl::StatusOr<ModelDescription> d =
      DescribeModel(ReadData(p.file), p.architecture, kNoLimit);
  ASSERT_TRUE(d.ok()) << p.file << ": " << d.status();
  EXPECT_EQ(d->architecture, p.architecture);
  EXPECT_EQ(d->total, p.total) << p.file << ", published: " << p.citation;
  uint64_t sum = 0;
  for (uint64_t numel : d->numels) sum += numel;
  EXPECT_EQ(sum, d->total);
  EXPECT_EQ(d->names.size(), d->numels.size());
}

INSTANTIATE_TEST_SUITE_P(Models, PublishedTotalTest,
                         testing::ValuesIn(kPublished),
                         [](const testing::TestParamInfo<Published>& info) {
                           std::string name = info.param.file;
                           name = name.substr(0, name.size() - 5);  // ".json"
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c)))
                               c = '_';
                           }
                           return name;
                         });

// The published count of `file`'s model, from kPublished.
uint64_t PublishedTotal(const std::string& file) {
  for (const Published& p : kPublished) {
    if (p.file == file) return p.total;
  }
  ADD_FAILURE() << file << " is not in kPublished";
  return 0;
}

// A config of model_type alone describes the config class's default model:
// for most families a published one (the class documents it), so the
// defaults tables are checked against published counts too. The defaults
// of OPT (OPT-125m), Qwen2, Qwen3, Qwen3-MoE, DeepSeek-V2, Gemma-3's text
// model and BLOOM (a tiny test shape) have no count published here; they
// describe.
TEST(DefaultsTest, TheConfigClassDefaultsDescribeThePublishedModel) {
  const std::pair<const char*, const char*> kDefaultModel[] = {
      {"gpt2", "gpt2-defaults.json"},
      {"llama", "llama-2-7b.json"},
      {"mistral", "mistral-7b-v0.1.json"},
      {"mixtral", "mixtral-8x7b-v0.1.json"},
      {"gemma", "gemma-7b.json"},
      {"gemma2", "gemma-2-2b.json"},
      {"phi3", "phi-3-mini-4k-instruct.json"},
      {"gpt_neox", "gpt-neox-20b.json"},
      {"qwen2_moe", "qwen1.5-moe-a2.7b.json"},
      {"deepseek_v3", "deepseek-v3.json"},
      {"llama4_text", "llama-4-scout-17b-16e-text.json"},
      {"cohere", "command-r-v01.json"},
      {"falcon", "falcon-7b.json"},
      {"gptj", "gpt-j-6b.json"}};
  for (const auto& [model_type, file] : kDefaultModel) {
    absl::StatusOr<ModelDescription> d = DescribeModel(
        absl::StrCat("{\"model_type\": \"", model_type, "\"}"), "", kNoLimit);
    ASSERT_TRUE(d.ok()) << model_type << ": " << d.status();
    EXPECT_EQ(d->total, PublishedTotal(file)) << model_type;
  }
  // BertConfig's defaults are BERT base: KerasHub bert_base_en_uncased
  // (params 109482240, the backbone with its pooler, as BertModel).
  absl::StatusOr<ModelDescription> bert =
      DescribeModel("{\"model_type\": \"bert\"}", "BertModel", kNoLimit);
  ASSERT_TRUE(bert.ok()) << bert.status();
  EXPECT_EQ(bert->total, 109'482'240u);
  for (const char* model_type : {"opt", "qwen2", "qwen3", "qwen3_moe",
                                 "deepseek_v2", "gemma3_text", "bloom"}) {
    EXPECT_TRUE(
        DescribeModel(absl::StrCat("{\"model_type\": \"", model_type, "\"}"),
                      "", kNoLimit)
            .ok())
        << model_type;
  }
}

// Every family the issue lists has a published count above.
TEST(PublishedTotalTest, EveryFamilyIsCovered) {
  std::set<std::string> covered;
  for (const Published& p : kPublished) {
    absl::StatusOr<ModelDescription> d =
        DescribeModel(ReadData(p.file), p.architecture, kNoLimit);
    ASSERT_TRUE(d.ok()) << d.status();
    covered.insert(d->model_type);
  }
  const std::vector<std::string> supported = SupportedModelTypes();
  EXPECT_EQ(std::vector<std::string>(covered.begin(), covered.end()),
            supported);
}

}  // namespace
}  // namespace chunkplan::models
