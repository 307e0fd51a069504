// chunkplan.v1.ChunkSearch with a model named by its Hugging Face config:
// Describe, and Search/Layout/Frontier with `model`, through a real gRPC
// server in process. The expected parameters come from the layer shapes in
// testing/model_shapes.h (written from transformers' classes, apart from
// server/models); the expected answers are the service's own answers to
// those parameters sent as numels.

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/request_intake.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::testing {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

// ColossalAI's GPT-2 test model (tests/python/data/hf_configs/
// colossalai-gpt2-test.json): tie_word_embeddings defaults to true.
constexpr char kGpt2Config[] = R"({
  "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
  "n_embd": 128, "n_head": 4, "n_layer": 2, "n_positions": 1024,
  "vocab_size": 50258})";

// meta-llama/Llama-2-70b-hf's config.json, as committed.
std::string Llama70bConfig() {
  std::ifstream in(CHUNKPLAN_HF_CONFIG_DIR "/llama-2-70b.json");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << "llama-2-70b.json not found";
  return text.str();
}

v1::ModelConfig Config(const std::string& json) {
  v1::ModelConfig config;
  config.set_hf_config_json(json);
  return config;
}

grpc::ClientContext* WithDeadline(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + kPatience);
  return context;
}

class ModelServiceTest : public ServiceTest {
 protected:
  grpc::Status Describe(const v1::ModelConfig& config,
                        v1::ModelDescription* out) {
    grpc::ClientContext context;
    return stub_->Describe(WithDeadline(&context), config, out);
  }
  grpc::Status Layout(const v1::LayoutRequest& request,
                      v1::LayoutResponse* out) {
    grpc::ClientContext context;
    return stub_->Layout(WithDeadline(&context), request, out);
  }
  grpc::Status Frontier(const v1::LayoutRequest& request,
                        v1::FrontierResponse* out) {
    grpc::ClientContext context;
    return stub_->Frontier(WithDeadline(&context), request, out);
  }
};

// The GeminiPlugin-like search of a model: range 32, one dp degree.
v1::ChunkSearchRequest ModelSearch(const std::string& json, uint32_t dp) {
  v1::ChunkSearchRequest request;
  *request.mutable_model() = Config(json);
  request.add_dp_degrees(dp);
  request.set_search_range_m(32);
  return request;
}

// The same search with `numels` in place of the model and `interval`.
v1::ChunkSearchRequest AsNumels(v1::ChunkSearchRequest request,
                                const std::vector<uint64_t>& numels,
                                uint64_t interval) {
  request.clear_model();
  for (const uint64_t n : numels) request.add_numels(n);
  request.set_search_interval(interval);
  return request;
}

// Drops the fields that vary from call to call (time), and the model its
// report names (a model's answer names it, its numels' do not).
template <typename Message>
std::string Stable(Message message) {
  message.mutable_model_report()->clear_model_type();
  message.mutable_model_report()->clear_architecture();
  if constexpr (std::is_same_v<Message, v1::ChunkSearchResponse>) {
    message.set_search_nanos(0);
  } else if constexpr (std::is_same_v<Message, v1::LayoutResponse>) {
    message.mutable_search()->set_search_nanos(0);
  } else {
    message.set_search_nanos(0);
  }
  return message.ShortDebugString();
}

