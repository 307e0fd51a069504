// Searches served on the gRPC callback thread (ServiceOptions::
// max_inline_work) and on the worker pool: each path answers as the oracle
// does and keeps the concurrency limit, the call's deadline, the server's
// budget and cancellation; a search that outgrows the inline slice moves
// to the pool.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/service/proto_convert.h"
#include "server/service/request_intake.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::testing {
namespace {

using ::testing::HasSubstr;

// Whether the service sends `request` inline under `options`.
bool Inline(const v1::ChunkSearchRequest& request,
            const service::ServiceOptions& options) {
  const absl::StatusOr<planner::SearchRequest> converted =
      service::FromProto(request);
  return converted.ok() && service::RunsInline(*converted, options);
}

// The one finished call's record.
service::CallRecord OnlyRecord(RecordLog& records) {
  EXPECT_TRUE(records.WaitForCount(1));
  return records.All().at(0);
}

TEST(RunsInline, CheapPlateauSearchesOnly) {
  service::ServiceOptions options;
  v1::ChunkSearchRequest gpt2 = Gpt2ColossalAiRequest();
  EXPECT_TRUE(Inline(gpt2, options));  // AUTO: the plateau engine
  gpt2.set_engine(v1::ENGINE_CPU_PLATEAU);
  EXPECT_TRUE(Inline(gpt2, options));
  gpt2.set_engine(v1::ENGINE_CPU_SWEEP);
  EXPECT_FALSE(Inline(gpt2, options));
  gpt2.set_engine(v1::ENGINE_CUDA);
  EXPECT_FALSE(Inline(gpt2, options));
  // Beyond the bound: the held plateau search's 2^20 + 1 candidates x
  // 20,000 sizes.
  EXPECT_FALSE(Inline(HeldPlateauRequest(), options));
  options.max_inline_work = UINT64_MAX;
  EXPECT_TRUE(Inline(HeldPlateauRequest(), options));
  // AUTO may pick CUDA from kCudaMinWork on: never inline there.
  v1::ChunkSearchRequest automatic = HeldPlateauRequest();
  automatic.set_engine(v1::ENGINE_AUTO);
  EXPECT_FALSE(Inline(automatic, options));
  options.max_inline_work = 0;
  EXPECT_FALSE(Inline(Gpt2ColossalAiRequest(), options));
}

// "Inline" or "Pool": the name of a test's instance for its path.
std::string PathName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "Inline" : "Pool";
}

// Every test below runs on both paths: inline (GetParam() true) and the
// pool (max_inline_work 0).
class InlinePathTest : public ServiceTest,
                       public ::testing::WithParamInterface<bool> {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options = BaseOptions();
    options.max_inline_work = GetParam() ? UINT64_MAX : 0;
    // Inline searches stay inline however long they run, so that the held
    // one meets its deadline or its cancellation on the callback thread.
    options.inline_slice = absl::Hours(1);
    return options;
  }
  virtual service::ServiceOptions BaseOptions() const { return {}; }

  void ExpectPath(const service::CallRecord& record) {
    EXPECT_EQ(record.ran_inline, GetParam());
    EXPECT_FALSE(record.moved_to_pool);
  }
};

TEST_P(InlinePathTest, AnswersWithThePublishedChunkSize) {
  v1::ChunkSearchResponse response;
  const grpc::Status status = Search(Gpt2ColossalAiRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.configs(0).chunk_size(), kGpt2ColossalAiChunkSize);
  EXPECT_EQ(response.engine(), v1::ENGINE_CPU_PLATEAU);
  ExpectPath(OnlyRecord(records_));
}

TEST_P(InlinePathTest, DeadlinePassingMidSearchStopsIt) {
  v1::ChunkSearchResponse response;
  const grpc::Status status =
      Search(HeldPlateauRequest(), &response, std::chrono::milliseconds(100));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  const service::CallRecord record = OnlyRecord(records_);
  EXPECT_EQ(record.status.code(), absl::StatusCode::kDeadlineExceeded)
      << record.status;
  EXPECT_THAT(record.status.message(), HasSubstr("call's deadline"));
  ExpectPath(record);
  ExpectServing();
}

TEST_P(InlinePathTest, CancelMidSearchStopsIt) {
  std::unique_ptr<PendingCall> call = StartSearch(HeldPlateauRequest());
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 1; }));
  call->context.TryCancel();
  ASSERT_EQ(call->status.wait_for(kPatience), std::future_status::ready);
  EXPECT_EQ(call->status.get().error_code(), grpc::StatusCode::CANCELLED);
  const service::CallRecord record = OnlyRecord(records_);
  EXPECT_EQ(record.status.code(), absl::StatusCode::kCancelled)
      << record.status;
  ExpectPath(record);
  EXPECT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 0; }));
  ExpectServing();
}

INSTANTIATE_TEST_SUITE_P(BothPaths, InlinePathTest, ::testing::Bool(),
                         PathName);

// The server's budget (--max_search_time) on both paths.
class InlineBudgetTest : public InlinePathTest {
 protected:
  service::ServiceOptions BaseOptions() const override {
    service::ServiceOptions options;
    options.max_search_time = absl::Milliseconds(100);
    return options;
  }
};

