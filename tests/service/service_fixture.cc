#include "tests/service/service_fixture.h"

#include <random>
#include <string>
#include <thread>
#include <utility>

#include "grpcpp/generic/generic_stub.h"

namespace chunkplan::testing {

void RecordLog::Add(const service::CallRecord& record) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    records_.push_back(record);
  }
  added_.notify_all();
}

bool RecordLog::WaitForCount(size_t count) {
  std::unique_lock<std::mutex> lock(mu_);
  return added_.wait_for(lock, kPatience,
                         [&] { return records_.size() >= count; });
}

std::vector<service::CallRecord> RecordLog::All() {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

void ServiceTest::SetUp() {
  const service::ServiceOptions options = Options();
  service_ = std::make_unique<service::ChunkSearchService>(
      options, [this](const service::CallRecord& r) { records_.Add(r); },
      HoldMarkedSearches());
  grpc::ServerBuilder builder;
  builder.RegisterService(service_.get());
  service::ApplyServerOptions(options, builder);
  int port = 0;
  if (OverTcp()) {
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
  }
  server_ = builder.BuildAndStart();
  ASSERT_NE(server_, nullptr);
  channel_ = OverTcp()
                 ? grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                       grpc::InsecureChannelCredentials())
                 : server_->InProcessChannel(grpc::ChannelArguments());
  stub_ = v1::ChunkSearch::NewStub(channel_);
}

void ServiceTest::TearDown() {
  if (server_ != nullptr) {
    // Calls still in flight are cancelled after a short grace.
    server_->Shutdown(std::chrono::system_clock::now() +
                      std::chrono::seconds(5));
    server_->Wait();
  }
  stub_.reset();
  channel_.reset();
  server_.reset();
  service_.reset();
}

grpc::Status ServiceTest::Search(const v1::ChunkSearchRequest& request,
                                 v1::ChunkSearchResponse* response,
                                 std::chrono::milliseconds timeout) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  return stub_->Search(&context, request, response);
}

std::unique_ptr<PendingCall> ServiceTest::StartSearch(
    const v1::ChunkSearchRequest& request) {
  auto call = std::make_unique<PendingCall>();
  call->request = request;
  call->context.set_deadline(std::chrono::system_clock::now() + kPatience);
  PendingCall* raw = call.get();
  stub_->async()->Search(&raw->context, &raw->request, &raw->response,
                         [raw](grpc::Status s) { raw->done.set_value(s); });
  return call;
}

bool ServiceTest::WaitUntil(const std::function<bool()>& condition) {
  const auto give_up = std::chrono::steady_clock::now() + kPatience;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void ServiceTest::ExpectServing() {
  v1::ChunkSearchResponse response;
  const grpc::Status status = Search(Gpt2ColossalAiRequest(), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(response.configs_size(), 1);
  EXPECT_EQ(response.configs(0).chunk_size(), kGpt2ColossalAiChunkSize);
}

v1::ChunkSearchRequest Gpt2ColossalAiRequest() {
  v1::ChunkSearchRequest request;
  for (const uint64_t n : Gpt2TestNumels(LmHead::kUntied)) {
    request.add_numels(n);
  }
  request.set_search_range_m(1);
  request.set_search_interval(128);
  request.set_min_chunk_size_m(0);
  request.set_filter_exlarge_params(true);
  return request;
}

namespace {

// kHeldNumel and `count` - 1 sizes drawn uniformly from [lo, hi] with
// `seed`, 2**20 + 1 candidates at interval 1, no minimum, no filter (every
// size is swept, the marker too), on `engine`.
v1::ChunkSearchRequest HeldRequest(uint64_t seed, int count, uint64_t lo,
                                   uint64_t hi, v1::Engine engine) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> size(lo, hi);
  v1::ChunkSearchRequest request;
  request.add_numels(kHeldNumel);
  for (int i = 1; i < count; ++i) request.add_numels(size(rng));
  request.set_search_range_m(1);
  request.set_search_interval(1);
  request.set_min_chunk_size_m(0);
  request.set_filter_exlarge_params(false);
  request.set_engine(engine);
  return request;
}

}  // namespace

grpc::Status SendRawBytes(const std::shared_ptr<grpc::Channel>& channel,
                          const std::string& body, const std::string& method) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kPatience);
  grpc::Slice slice(body);
  const grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                 [&done](grpc::Status s) { done.set_value(s); });
  return done.get_future().get();
}

v1::ChunkSearchRequest HeldSweepRequest() {
  return HeldRequest(7, 4000, 1000, 2000, v1::ENGINE_CPU_SWEEP);
}

v1::ChunkSearchRequest HeldPlateauRequest() {
  return HeldRequest(5, 20000, 1000, 50000, v1::ENGINE_CPU_PLATEAU);
}

std::vector<v1::ChunkSearchRequest> RandomRequests(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&rng](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  constexpr v1::Engine kEngines[] = {v1::ENGINE_AUTO, v1::ENGINE_CPU_SWEEP,
                                     v1::ENGINE_CPU_PLATEAU};
  constexpr double kRanges[] = {0, 0.25, 0.5, 1};
  constexpr double kMinimums[] = {0, 0.001, 0.01, 0.5};
  constexpr uint32_t kDegrees[] = {1, 2, 4, 8};
  std::vector<v1::ChunkSearchRequest> requests;
  for (int r = 0; r < count; ++r) {
    v1::ChunkSearchRequest request;
    const int n = static_cast<int>(pick(1, 200));
    // A few larger sizes among many small ones, as in real models.
    for (int i = 0; i < n; ++i) {
      request.add_numels(pick(0, 9) == 0 ? pick(1, 400'000) : pick(1, 20'000));
    }
    switch (pick(0, 2)) {
      case 0:
        break;  // all 1
      case 1:
        request.add_dp_degrees(kDegrees[pick(0, 3)]);
        break;
      default:
        for (int i = 0; i < n; ++i)
          request.add_dp_degrees(kDegrees[pick(0, 3)]);
    }
    request.set_search_range_m(kRanges[pick(0, 3)]);
    request.set_search_interval(pick(1, 1024));
    request.set_min_chunk_size_m(kMinimums[pick(0, 3)]);
    if (pick(0, 1) == 0) request.set_filter_exlarge_params(false);
    request.set_engine(kEngines[pick(0, 2)]);
    requests.push_back(std::move(request));
  }
  return requests;
}

}  // namespace chunkplan::testing
