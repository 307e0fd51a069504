// ServiceOptions::max_unsent_answer_bytes in process: an answer that would
// pass the budget is refused with RESOURCE_EXHAUSTED naming the flag, and
// the bytes of every answer are given back once gRPC is done with its call,
// so that the budget bounds answers held at once, not answers ever sent.
// (tests/e2e/flood_test.py's SlowReaderTest holds the server's RSS to its
// bound with clients that never read.)

#include <cstdint>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::testing {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kBudget = 64 << 10;

// A Layout of `params` parameters of 1024 in chunks of 1024: one chunk per
// parameter. Each chunk is an entry of a repeated message field, at least
// a tag and a length byte on the wire, so the answer takes at least
// 2 * params bytes.
v1::LayoutRequest OneChunkPerParam(int params) {
  v1::LayoutRequest request;
  v1::ChunkSearchRequest* search = request.mutable_search();
  for (int i = 0; i < params; ++i) search->add_numels(1024);
  search->set_search_range_m(1);
  search->set_search_interval(1024);
  v1::ChunkConfig* config = request.add_configs();
  config->set_dp_degree(1);
  config->set_chunk_size(1024);
  return request;
}

class AnswerBudgetTest : public ServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_unsent_answer_bytes = kBudget;
    return options;
  }

  grpc::Status Layout(const v1::LayoutRequest& request,
                      v1::LayoutResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kPatience);
    return stub_->Layout(&context, request, response);
  }

  bool NothingHeld() {
    return WaitUntil([this] { return service_->unsent_answer_bytes() == 0; });
  }
};

TEST_F(AnswerBudgetTest, AnswerBeyondTheBudgetIsRefusedNamingTheFlag) {
  // At least 80,000 bytes of answer against 65,536.
  v1::LayoutResponse response;
  const grpc::Status status = Layout(OneChunkPerParam(40'000), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_unsent_answer_bytes"));
  EXPECT_THAT(status.error_message(), HasSubstr("retry"));
  EXPECT_TRUE(NothingHeld());
  ExpectServing();
}

TEST_F(AnswerBudgetTest, BytesAreGivenBackWhenEachCallIsDone) {
  // Answers of at least 2,000 bytes each, one after the other, until more
  // than twice the budget has been answered: only bytes given back let the
  // later ones through.
  uint64_t answered = 0;
  for (int call = 0; call < 1000 && answered <= 2 * kBudget; ++call) {
    v1::LayoutResponse response;
    const grpc::Status status = Layout(OneChunkPerParam(1'000), &response);
    ASSERT_TRUE(status.ok())
        << "call " << call << ": " << status.error_message();
    ASSERT_EQ(response.groups(0).chunks_size(), 1'000);
    answered += response.ByteSizeLong();
    ASSERT_TRUE(NothingHeld()) << "call " << call;
  }
  EXPECT_GT(answered, 2 * kBudget);
}

}  // namespace
}  // namespace chunkplan::testing
