// chunkplan.v1.ChunkSearch in process: every status the service answers,
// answers checked against the oracle or a published figure, and the server
// serving on after each failure.

#include <algorithm>
#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "server/service/wire_counts.h"
#include "testing/oracle_runner.h"
#include "tests/service/service_fixture.h"

namespace chunkplan::testing {
namespace {

using ::testing::HasSubstr;

// The answer fields the oracle gives, equal.
void ExpectSameAnswer(const v1::ChunkSearchResponse& got,
                      const v1::ChunkSearchResponse& want) {
  ASSERT_EQ(got.configs_size(), want.configs_size());
  for (int i = 0; i < got.configs_size(); ++i) {
    EXPECT_EQ(got.configs(i).dp_degree(), want.configs(i).dp_degree()) << i;
    EXPECT_EQ(got.configs(i).chunk_size(), want.configs(i).chunk_size()) << i;
    EXPECT_EQ(got.configs(i).keep_gathered(), want.configs(i).keep_gathered())
        << i;
  }
  EXPECT_EQ(got.total_param_size(), want.total_param_size());
  EXPECT_EQ(got.min_chunk_waste(), want.min_chunk_waste());
}

TEST_F(ServiceTest, AnswersGpt2WithColossalAisPublishedChunkSize) {
  const v1::ChunkSearchRequest request = Gpt2ColossalAiRequest();
  for (const v1::Engine engine :
       {v1::ENGINE_AUTO, v1::ENGINE_CPU_SWEEP, v1::ENGINE_CPU_PLATEAU}) {
    v1::ChunkSearchRequest with_engine = request;
    with_engine.set_engine(engine);
    v1::ChunkSearchResponse response;
    const grpc::Status status = Search(with_engine, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ASSERT_EQ(response.configs_size(), 1);
    EXPECT_EQ(response.configs(0).dp_degree(), 1u);
    EXPECT_EQ(response.configs(0).chunk_size(), kGpt2ColossalAiChunkSize);
    EXPECT_FALSE(response.configs(0).keep_gathered());
    EXPECT_EQ(response.total_param_size(),
              std::accumulate(request.numels().begin(), request.numels().end(),
                              uint64_t{0}));
    if (engine != v1::ENGINE_AUTO) EXPECT_EQ(response.engine(), engine);
    // 2**20 / 128 + 1 grid points.
    EXPECT_EQ(response.candidates(), 8193u);
  }
}

TEST_F(ServiceTest, AnswersEqualTheOracle) {
  std::vector<v1::ChunkSearchRequest> requests = RandomRequests(40, 1);
  requests.push_back(Gpt2ColossalAiRequest());
  const auto expected = AskOracle(requests);
  ASSERT_TRUE(expected.ok()) << expected.status();
  for (size_t i = 0; i < requests.size(); ++i) {
    SCOPED_TRACE(requests[i].ShortDebugString().substr(0, 300));
    ASSERT_TRUE((*expected)[i].ok()) << (*expected)[i].status();
    v1::ChunkSearchResponse response;
    const grpc::Status status = Search(requests[i], &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ExpectSameAnswer(response, *(*expected)[i]);
  }
}

TEST_F(ServiceTest, ConcurrentCallsAllEqualTheOracle) {
  const std::vector<v1::ChunkSearchRequest> requests = RandomRequests(48, 2);
  const auto expected = AskOracle(requests);
  ASSERT_TRUE(expected.ok()) << expected.status();
  constexpr int kThreads = 8;
  std::vector<std::vector<v1::ChunkSearchResponse>> got(kThreads);
  std::vector<std::vector<grpc::Status>> statuses(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Thread t sends requests t, t + kThreads, ...; each call blocks.
      for (size_t i = t; i < requests.size(); i += kThreads) {
        v1::ChunkSearchResponse response;
        statuses[t].push_back(Search(requests[i], &response));
        got[t].push_back(response);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    for (size_t k = 0; k < got[t].size(); ++k) {
      const size_t i = t + k * kThreads;
      SCOPED_TRACE(i);
      ASSERT_TRUE(statuses[t][k].ok()) << statuses[t][k].error_message();
      ASSERT_TRUE((*expected)[i].ok()) << (*expected)[i].status();
      ExpectSameAnswer(got[t][k], *(*expected)[i]);
    }
  }
  EXPECT_EQ(service_->searches_in_flight(), 0);
}

struct InvalidCase {
  std::string name;
  std::function<void(v1::ChunkSearchRequest&)> spoil;
  std::string field;  // the message must name it
};

TEST_F(ServiceTest, InvalidInputNamesTheFieldAndServingGoesOn) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<InvalidCase> cases = {
      {"no numels", [](auto& r) { r.clear_numels(); }, "numels"},
      {"degree 0",
       [](auto& r) {
         r.clear_dp_degrees();
         for (int i = 0; i < r.numels_size(); ++i) {
           r.add_dp_degrees(i == 3 ? 0 : 2);
         }
       },
       "dp_degrees[3]"},
      {"degrees of the wrong length",
       [](auto& r) {
         r.clear_dp_degrees();
         r.add_dp_degrees(1);
         r.add_dp_degrees(2);
       },
       "dp_degrees"},
      {"interval 0", [](auto& r) { r.set_search_interval(0); },
       "search_interval"},
      {"NaN range", [nan](auto& r) { r.set_search_range_m(nan); },
       "search_range_m"},
      {"infinite range",
       [](auto& r) {
         r.set_search_range_m(std::numeric_limits<double>::infinity());
       },
       "search_range_m"},
      {"negative minimum", [](auto& r) { r.set_min_chunk_size_m(-1); },
       "min_chunk_size_m"},
      {"unknown engine",
       [](auto& r) { r.set_engine(static_cast<v1::Engine>(42)); }, "engine"},
  };
  for (const InvalidCase& c : cases) {
    SCOPED_TRACE(c.name);
    v1::ChunkSearchRequest request = Gpt2ColossalAiRequest();
    c.spoil(request);
    v1::ChunkSearchResponse response;
    const grpc::Status status = Search(request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(c.field));
    ExpectServing();
  }
}

TEST_F(ServiceTest, BytesThatAreNoRequestAreInvalidArgument) {
  // A varint cut short: no protobuf message at all.
  grpc::Status status = SendRawBytes(channel_, std::string("\x08\xff\xff", 3));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("not a valid chunkplan.v1.ChunkSearchRequest"));
  // With a reason, not ": " and nothing.
  EXPECT_THAT(status.error_message(), HasSubstr("cut short at byte"));
  ExpectServing();
  // A message whose field 1 has the wrong wire type (fixed32): parsed as an
  // unknown field, so numels is empty.
  status = SendRawBytes(channel_, std::string("\x0d\x01\x00\x00\x00", 5));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("numels"));
  ExpectServing();
}

// The service over loopback TCP: what only a real HTTP/2 transport carries.
class TcpServiceTest : public ServiceTest {
 protected:
  bool OverTcp() const override { return true; }
};

// A compressed request is refused from its headers (grpc-encoding), before
// its body is inflated: its size on the wire bounds nothing of what it
// inflates to. gRPC names the encoding; the service never sees the call.
TEST_F(TcpServiceTest, CompressedRequestIsUnimplementedNamingItsEncoding) {
  for (const auto& [algorithm, name] :
       {std::pair{GRPC_COMPRESS_GZIP, "gzip"},
        std::pair{GRPC_COMPRESS_DEFLATE, "deflate"}}) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kPatience);
    context.set_compression_algorithm(algorithm);
    v1::ChunkSearchResponse response;
    const grpc::Status status =
        stub_->Search(&context, Gpt2ColossalAiRequest(), &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED) << name;
    EXPECT_THAT(status.error_message(), HasSubstr(name));
    ExpectServing();
  }
  // Only the two ExpectServing calls reached the service.
  ASSERT_TRUE(records_.WaitForCount(2));
  const std::vector<service::CallRecord> records = records_.All();
  EXPECT_EQ(records.size(), 2u);
  for (const service::CallRecord& record : records) {
    EXPECT_TRUE(record.status.ok()) << record.status;
  }
}

