// chunkplan.v1.ChunkSearch/Layout in process: the same limits, deadline,
// admission and error style as Search (the answers themselves are held to
// the layout oracle by tests/differential/layout_differential_test.cc).

#include <cstdint>
#include <future>
#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::testing {
namespace {

using ::testing::HasSubstr;

grpc::Status CallLayout(v1::ChunkSearch::Stub& stub,
                        const v1::LayoutRequest& request,
                        v1::LayoutResponse* response,
                        std::chrono::milliseconds timeout = kPatience) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  return stub.Layout(&context, request, response);
}

v1::LayoutRequest Searched(const v1::ChunkSearchRequest& search) {
  v1::LayoutRequest request;
  *request.mutable_search() = search;
  return request;
}

TEST_F(ServiceTest, LayoutLaysOutTheSearchsAnswerAndIsLoggedAsLayout) {
  v1::LayoutResponse response;
  const grpc::Status status =
      CallLayout(*stub_, Searched(Gpt2ColossalAiRequest()), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  // ColossalAI's published chunk size for its GPT-2 test, laid out: every
  // parameter placed once, the padding the sum of the chunks' slack.
  ASSERT_EQ(response.search().configs_size(), 1);
  EXPECT_EQ(response.search().configs(0).chunk_size(),
            kGpt2ColossalAiChunkSize);
  ASSERT_EQ(response.groups_size(), 1);
  uint64_t used = 0, slack = 0, params = 0;
  for (const v1::ChunkLayout& c : response.groups(0).chunks()) {
    EXPECT_EQ(c.first_param(), params);
    params += c.num_params();
    used += c.used();
    slack += c.size() - c.used();
  }
  EXPECT_EQ(params,
            static_cast<uint64_t>(Gpt2ColossalAiRequest().numels_size()));
  EXPECT_EQ(used, response.search().total_param_size());
  EXPECT_EQ(response.layout_padding(), slack);
  ASSERT_TRUE(records_.WaitForCount(1));
  EXPECT_STREQ(records_.All().at(0).method, "Layout");
}

TEST_F(ServiceTest, LayoutRefusalsNameTheFieldAndServingGoesOn) {
  v1::LayoutRequest request = Searched(Gpt2ColossalAiRequest());
  v1::ChunkConfig* config = request.add_configs();
  config->set_dp_degree(1);
  config->set_chunk_size(0);
  v1::LayoutResponse response;
  grpc::Status status = CallLayout(*stub_, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("configs[0].chunk_size"));

  request.clear_configs();
  request.add_frozen(true);
  status = CallLayout(*stub_, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("frozen"));

  request.clear_frozen();
  request.mutable_search()->set_search_interval(0);
  status = CallLayout(*stub_, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("search.search_interval"));
  ExpectServing();
}

TEST_F(ServiceTest, LayoutDeadlinePassingMidSearchStopsTheSearch) {
  v1::LayoutResponse response;
  const grpc::Status status =
      CallLayout(*stub_, Searched(HeldSweepRequest()), &response,
                 std::chrono::milliseconds(100));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ASSERT_TRUE(records_.WaitForCount(1));
  EXPECT_EQ(records_.All().at(0).status.code(),
            absl::StatusCode::kDeadlineExceeded);
  ExpectServing();
}

class LayoutLimitsTest : public ServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_params = 100;
    return options;
  }
};

TEST_F(LayoutLimitsTest, TooManyParamsConfigsOrFrozenIsResourceExhausted) {
  v1::LayoutRequest request;
  for (int i = 0; i < 101; ++i) request.mutable_search()->add_numels(1000);
  request.mutable_search()->set_search_interval(1);
  v1::LayoutResponse response;
  grpc::Status status = CallLayout(*stub_, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("search.numels has more than 100"));

  request.mutable_search()->clear_numels();
  request.mutable_search()->add_numels(1000);
  for (int i = 0; i < 101; ++i) request.add_frozen(false);
  status = CallLayout(*stub_, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("frozen has more than 100"));
}

class LayoutSlotTest : public ServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_concurrent_searches = 1;
    return options;
  }
};

TEST_F(LayoutSlotTest, LayoutTakesASearchSlot) {
  // A held Search holds the one slot: Layout is refused at once, as a
  // second Search would be.
  std::unique_ptr<PendingCall> held = StartSearch(HeldSweepRequest());
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 1; }));
  v1::LayoutResponse response;
  const grpc::Status refused =
      CallLayout(*stub_, Searched(Gpt2ColossalAiRequest()), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  held->context.TryCancel();
  ASSERT_EQ(held->status.wait_for(kPatience), std::future_status::ready);
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 0; }));
  ExpectServing();
}

}  // namespace
}  // namespace chunkplan::testing