TEST_F(ModelServiceTest, DescribeListsTheShapesOfTheModel) {
  v1::ModelDescription gpt2;
  grpc::Status status = Describe(Config(kGpt2Config), &gpt2);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(gpt2.model_type(), "gpt2");
  EXPECT_EQ(gpt2.architecture(), "GPT2LMHeadModel");
  EXPECT_EQ(gpt2.hidden_size(), kGpt2TestEmbd);
  EXPECT_THAT(gpt2.numels(), ElementsAreArray(Gpt2TestNumels(LmHead::kTied)));
  ASSERT_EQ(gpt2.names_size(), gpt2.numels_size());
  EXPECT_EQ(gpt2.names(0), "transformer.wte.weight");
  uint64_t total = 0;
  for (const uint64_t n : Gpt2TestNumels(LmHead::kTied)) total += n;
  EXPECT_EQ(gpt2.total(), total);

  v1::ModelDescription llama;
  status = Describe(Config(Llama70bConfig()), &llama);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(llama.architecture(), "LlamaForCausalLM");
  EXPECT_THAT(llama.numels(), ElementsAreArray(Llama2_70bNumels()));
  EXPECT_EQ(llama.names(4), "model.layers.0.self_attn.o_proj.weight");
  // Published: meta-llama/Llama-2-70b-hf's model.safetensors.index.json
  // gives total_size 137,953,296,384 bytes of fp16, 68,976,648,192
  // parameters.
  EXPECT_EQ(llama.total(), 68'976'648'192u);
  ASSERT_TRUE(records_.WaitForCount(2));
  EXPECT_STREQ(records_.All().at(0).method, "Describe");
  EXPECT_EQ(records_.All().at(1).params, 723u);
}

// A model's search is the search of its parameters: the same answer as the
// numels sent themselves, with search_interval 0 taken as 1024.
TEST_F(ModelServiceTest, SearchWithModelEqualsItsNumelsAtInterval1024) {
  const v1::ChunkSearchRequest model = ModelSearch(Llama70bConfig(), 8);
  v1::ChunkSearchResponse by_model, by_numels;
  grpc::Status status = Search(model, &by_model);
  ASSERT_TRUE(status.ok()) << status.error_message();
  status = Search(AsNumels(model, Llama2_70bNumels(), 1024), &by_numels);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(Stable(by_model), Stable(by_numels));
  // The report names the model and its published total (as Describe's).
  EXPECT_EQ(by_model.model_report().model_type(), "llama");
  EXPECT_EQ(by_model.model_report().architecture(), "LlamaForCausalLM");
  EXPECT_EQ(by_model.model_report().total_param_size(), 68'976'648'192u);
  EXPECT_EQ(by_numels.model_report().total_param_size(), 68'976'648'192u);
  EXPECT_THAT(by_model.model_report().warnings(), ::testing::IsEmpty());
  // At the model's hidden size instead the search differs (another grid):
  // 0 is not the hidden size.
  v1::ChunkSearchResponse at_hidden;
  ASSERT_TRUE(
      Search(AsNumels(model, Llama2_70bNumels(), kLlama70bHidden), &at_hidden)
          .ok());
  EXPECT_NE(by_model.candidates(), at_hidden.candidates());
  // An interval given is kept.
  v1::ChunkSearchRequest given = model;
  given.set_search_interval(kLlama70bHidden);
  ASSERT_TRUE(Search(given, &by_model).ok());
  EXPECT_EQ(Stable(by_model), Stable(at_hidden));
}

TEST_F(ModelServiceTest, LayoutAndFrontierWithModelEqualTheirNumels) {
  v1::LayoutRequest by_model;
  *by_model.mutable_search() = ModelSearch(kGpt2Config, 2);
  by_model.mutable_search()->set_min_chunk_size_m(0);
  by_model.set_objective(v1::OBJECTIVE_PEAK_RANK_BYTES);
  v1::LayoutRequest by_numels = by_model;
  *by_numels.mutable_search() =
      AsNumels(by_model.search(), Gpt2TestNumels(LmHead::kTied), 1024);
  // `frozen` indexes the described parameters: the embeddings frozen.
  for (size_t i = 0; i < Gpt2TestNumels().size(); ++i) {
    by_model.add_frozen(i < 2);
    by_numels.add_frozen(i < 2);
  }
  v1::LayoutResponse layout_model, layout_numels;
  grpc::Status status = Layout(by_model, &layout_model);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(Layout(by_numels, &layout_numels).ok());
  EXPECT_EQ(Stable(layout_model), Stable(layout_numels));
  EXPECT_GT(layout_model.most_loaded_rank().frozen_bytes(), 0u);

  v1::FrontierResponse frontier_model, frontier_numels;
  status = Frontier(by_model, &frontier_model);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(Frontier(by_numels, &frontier_numels).ok());
  EXPECT_EQ(Stable(frontier_model), Stable(frontier_numels));
  EXPECT_GT(frontier_model.points_size(), 0);

  // frozen of the numels' length but not the model's is refused.
  by_model.add_frozen(false);
  status = Layout(by_model, &layout_model);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("frozen"));
}

// A workload on Layout: the estimate, worked by hand tensor by tensor
// (docs/plan.md, "Activations") for the GPT-2 test model (L 2, h 128, a 4,
// v 50258, dropout 0.1, tied) at b 1, s 8 under SDPA, N = bsh = 1024: a
// layer's two LayerNorms 2 x (2N + 8bs + 2N) = 8320, SDPA's q, k, v, out
// 4 x 2N + logsumexp 4bsa = 8320, two residual masks 2N, the MLP 5 x 2bsI
// = 40960: 59648, twice; input_ids 64, position_ids 64, the embedding mask
// N, ln_f 4160; the loss 4bsv + 8(s + 1) + 4 = 1608332; the 16-bit logits
// 2bsv = 804128: 2537068. The transient: the embedding's backward with a
// tied lm_head (the held gradient, the embedding's and their sum, 6vh; its
// output's gradient 2N, beside the first two only, is freed before the
// sum) over what is left then (input_ids, position_ids, the logits): above
// the logits' gradients (8bsv = 3216512) for this small h.
// The layout is the one without it; a zero size is refused at admission,
// and Frontier refuses a workload.
TEST_F(ModelServiceTest, LayoutCountsAWorkloadAndFrontierRefusesIt) {
  v1::LayoutRequest request;
  *request.mutable_search() = ModelSearch(kGpt2Config, 2);
  v1::LayoutResponse without, with;
  ASSERT_TRUE(Layout(request, &without).ok());
  EXPECT_EQ(without.activation_bytes(), 0u);
  request.mutable_workload()->set_micro_batch(1);
  request.mutable_workload()->set_sequence_length(8);
  grpc::Status status = Layout(request, &with);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(with.activation_bytes(), 2'537'068u);
  EXPECT_EQ(with.transient_bytes(),
            6u * 50258 * 128 - (2'537'068u - (64 + 64 + 804'128)));
  with.set_activation_bytes(0);
  with.set_transient_bytes(0);
  EXPECT_EQ(Stable(with), Stable(without));

  v1::FrontierResponse frontier;
  status = Frontier(request, &frontier);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("workload: "));

  request.mutable_workload()->set_sequence_length(0);
  status = Layout(request, &with);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("workload.sequence_length"));
  ExpectServing();
}

// The request's rules with a model, each INVALID_ARGUMENT naming the field;
// the server goes on serving.
TEST_F(ModelServiceTest, ModelRequestRulesAreEnforced) {
  v1::ChunkSearchResponse response;
  v1::ChunkSearchRequest both = ModelSearch(kGpt2Config, 1);
  both.add_numels(5);
  grpc::Status status = Search(both, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("numels (1 entries) and model are both set"));

  v1::ChunkSearchRequest degrees = ModelSearch(kGpt2Config, 1);
  degrees.add_dp_degrees(2);
  status = Search(degrees, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("dp_degrees has 2 values"));

  v1::LayoutRequest layout;
  *layout.mutable_search() = degrees;
  v1::LayoutResponse layout_response;
  status = Layout(layout, &layout_response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("search.dp_degrees has 2"));

  // No dp_degrees at all: every parameter at degree 1.
  v1::ChunkSearchRequest none = ModelSearch(kGpt2Config, 1);
  none.clear_dp_degrees();
  status = Search(none, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  ExpectServing();
}

// Bad configs: each refused with INVALID_ARGUMENT saying what is wrong,
// in Describe and in a request's model alike.
TEST_F(ModelServiceTest, HostileConfigsArePreciseInvalidArguments) {
  // GPT-2's config with one key replaced by `value`.
  const auto gpt2_with = [](const std::string& key, const std::string& value) {
    return absl::StrCat(R"({"model_type": "gpt2", "n_embd": 128, )",
                        R"("n_head": 4, "n_layer": 2, "n_positions": 1024, )",
                        R"("vocab_size": 50258, ")", key, R"(": )", value, "}");
  };
  const std::pair<std::string, std::string> bad[] = {
      {"not JSON", "not JSON"},
      {"[1, 2, 3]", "JSON object"},
      {gpt2_with("n_embd", R"("wide")"), "n_embd"},
      {gpt2_with("n_embd", "-128"), "n_embd"},
      {gpt2_with("n_layer", "1e300"), "n_layer"},
      {gpt2_with("n_layer", "2.5"), "n_layer"},
      {gpt2_with("vocab_size", "18446744073709551616"), "vocab_size"},
      {gpt2_with("n_head", "0"), "n_head"},
      {R"({"model_type": "no-such-family"})", "no-such-family"},
      {R"({"model_type": 7})", "model_type"},
      {std::string(100000, '[') + std::string(100000, ']'), "nested"},
  };
  for (const auto& [json, named] : bad) {
    v1::ModelDescription description;
    const grpc::Status status = Describe(Config(json), &description);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << json.substr(0, 60) << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr(named)) << json.substr(0, 60);
    v1::ChunkSearchResponse response;
    const grpc::Status search = Search(ModelSearch(json, 1), &response);
    EXPECT_EQ(search.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(search.error_message(), HasSubstr("model: "));
  }
  // An unknown model_type lists the supported ones.
  v1::ModelDescription description;
  const grpc::Status unknown =
      Describe(Config(R"({"model_type": "no-such-family"})"), &description);
  EXPECT_THAT(unknown.error_message(), HasSubstr("supported: "));
  EXPECT_THAT(unknown.error_message(), HasSubstr("gpt2"));
  ExpectServing();
}

// A config holding a number beyond a double (it used to end the process
// in Layout and Frontier, and answer UNIMPLEMENTED in Describe and Search):
// INVALID_ARGUMENT naming the key in every call that takes a config, and
// the server serves on. Plan's is in plan_service_test.
TEST_F(ModelServiceTest, ANumberBeyondADoubleIsRefusedInEveryCall) {
  const std::string digits = "1" + std::string(499'999, '0');
  for (const std::string& value : {std::string("1e400"), digits}) {
    const std::string json = absl::StrCat(
        R"({"model_type": "gpt2", "n_embd": 128, "n_head": 4, "n_layer": )",
        value, "}");
    const std::string named = "config n_layer: a number beyond the range";
    v1::ModelDescription description;
    grpc::Status status = Describe(Config(json), &description);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(named));
    v1::ChunkSearchResponse response;
    status = Search(ModelSearch(json, 1), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(named));
    v1::LayoutRequest layout;
    *layout.mutable_search() = ModelSearch(json, 2);
    v1::LayoutResponse layout_response;
    status = Layout(layout, &layout_response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(named));
    v1::FrontierResponse frontier;
    status = Frontier(layout, &frontier);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(named));
  }
  ExpectServing();
}

// A model by its parameter list (ModelConfig.param_list_json): five named
// parameters, the head marked requires_grad false.
constexpr char kParamList[] = R"([
  {"name": "embed.weight", "numel": 1000},
  ["layers.0.w", [64, 64]], {"name": "layers.0.b", "numel": 64},
  {"name": "layers.1.w", "numel": 4096},
  {"name": "head.weight", "numel": 2000, "requires_grad": false}])";
constexpr uint64_t kListNumels[] = {1000, 4096, 64, 4096, 2000};

v1::ModelConfig Listed(const std::string& freeze, const std::string& train) {
  v1::ModelConfig config;
  config.set_param_list_json(kParamList);
  config.set_freeze(freeze);
  config.set_train(train);
  return config;
}

// The server describes a list as it describes a family: its names, its
// requires_grad as the default mask, and freeze/train matched over the
// names (trainable = (default or train) and not freeze, by hand here).
TEST_F(ModelServiceTest, AParameterListIsDescribedAndItsNamesMatched) {
  struct Case {
    const char* freeze;
    const char* train;
    std::vector<bool> frozen;
  } cases[] = {
      {"", "", {false, false, false, false, true}},
      {R"(layers\.0\.)", "", {false, true, true, false, true}},
      {"", "^head", {false, false, false, false, false}},
      {"layers", "^embed", {false, true, true, true, true}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat("freeze ", c.freeze, " train ", c.train));
    v1::ModelDescription d;
    grpc::Status status = Describe(Listed(c.freeze, c.train), &d);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_THAT(d.names(),
                ElementsAreArray({"embed.weight", "layers.0.w", "layers.0.b",
                                  "layers.1.w", "head.weight"}));
    EXPECT_THAT(d.numels(), ElementsAreArray(kListNumels));
    EXPECT_EQ(d.total(), 11256u);
    EXPECT_THAT(d.frozen(), ElementsAreArray(c.frozen));
    EXPECT_EQ(d.model_type(), "");
  }
  // A pattern that matches no name, or does not compile: as for a family.
  v1::ModelDescription d;
  grpc::Status status = Describe(Listed("q_proj", ""), &d);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("freeze: \"q_proj\" matches no parameter of the "
                        "parameter list"));
  status = Describe(Listed("", "("), &d);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("train: "));
  ExpectServing();
}

