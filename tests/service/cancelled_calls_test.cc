// Calls their clients end: a stream reset before its request arrives, and a
// deadline that passes on the client's side, are counted (the CallRecord
// the metrics count) as CANCELLED and DEADLINE_EXCEEDED, not as bad
// requests or cancellations.

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/service/call_stop.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(CancelledCallStatus, NearOrPastTheDeadlineIsDeadlineExceeded) {
  const Clock::time_point t = Clock::now();
  const auto at = [t](Clock::time_point now, Clock::time_point deadline) {
    return service::CancelledCallStatus(t, now, deadline).code();
  };
  // A 1 s call: the slack is 20 ms + 20 ms.
  EXPECT_EQ(at(t + milliseconds(961), t + seconds(1)),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(at(t + milliseconds(1002), t + seconds(1)),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(at(t + milliseconds(959), t + seconds(1)),
            absl::StatusCode::kCancelled);
  // A 100 s call, whose grpc-timeout is rounded to 100 ms: 2.02 s.
  EXPECT_EQ(at(t + milliseconds(98'000), t + seconds(100)),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(at(t + milliseconds(97'970), t + seconds(100)),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(at(t + seconds(5), Clock::time_point::max()),
            absl::StatusCode::kCancelled);
}

// Over a socket, where the deadline travels as grpc-timeout and the client
// resets the stream when its own copy passes: the server counts
// DEADLINE_EXCEEDED, as the client sees it. The engines hold the marked
// searches until they are stopped (testing/held_engine.h), so the search
// outlasts the deadline however fast the machine.
class SocketTest : public ::testing::Test {
 protected:
  void SetUp() override {
    service_ = std::make_unique<service::ChunkSearchService>(
        service::ServiceOptions{},
        [this](const service::CallRecord& r) { records_.Add(r); },
        HoldMarkedSearches());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::ChunkSearch::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                            grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    server_->Shutdown(std::chrono::system_clock::now() + seconds(5));
    server_->Wait();
  }

  std::unique_ptr<service::ChunkSearchService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ChunkSearch::Stub> stub_;
  RecordLog records_;
};

TEST_F(SocketTest, ClientDeadlineIsCountedDeadlineExceeded) {
  constexpr int kCalls = 4;
  for (int i = 0; i < kCalls; ++i) {
    grpc::ClientContext context;
    // 1,001 ms travels as 1,010 ms (grpc-timeout in 10 ms units from 1 s
    // on): the client resets the stream about 9 ms before the server's
    // deadline; the held search asks its stop check every millisecond.
    context.set_deadline(std::chrono::system_clock::now() + milliseconds(1001));
    v1::ChunkSearchResponse response;
    const grpc::Status status =
        stub_->Search(&context, HeldPlateauRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  ASSERT_TRUE(records_.WaitForCount(kCalls));
  for (const service::CallRecord& record : records_.All()) {
    EXPECT_EQ(record.status.code(), absl::StatusCode::kDeadlineExceeded)
        << record.status;
  }
}

// Starts `count` Search calls of `request`, each reset by its client as it
// starts, and waits for their ends.
void StartAndReset(v1::ChunkSearch::Stub& stub,
                   const v1::ChunkSearchRequest& request, int count) {
  std::vector<std::unique_ptr<PendingCall>> calls;
  for (int i = 0; i < count; ++i) {
    auto call = std::make_unique<PendingCall>();
    call->request = request;
    PendingCall* raw = call.get();
    stub.async()->Search(&raw->context, &raw->request, &raw->response,
                         [raw](grpc::Status s) { raw->done.set_value(s); });
    raw->context.TryCancel();
    calls.push_back(std::move(call));
  }
  for (const auto& call : calls) {
    ASSERT_EQ(call->status.wait_for(kPatience), std::future_status::ready);
  }
}

// Calls reset by their clients as they start: the service sees some with
// no request at all (they were answered, and counted, as bodies that are no
// ChunkSearchRequest), some whole; every one it does not answer OK is
// counted CANCELLED. Rounds until the service has seen such a call (a few
// in each round of 400 here), at most 5.
TEST_F(SocketTest, StreamResetAsItsRequestArrivesIsCancelled) {
  const v1::ChunkSearchRequest request = Gpt2ColossalAiRequest();
  const auto not_ok = [this] {
    int n = 0;
    for (const service::CallRecord& record : records_.All()) {
      n += record.status.ok() ? 0 : 1;
    }
    return n;
  };
  for (int round = 0; round < 5 && not_ok() == 0; ++round) {
    StartAndReset(*stub_, request, 400);
  }
  v1::ChunkSearchResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub_->Search(&context, request, &response).ok());
  for (const service::CallRecord& record : records_.All()) {
    if (record.status.ok()) continue;
    EXPECT_EQ(record.status.code(), absl::StatusCode::kCancelled)
        << record.status;
  }
}

}  // namespace
}  // namespace chunkplan::testing
