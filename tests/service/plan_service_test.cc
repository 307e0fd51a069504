// chunkplan.v1.ChunkSearch/Plan through a real gRPC server in process: the
// server's limits before decoding, admission by the Plan's weight (its
// parameters once per search it may run), the model described after
// admission (for Layout and Frontier too), the workload's refusal, the
// server's budget, and the call's record. The expected
// figures come from the contract (proto/chunkplan/v1/chunk_search.proto,
// docs/plan.md) and the layer shapes of testing/model_shapes.h.

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/request_intake.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::testing {
namespace {

using ::testing::HasSubstr;

// ColossalAI's GPT-2 test model (tied), a decoder-only family.
constexpr char kGpt2Config[] = R"({
  "architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
  "n_embd": 128, "n_head": 4, "n_layer": 2, "n_positions": 1024,
  "vocab_size": 50258})";

// A Plan of `numels` sizes over `world_sizes` on 80 GiB GPUs, 8 per node.
v1::PlanRequest NumelsPlan(int numels, std::initializer_list<uint32_t> sizes) {
  v1::PlanRequest request;
  for (int i = 0; i < numels; ++i) request.mutable_search()->add_numels(1000);
  request.mutable_search()->set_search_range_m(1);
  request.mutable_search()->set_search_interval(128);
  v1::Cluster* cluster = request.mutable_cluster();
  cluster->set_device_memory_bytes(uint64_t{80} << 30);
  cluster->set_gpus_per_node(8);
  for (const uint32_t w : sizes) cluster->add_world_sizes(w);
  return request;
}

v1::PlanRequest ModelPlan(const std::string& config,
                          std::initializer_list<uint32_t> sizes) {
  v1::PlanRequest request = NumelsPlan(0, sizes);
  request.mutable_search()->mutable_model()->set_hf_config_json(config);
  return request;
}

class PlanServiceTest : public ServiceTest {
 protected:
  grpc::Status Plan(const v1::PlanRequest& request,
                    v1::PlanResponse* response = nullptr) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kPatience);
    v1::PlanResponse ignored;
    return stub_->Plan(&context, request,
                       response != nullptr ? response : &ignored);
  }

  // The record of the last call, once `count` calls are recorded.
  service::CallRecord Record(size_t count) {
    EXPECT_TRUE(records_.WaitForCount(count));
    return records_.All().at(count - 1);
  }
};

TEST(PlanWeight, ParamsOncePerSearchThreePerWorldSize) {
  EXPECT_EQ(service::PlanWeight(1000, 1), 3000u);
  EXPECT_EQ(service::PlanWeight(1000, 4), 12000u);
  // More than 64 world sizes is refused by the planner: 64 are counted.
  EXPECT_EQ(service::PlanWeight(1000, 64), 192000u);
  EXPECT_EQ(service::PlanWeight(1000, 1000), 192000u);
  EXPECT_EQ(service::PlanWeight(0, 8), 0u);
  EXPECT_EQ(service::PlanWeight(UINT64_MAX / 2, 2), UINT64_MAX);
}

// Whole nodes weigh their max_nodes world sizes; listed ones their count.
TEST(PlanWeight, WholeNodesCountMaxNodes) {
  v1::Cluster c;
  c.add_world_sizes(8);
  c.add_world_sizes(16);
  EXPECT_EQ(service::PlanWorldSizeCount(c), 2u);
  c.clear_world_sizes();
  c.set_whole_nodes(true);
  c.set_max_nodes(5);
  EXPECT_EQ(service::PlanWorldSizeCount(c), 5u);
}