// Layout of a list with a pattern answers as its numels with the mask the
// pattern gives; `frozen` sent beside the list's own marks is refused.
TEST_F(ModelServiceTest, LayoutOfAListEqualsItsNumelsWithTheMask) {
  v1::LayoutRequest by_list;
  *by_list.mutable_search()->mutable_model() = Listed(R"(layers\.0\.)", "");
  by_list.mutable_search()->add_dp_degrees(2);
  by_list.mutable_search()->set_search_range_m(0.01);
  by_list.mutable_search()->set_search_interval(64);
  by_list.mutable_search()->set_min_chunk_size_m(0);
  v1::LayoutRequest by_numels = by_list;
  *by_numels.mutable_search() = AsNumels(
      by_list.search(), {std::begin(kListNumels), std::end(kListNumels)}, 64);
  for (bool f : {false, true, true, false, true}) by_numels.add_frozen(f);
  v1::LayoutResponse list_answer, numels_answer;
  grpc::Status status = Layout(by_list, &list_answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(Layout(by_numels, &numels_answer).ok());
  EXPECT_EQ(Stable(list_answer), Stable(numels_answer));
  EXPECT_EQ(list_answer.most_loaded_rank().frozen_bytes(),
            2u * (4096 + 64 + 2000));

  by_list.add_frozen(true);
  status = Layout(by_list, &list_answer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("frozen has 1 entries"));
  ExpectServing();
}

// What a list cannot carry is refused naming it; a workload takes its
// shape from workload.shape_from, as with numels.
TEST_F(ModelServiceTest, AListRefusesWhatItCannotCarry) {
  v1::ModelDescription d;
  v1::ModelConfig both = Listed("", "");
  both.set_hf_config_json(kGpt2Config);
  v1::ModelConfig architecture = Listed("", "");
  architecture.set_architecture("GPT2LMHeadModel");
  v1::ModelConfig lora = Listed("", "");
  lora.mutable_lora()->set_rank(8);
  lora.mutable_lora()->add_targets("w");
  v1::ModelConfig broken = Listed("", "");
  broken.set_param_list_json(R"([{"name": "a", "numel": 4}, {"name": "b"}])");
  for (const auto& [config, words] :
       std::vector<std::pair<v1::ModelConfig, std::string>>{
           {both, "hf_config_json and param_list_json are both set"},
           {architecture, "architecture: applies to hf_config_json"},
           {lora, "lora: a parameter list does not say"},
           {broken, "param_list_json: entry 1: an object needs"}}) {
    grpc::Status status = Describe(config, &d);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(words));
  }

  v1::LayoutRequest layout;
  *layout.mutable_search()->mutable_model() = Listed("", "");
  layout.mutable_search()->set_search_range_m(1);
  layout.mutable_workload()->set_micro_batch(1);
  layout.mutable_workload()->set_sequence_length(8);
  v1::LayoutResponse answer;
  grpc::Status status = Layout(layout, &answer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("workload.shape_from"));
  *layout.mutable_workload()->mutable_shape_from() = Config(kGpt2Config);
  status = Layout(layout, &answer);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // The GPT-2 test model's estimate at b 1, s 8 (the workload test above).
  EXPECT_EQ(answer.activation_bytes(), 2'537'068u);

  v1::PlanRequest plan;
  *plan.mutable_search()->mutable_model() = Listed("", "");
  plan.mutable_search()->set_search_range_m(1);
  plan.mutable_cluster()->set_device_memory_bytes(uint64_t{80} << 30);
  plan.mutable_cluster()->set_gpus_per_node(8);
  plan.mutable_cluster()->add_world_sizes(8);
  plan.set_search_tp(true);
  v1::PlanResponse plan_answer;
  grpc::ClientContext context;
  status = stub_->Plan(WithDeadline(&context), plan, &plan_answer);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("search_tp / tp_sizes"));
  ExpectServing();
}