TEST_F(ServiceTest, CudaWithoutAGpuIsAFailedPrecondition) {
  const auto engines = service_->planner().AvailableEngines();
  if (std::find(engines.begin(), engines.end(), planner::Engine::kCuda) !=
      engines.end()) {
    GTEST_SKIP() << "this binary runs ENGINE_CUDA here";
  }
  v1::ChunkSearchRequest request = Gpt2ColossalAiRequest();
  request.set_engine(v1::ENGINE_CUDA);
  v1::ChunkSearchResponse response;
  const grpc::Status status = Search(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("CUDA"));
  ExpectServing();
}

TEST_F(ServiceTest, DeadlinePassingMidSearchStopsTheSearch) {
  v1::ChunkSearchResponse response;
  const grpc::Status status =
      Search(HeldSweepRequest(), &response, std::chrono::milliseconds(100));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The server's own side of the call: the search ended on the deadline
  // rather than running on (the held search ends only when stopped).
  ASSERT_TRUE(records_.WaitForCount(1));
  const service::CallRecord record = records_.All().at(0);
  EXPECT_EQ(record.status.code(), absl::StatusCode::kDeadlineExceeded)
      << record.status;
  EXPECT_EQ(record.params, 4000u);
  ExpectServing();
}

TEST_F(ServiceTest, CancelMidSearchStopsTheSearch) {
  std::unique_ptr<PendingCall> call = StartSearch(HeldSweepRequest());
  ASSERT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 1; }));
  call->context.TryCancel();
  ASSERT_EQ(call->status.wait_for(kPatience), std::future_status::ready);
  EXPECT_EQ(call->status.get().error_code(), grpc::StatusCode::CANCELLED);
  ASSERT_TRUE(records_.WaitForCount(1));
  EXPECT_EQ(records_.All().at(0).status.code(), absl::StatusCode::kCancelled)
      << records_.All().at(0).status;
  EXPECT_TRUE(WaitUntil([&] { return service_->searches_in_flight() == 0; }));
  ExpectServing();
}