// 4,000 elements on 80 GiB GPUs, 8 a node: everything fits. Whole nodes up
// to 3: world sizes 8, 16, 24 on 1, 2, 3 nodes; the first option on 1.
TEST_F(PlanServiceTest, WholeNodesAnswerInNodes) {
  v1::PlanRequest request = NumelsPlan(4, {});
  request.mutable_cluster()->set_whole_nodes(true);
  request.mutable_cluster()->set_max_nodes(3);
  request.set_max_options(100);
  v1::PlanResponse response;
  const grpc::Status status = Plan(request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_GT(response.options_size(), 0);
  EXPECT_EQ(response.options(0).nodes(), 1u);
  EXPECT_TRUE(response.options(0).verdict().fits());
  std::set<uint32_t> sizes;
  for (const v1::PlanOption& o : response.options()) {
    sizes.insert(o.world_size());
    EXPECT_EQ(o.nodes() * 8, o.world_size());
  }
  EXPECT_EQ(sizes, (std::set<uint32_t>{8, 16, 24}));

  // Listed world sizes that are not whole nodes: 4 on 1 node, 12 on 2.
  response.Clear();
  ASSERT_TRUE(Plan(NumelsPlan(4, {12, 4}), &response).ok());
  for (const v1::PlanOption& o : response.options()) {
    EXPECT_EQ(o.nodes(), o.world_size() == 12 ? 2u : 1u);
  }

  // With world sizes listed too, or without a bound: refused, named.
  request.mutable_cluster()->add_world_sizes(8);
  grpc::Status refused = Plan(request);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("cluster.world_sizes: "));
  request.mutable_cluster()->clear_world_sizes();
  request.mutable_cluster()->set_max_nodes(0);
  refused = Plan(request);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("cluster.max_nodes: 0"));

  // Layout's cluster takes neither.
  v1::LayoutRequest layout;
  layout.mutable_search()->add_numels(1000);
  layout.mutable_search()->set_search_interval(128);
  layout.mutable_cluster()->set_device_memory_bytes(uint64_t{80} << 30);
  layout.mutable_cluster()->set_whole_nodes(true);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kPatience);
  v1::LayoutResponse ignored;
  refused = stub_->Layout(&context, layout, &ignored);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("cluster.whole_nodes: "));
  ExpectServing();
}

TEST_F(PlanServiceTest, AWorkloadWithoutAModelIsRefusedNamingIt) {
  v1::PlanRequest request = NumelsPlan(4, {8});
  request.mutable_workload()->set_micro_batch(1);
  request.mutable_workload()->set_sequence_length(2048);
  const grpc::Status status = Plan(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("workload: "));
  const service::CallRecord record = Record(1);
  EXPECT_STREQ(record.method, "Plan");
  EXPECT_EQ(record.params, 4u);
  EXPECT_EQ(record.status.code(), absl::StatusCode::kInvalidArgument);
  ExpectServing();
}

TEST_F(PlanServiceTest, BadEnumsAndModelErrorsNameTheField) {
  v1::PlanRequest engine = NumelsPlan(4, {8});
  engine.mutable_search()->set_engine(static_cast<v1::Engine>(9));
  grpc::Status status = Plan(engine);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("search.engine is 9"));

  v1::PlanRequest precision = NumelsPlan(4, {8});
  precision.mutable_gemini()->set_precision(static_cast<v1::Precision>(5));
  status = Plan(precision);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("gemini.precision is 5"));

  v1::PlanRequest model = ModelPlan("{not json", {8});
  status = Plan(model);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("search.model: "));

  // A number beyond a double (it used to end the process): named by key.
  status = Plan(ModelPlan(
      R"({"model_type": "gpt2", "n_embd": 128, "n_head": 4, "n_layer": 1e400})",
      {8}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("search.model: config n_layer: a number beyond"));
  ExpectServing();

  v1::PlanRequest both = ModelPlan(kGpt2Config, {8});
  both.mutable_search()->add_numels(5);
  status = Plan(both);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("search.numels (1 entries) and model are both set"));
}