class SmallLimitsTest : public ModelServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_params = 100;
    options.max_config_bytes = 1000;
    return options;
  }
};

// A config past --max_config_bytes is refused by its length, before it is
// parsed: its text is not even JSON, and the message names the limit.
TEST_F(SmallLimitsTest, OversizeConfigIsRefusedBeforeParsing) {
  const std::string oversize(1001, '{');
  v1::ModelDescription description;
  grpc::Status status = Describe(Config(oversize), &description);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("hf_config_json is 1001 bytes; this server takes a "
                        "config of at most 1000 bytes (--max_config_bytes)"));
  v1::ChunkSearchResponse response;
  status = Search(ModelSearch(oversize, 1), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("model: hf_config_json is 1001 bytes"));
  // A Describe body past the limit and its slack is refused by the body's
  // size alone, before protobuf parses it (gRPC's receive limit, 40 bytes
  // per parameter + 4 KiB + the config limit, lies above).
  status = Describe(Config(std::string(6000, ' ')), &description);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("the request body is 6003 bytes; a ModelConfig on "
                        "this server is at most 5096"));
  // Within the limit, the same model is described.
  EXPECT_TRUE(Describe(Config(kGpt2Config), &description).ok());
}

// A parameter list is bounded as a config: its text by --max_config_bytes,
// its entries by --max_params.
TEST_F(SmallLimitsTest, AParameterListIsBoundedAsAConfig) {
  v1::ModelConfig config;
  config.set_param_list_json(std::string(1001, '['));
  v1::ModelDescription description;
  grpc::Status status = Describe(config, &description);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("param_list_json is 1001 bytes; this server takes a "
                        "config of at most 1000 bytes (--max_config_bytes)"));
  std::string list = "[1";
  for (int i = 1; i < 101; ++i) list += ",1";
  config.set_param_list_json(list + "]");
  status = Describe(config, &description);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("the list has 101 parameters; more than 100"));
}

// A model of more parameters than --max_params is RESOURCE_EXHAUSTED in
// every method, naming the flag: GPT-2 with 10 layers has 12 x 10 + 4 = 124.
TEST_F(SmallLimitsTest, ModelBeyondMaxParamsIsRefused) {
  const std::string ten_layers = R"({"model_type": "gpt2", "n_embd": 128,
      "n_head": 4, "n_layer": 10, "n_positions": 1024, "vocab_size": 50258})";
  v1::ModelDescription description;
  grpc::Status status = Describe(Config(ten_layers), &description);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_params"));
  v1::ChunkSearchResponse response;
  status = Search(ModelSearch(ten_layers, 1), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("model: "));
  v1::LayoutRequest layout;
  *layout.mutable_search() = ModelSearch(ten_layers, 1);
  v1::LayoutResponse layout_response;
  status = Layout(layout, &layout_response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("search.model: "));
  // GPT-2's 28 parameters pass.
  EXPECT_TRUE(Search(ModelSearch(kGpt2Config, 1), &response).ok());
}

}  // namespace
}  // namespace chunkplan::testing
