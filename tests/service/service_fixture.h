#ifndef CHUNKPLAN_TESTS_SERVICE_SERVICE_FIXTURE_H_
#define CHUNKPLAN_TESTS_SERVICE_SERVICE_FIXTURE_H_

// A ChunkSearchService behind a real gRPC server, reached through the
// server's in-process channel, and the requests the service tests share.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "server/service/chunk_search_service.h"
#include "testing/held_engine.h"
#include "testing/model_shapes.h"

namespace chunkplan::testing {

// Longest any single wait in these tests may take before the test fails: a
// bound so that a broken server fails the test instead of hanging it, never
// a performance threshold.
inline constexpr std::chrono::seconds kPatience{60};

// The calls the service has finished, as its CallObserver reports them.
class RecordLog {
 public:
  void Add(const service::CallRecord& record);
  // Waits until at least `count` calls are recorded; false after kPatience.
  bool WaitForCount(size_t count);
  std::vector<service::CallRecord> All();

 private:
  std::mutex mu_;
  std::condition_variable added_;
  std::vector<service::CallRecord> records_;
};

// A call started with the callback client API; the test waits on `status`.
struct PendingCall {
  grpc::ClientContext context;
  v1::ChunkSearchRequest request;
  v1::ChunkSearchResponse response;
  std::promise<grpc::Status> done;
  std::future<grpc::Status> status = done.get_future();
};

// A ChunkSearchService whose engines hold the marked searches
// (HoldMarkedSearches), e.g. HeldSweepRequest's.
class ServiceTest : public ::testing::Test {
 protected:
  // The options of the service under test; fixtures for limits override it.
  virtual service::ServiceOptions Options() const { return {}; }

  // Whether channel_ reaches the server over loopback TCP (port 0, read
  // back) instead of its in-process channel, which has no HTTP/2 and none
  // of gRPC's HTTP filters (message compression among them).
  virtual bool OverTcp() const { return false; }

  void SetUp() override;
  void TearDown() override;

  // A blocking call with a deadline of `timeout` from now.
  grpc::Status Search(const v1::ChunkSearchRequest& request,
                      v1::ChunkSearchResponse* response,
                      std::chrono::milliseconds timeout = kPatience);

  // Starts a call without waiting for it.
  std::unique_ptr<PendingCall> StartSearch(
      const v1::ChunkSearchRequest& request);

  // Waits until `condition` holds; false after kPatience.
  static bool WaitUntil(const std::function<bool()>& condition);

  // Expects the GPT-2 search to be answered with the published chunk size:
  // the server still serves.
  void ExpectServing();

  std::unique_ptr<service::ChunkSearchService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::ChunkSearch::Stub> stub_;
  RecordLog records_;
};

// Sends `body` unparsed as the request of `method` (e.g.
// "/chunkplan.v1.ChunkSearch/Plan") on `channel`; the call's status.
grpc::Status SendRawBytes(
    const std::shared_ptr<grpc::Channel>& channel, const std::string& body,
    const std::string& method = "/chunkplan.v1.ChunkSearch/Search");

// ColossalAI's own test of search_chunk_configuration
// (tests/test_zero/test_gemini/test_search.py): the model zoo's
// transformers_gpt_lm, GPT2LMHeadModel(n_layer=2, n_head=4, n_embd=128,
// vocab_size=50258, tie_word_embeddings=False), searched with
// search_range_m=1, search_interval=128, min_chunk_size_m=0 and the filter
// on. Its parameters in model.parameters() order, built from the layer
// shapes. (examples/gpt2_colossalai.json is the tied variant, without
// lm_head.weight; the filter drops the embedding-sized parameters, so the
// published chunk size is the same for both.)
v1::ChunkSearchRequest Gpt2ColossalAiRequest();
// The chunk size ColossalAI's test asserts for it.
inline constexpr uint64_t kGpt2ColossalAiChunkSize = kGpt2TestChunkSize;

// A CPU_SWEEP search that the fixture's engines hold until its call is
// stopped (testing/held_engine.h): 4,000 parameters, one of them
// kHeldNumel, and 2^20 + 1 candidates (heavy: within the default
// max_sweep_work, beyond max_inline_work).
v1::ChunkSearchRequest HeldSweepRequest();

// A CPU_PLATEAU search held the same way: 20,000 parameters and 2^20 + 1
// candidates, a work bound beyond the default max_inline_work.
v1::ChunkSearchRequest HeldPlateauRequest();

// `count` random requests from `seed`, small enough for every engine.
std::vector<v1::ChunkSearchRequest> RandomRequests(int count, uint64_t seed);

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_SERVICE_SERVICE_FIXTURE_H_