TEST_F(PlanServiceTest, AMalformedBodyIsInvalidArgument) {
  // A varint cut short: no protobuf message at all.
  const grpc::Status status =
      SendRawBytes(channel_, std::string("\x08\xff\xff", 3),
                   "/chunkplan.v1.ChunkSearch/Plan");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("is not a valid chunkplan.v1.PlanRequest"));
}

// --max_params 10: every repeated field of a PlanRequest is counted before
// the body is decoded.
class PlanLimitsTest : public PlanServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_params = 10;
    return options;
  }
};

TEST_F(PlanLimitsTest, EveryRepeatedFieldIsBoundedByMaxParams) {
  const v1::PlanRequest numels = NumelsPlan(11, {8});
  grpc::Status status = Plan(numels);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("search.numels has more than 10 entries"));

  v1::PlanRequest frozen = NumelsPlan(2, {8});
  for (int i = 0; i < 11; ++i) frozen.add_frozen(false);
  status = Plan(frozen);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("frozen has more than 10 entries"));

  v1::PlanRequest sizes = NumelsPlan(2, {});
  for (uint32_t w = 1; w <= 11; ++w)
    sizes.mutable_cluster()->add_world_sizes(w);
  status = Plan(sizes);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("cluster.world_sizes has more than 10 entries"));
  // A Plan within the limit is admitted (whatever the planner answers).
  status = Plan(NumelsPlan(10, {8}));
  EXPECT_NE(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

// A server whose budget (--max_search_time) has passed before any work can
// start: a Plan, like every call, ends DEADLINE_EXCEEDED naming it.
class PlanBudgetTest : public PlanServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_search_time = absl::ZeroDuration();
    return options;
  }
};

TEST_F(PlanBudgetTest, ThePlanMeetsTheServersBudget) {
  const grpc::Status status = Plan(NumelsPlan(4, {8}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_search_time"));
}

// One heavy slot, and room for 4100 parameters in flight: HeldSweepRequest
// (4000 numels) holds the slot and 4000 of them.
class PlanAdmissionTest : public PlanServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_inline_work = 0;  // every search is heavy
    options.max_concurrent_searches = 2;
    options.max_params_in_flight = 4100;
    // A worker for the held search and one for the call under test, however
    // many cores this machine has.
    options.search_threads = 2;
    return options;
  }

  // Starts the held search and waits until it is admitted.
  std::unique_ptr<PendingCall> HoldSearch() {
    std::unique_ptr<PendingCall> held = StartSearch(HeldSweepRequest());
    EXPECT_EQ(HeldSweepRequest().numels_size(), 4000);
    EXPECT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 1; }));
    return held;
  }

  void Release(std::unique_ptr<PendingCall> held) {
    held->context.TryCancel();
    ASSERT_EQ(held->status.wait_for(kPatience), std::future_status::ready);
    ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 0; }));
  }
};