class LimitsTest : public ServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_params = 100;
    options.max_sweep_work = 1'000'000;
    options.max_concurrent_searches = 1;
    return options;
  }
};

TEST_F(LimitsTest, TooManyParamsIsResourceExhausted) {
  v1::ChunkSearchRequest request;
  for (int i = 0; i < 101; ++i) request.add_numels(1000);
  request.set_search_interval(1);
  v1::ChunkSearchResponse response;
  grpc::Status status = Search(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("numels has more than 100"));
  EXPECT_THAT(status.error_message(), HasSubstr("at most 100"));

  request.clear_numels();
  request.add_numels(1000);
  for (int i = 0; i < 101; ++i) request.add_dp_degrees(1);
  status = Search(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(),
              HasSubstr("dp_degrees has more than 100"));

  // At the limit: served.
  request.clear_dp_degrees();
  request.clear_numels();
  for (int i = 0; i < 100; ++i) request.add_numels(1000 + i);
  request.set_min_chunk_size_m(0);
  status = Search(request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// The receive limit follows max_params (and max_config_bytes): a body
// larger than any request of 100 parameters and a config within the limit
// is refused by gRPC before the service sees it (here an unknown field that
// the service would have answered "numels is empty").
TEST_F(LimitsTest, BodyLargerThanAnyRequestWithinMaxParamsIsRefused) {
  const uint64_t largest =
      service::LargestRequestBytes(100) + Options().max_config_bytes;
  std::string body = "\xca\x06";     // field 105, length-delimited
  const uint64_t payload = largest;  // body is then larger than `largest`
  for (uint64_t v = payload;; v >>= 7) {
    body += static_cast<char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  body += std::string(payload, 'x');
  const grpc::Status status = SendRawBytes(channel_, body);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << status.error_message();
  ExpectServing();
}

TEST_F(LimitsTest, SweepWorkOverTheLimitIsResourceExhausted) {
  v1::ChunkSearchRequest request;
  for (int i = 0; i < 100; ++i) request.add_numels(1000 + i);
  request.set_min_chunk_size_m(0);
  request.set_search_interval(1);
  request.set_search_range_m(1);  // 2**20 + 1 candidates x 100 sizes
  request.set_engine(v1::ENGINE_CPU_SWEEP);
  v1::ChunkSearchResponse response;
  grpc::Status status = Search(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("1000000"));
  // The plateau engine has no such limit: the same search is served.
  request.set_engine(v1::ENGINE_CPU_PLATEAU);
  status = Search(request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

// The concurrency limit: InlineLimitTest (inline_search_test.cc), on both
// the inline and the pool path.

class MessageSizeTest : public ServiceTest {
 protected:
  service::ServiceOptions Options() const override {
    service::ServiceOptions options;
    options.max_receive_message_bytes = 1024;
    return options;
  }
};

TEST_F(MessageSizeTest, MessageAboveTheLimitIsResourceExhausted) {
  v1::ChunkSearchRequest request = Gpt2ColossalAiRequest();
  for (int i = 0; i < 1000; ++i) request.add_numels(100'000 + i);
  ASSERT_GT(request.ByteSizeLong(), 1024u);
  v1::ChunkSearchResponse response;
  const grpc::Status status = Search(request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ExpectServing();
}

}  // namespace
}  // namespace chunkplan::testing