TEST_P(InlineBudgetTest, SearchPastTheBudgetEnds) {
  v1::ChunkSearchResponse response;
  const grpc::Status status = Search(HeldPlateauRequest(), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_THAT(status.error_message(), HasSubstr("--max_search_time"));
  ExpectPath(OnlyRecord(records_));
  ExpectServing();
}

INSTANTIATE_TEST_SUITE_P(BothPaths, InlineBudgetTest, ::testing::Bool(),
                         PathName);

// Admission by estimated work, on both paths: one heavy slot and one light
// slot. A cheap search is light where it runs inline, heavy where it does
// not (max_inline_work 0).
class InlineLimitTest : public InlinePathTest {
 protected:
  service::ServiceOptions BaseOptions() const override {
    service::ServiceOptions options;
    options.max_concurrent_searches = 1;
    options.max_concurrent_light_searches = 1;
    return options;
  }
};

// A held sweep (heavy: it runs on the pool) holds the one heavy slot: a
// cheap search is still answered where it runs inline, and refused at once
// where it would take a heavy slot.
TEST_P(InlineLimitTest, CheapSearchIsAnsweredWhileTheHeavySlotsAreTaken) {
  std::unique_ptr<PendingCall> held = StartSearch(HeldSweepRequest());
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 1; }));
  ASSERT_EQ(Inline(Gpt2ColossalAiRequest(), Options()), GetParam());
  v1::ChunkSearchResponse response;
  const grpc::Status cheap = Search(Gpt2ColossalAiRequest(), &response);
  if (GetParam()) {
    ASSERT_TRUE(cheap.ok()) << cheap.error_message();
    EXPECT_EQ(response.configs(0).chunk_size(), kGpt2ColossalAiChunkSize);
  } else {
    EXPECT_EQ(cheap.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(cheap.error_message(),
                HasSubstr("concurrent searches (--max_concurrent_searches)"));
  }
  held->context.TryCancel();
  ASSERT_EQ(held->status.wait_for(kPatience), std::future_status::ready);
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 0; }));
  ExpectServing();
}

// A held plateau search holds the slot of its class (light where it runs
// inline): a cheap search of the same class is refused at once.
TEST_P(InlineLimitTest, SearchBeyondItsClassLimitIsRefused) {
  std::unique_ptr<PendingCall> held = StartSearch(HeldPlateauRequest());
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 1; }));
  v1::ChunkSearchResponse response;
  const grpc::Status refused = Search(Gpt2ColossalAiRequest(), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(),
              HasSubstr(GetParam() ? "--max_concurrent_light_searches"
                                   : "--max_concurrent_searches"));
  held->context.TryCancel();
  ASSERT_EQ(held->status.wait_for(kPatience), std::future_status::ready);
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 0; }));
  ExpectServing();
}

INSTANTIATE_TEST_SUITE_P(BothPaths, InlineLimitTest, ::testing::Bool(),
                         PathName);

// Heavy calls hold their numels against max_params_in_flight (their decoded
// requests' memory): 20 here, below both requests, so a call is admitted
// only while no other heavy call holds any.
class ParamsInFlightTest : public ServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_inline_work = 0;  // every search is heavy
    options.max_params_in_flight = 20;
    return options;
  }
};

TEST_F(ParamsInFlightTest, HeavyCallsShareTheParametersInFlight) {
  ASSERT_GT(Gpt2ColossalAiRequest().numels_size(), 20);
  std::unique_ptr<PendingCall> held = StartSearch(HeldSweepRequest());
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 1; }));
  v1::ChunkSearchResponse response;
  const grpc::Status refused = Search(Gpt2ColossalAiRequest(), &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("--max_params_in_flight"));
  held->context.TryCancel();
  ASSERT_EQ(held->status.wait_for(kPatience), std::future_status::ready);
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 0; }));
  // Nothing held: a call beyond the limit alone is admitted, and what the
  // cancelled call held was given back.
  ExpectServing();
  ExpectServing();
}

// A search that outgrows the inline slice moves to the pool and is served
// there (here: until its deadline).
class InlineSliceTest : public ServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_inline_work = UINT64_MAX;
    options.inline_slice = absl::Milliseconds(1);
    return options;
  }
};

TEST_F(InlineSliceTest, SearchOutgrowingTheSliceMovesToThePool) {
  v1::ChunkSearchResponse response;
  const grpc::Status status =
      Search(HeldPlateauRequest(), &response, std::chrono::milliseconds(300));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  const service::CallRecord record = OnlyRecord(records_);
  EXPECT_TRUE(record.moved_to_pool);
  EXPECT_FALSE(record.ran_inline);
  EXPECT_EQ(record.status.code(), absl::StatusCode::kDeadlineExceeded);
  // A cheap one still runs inline.
  ASSERT_TRUE(Search(Gpt2ColossalAiRequest(), &response).ok());
  ASSERT_TRUE(records_.WaitForCount(2));
  EXPECT_TRUE(records_.All().at(1).ran_inline);
}

}  // namespace
}  // namespace chunkplan::testing