TEST_F(PlanAdmissionTest, APlanWeighsItsParamsOncePerSearch) {
  std::unique_ptr<PendingCall> held = HoldSearch();
  // 34 numels over 1 world size weigh 102 (> the 100 left): refused, where
  // weighed by its numels alone (34) it would have been admitted.
  grpc::Status status = Plan(NumelsPlan(34, {8}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_params_in_flight"));
  EXPECT_THAT(status.error_message(), HasSubstr("this one has 102"));
  // 33 weigh 99: admitted (whatever the planner then answers).
  status = Plan(NumelsPlan(33, {8}));
  EXPECT_THAT(status.error_message(),
              ::testing::Not(HasSubstr("--max_params_in_flight")));
  Release(std::move(held));
}

TEST_F(PlanAdmissionTest, WholeNodesWeighMaxNodesWorldSizes) {
  std::unique_ptr<PendingCall> held = HoldSearch();
  // 17 numels over 2 nodes' world sizes weigh 17 * 3 * 2 = 102 (> 100).
  v1::PlanRequest request = NumelsPlan(17, {});
  request.mutable_cluster()->set_whole_nodes(true);
  request.mutable_cluster()->set_max_nodes(2);
  const grpc::Status status = Plan(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("this one has 102"));
  Release(std::move(held));
}

TEST_F(PlanAdmissionTest, AModelPlanIsWeighedOnceDescribed) {
  const size_t described = Gpt2TestNumels(LmHead::kTied).size();
  ASSERT_GT(described * 3 * 2, 100u);
  std::unique_ptr<PendingCall> held = HoldSearch();
  // Admitted with nothing to weigh, then described on the worker: the
  // described parameters, once per search over two world sizes, no longer
  // fit beside the held search.
  const grpc::Status status = Plan(ModelPlan(kGpt2Config, {8, 16}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr(absl::StrCat("this one has ", described * 6)));
  Release(std::move(held));
  ASSERT_TRUE(records_.WaitForCount(2));
  int plans = 0;
  for (const service::CallRecord& record : records_.All()) {
    if (std::string(record.method) != "Plan") continue;
    ++plans;
    EXPECT_EQ(record.params, described);
  }
  EXPECT_EQ(plans, 1);
}

// One heavy slot, taken by the held search.
class PlanOneSlotTest : public PlanAdmissionTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options = PlanAdmissionTest::Options();
    options.max_concurrent_searches = 1;
    return options;
  }
};

TEST_F(PlanOneSlotTest, TheModelIsDescribedAfterAdmission) {
  std::unique_ptr<PendingCall> held = HoldSearch();
  // Admission answers first: a config that cannot be described is not even
  // read while no slot is free.
  const grpc::Status status = Plan(ModelPlan("{not json", {8}));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_concurrent_searches"));
  Release(std::move(held));
}

TEST_F(PlanOneSlotTest, LayoutAndFrontierDescribeTheirModelAfterAdmission) {
  std::unique_ptr<PendingCall> held = HoldSearch();
  v1::LayoutRequest request;
  request.mutable_search()->mutable_model()->set_hf_config_json("{not json");
  grpc::ClientContext layout_context;
  layout_context.set_deadline(std::chrono::system_clock::now() + kPatience);
  v1::LayoutResponse layout;
  grpc::Status status = stub_->Layout(&layout_context, request, &layout);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_concurrent_searches"));
  grpc::ClientContext frontier_context;
  frontier_context.set_deadline(std::chrono::system_clock::now() + kPatience);
  v1::FrontierResponse frontier;
  status = stub_->Frontier(&frontier_context, request, &frontier);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_concurrent_searches"));
  Release(std::move(held));
  // With the slot free, the same request meets the description's refusal.
  grpc::ClientContext again;
  again.set_deadline(std::chrono::system_clock::now() + kPatience);
  v1::LayoutResponse response;
  const grpc::Status refused = stub_->Layout(&again, request, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("search.model: "));
}

TEST_F(PlanAdmissionTest, AModelLayoutIsWeighedOnceDescribed) {
  const size_t described = Gpt2TestNumels(LmHead::kTied).size();
  // 100 left beside the held search: more than the model's 28 parameters.
  ASSERT_LT(described, 100u);
  std::unique_ptr<PendingCall> held = HoldSearch();
  v1::LayoutRequest request;
  request.mutable_search()->mutable_model()->set_hf_config_json(kGpt2Config);
  request.mutable_search()->set_search_range_m(1);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kPatience);
  v1::LayoutResponse response;
  const grpc::Status status = stub_->Layout(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  Release(std::move(held));
  ASSERT_TRUE(records_.WaitForCount(2));
  int layouts = 0;
  for (const service::CallRecord& record : records_.All()) {
    if (std::string(record.method) != "Layout") continue;
    ++layouts;
    EXPECT_EQ(record.params, described);
    EXPECT_EQ(record.held_params, described);
  }
  EXPECT_EQ(layouts, 1);
  // What it held was given back: nothing is held now.
  ExpectServing();
}

}  // namespace
}  // namespace chunkplan::testing
