#ifndef CHUNKPLAN_SERVER_SERVICE_CHUNK_SEARCH_SERVICE_H_
#define CHUNKPLAN_SERVER_SERVICE_CHUNK_SEARCH_SERVICE_H_

// chunkplan.v1.ChunkSearch on gRPC's callback API: checks the request
// against the server's limits, hands the search to the planner on a worker
// pool, and answers with the planner's status.
// (Why a worker pool, and why the raw callback method: the comments above
// Search in chunk_search_service.cc.)

#include <atomic>
#include <chrono>
#include <functional>

#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "common/worker_pool.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/planner/planner.h"
#include "server/service/call_log.h"
#include "server/service/service_options.h"

namespace chunkplan::service {

class ChunkSearchService final
    : public v1::ChunkSearch::WithRawCallbackMethod_Search<
          v1::ChunkSearch::Service> {
 public:
  using Clock = std::chrono::steady_clock;

  // Called once per finished call, on the thread that finishes it, before
  // the client is answered.
  using CallObserver = std::function<void(const CallRecord&)>;

  // Every call is logged with LogCall, then passed to `observer` if set.
  explicit ChunkSearchService(ServiceOptions options = {},
                              CallObserver observer = {});

  // Waits for searches already queued. The gRPC server that serves this
  // service must be shut down first.
  ~ChunkSearchService() override;

  // The RPC: `request` holds a serialized chunkplan.v1.ChunkSearchRequest,
  // `response` receives a serialized ChunkSearchResponse. Answers, besides
  // the planner's own errors (INVALID_ARGUMENT, RESOURCE_EXHAUSTED for
  // CPU_SWEEP work beyond max_sweep_work, FAILED_PRECONDITION for an engine
  // this server cannot run): INVALID_ARGUMENT for bytes that are not a
  // ChunkSearchRequest; RESOURCE_EXHAUSTED when numels or dp_degrees has
  // more than max_params entries or max_concurrent_searches searches are
  // already admitted; DEADLINE_EXCEEDED / CANCELLED when the call's deadline
  // passes or it is cancelled before the search ends.
  grpc::ServerUnaryReactor* Search(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;

  // Searches admitted and not yet answered.
  int searches_in_flight() const {
    return in_flight_.load(std::memory_order_acquire);
  }

  const planner::Planner& planner() const { return planner_; }
  const ServiceOptions& options() const { return options_; }

 private:
  // The planner's request for the serialized request in `bytes`, within
  // the limits (ParseRequest, then CheckAndConvert: request_intake.h); sets
  // record.params and record.engine once parsed. Errors: INVALID_ARGUMENT
  // (unparsable bytes, an unknown engine), RESOURCE_EXHAUSTED (max_params).
  absl::StatusOr<planner::SearchRequest> Prepare(const grpc::ByteBuffer& bytes,
                                                 CallRecord& record) const;

  // Takes a slot of max_concurrent_searches; false when none is free.
  bool Admit();

  // Runs on a worker: the search itself, then Finish.
  void RunSearch(grpc::CallbackServerContext* context,
                 grpc::ServerUnaryReactor* reactor,
                 const planner::SearchRequest& request,
                 grpc::ByteBuffer* response, CallRecord record,
                 Clock::time_point started);

  // Records and logs the call (timed from `started`), then answers it with
  // `status`.
  void Finish(grpc::ServerUnaryReactor* reactor, CallRecord record,
              absl::Status status, Clock::time_point started);

  const ServiceOptions options_;
  const planner::Planner planner_;
  const CallObserver observer_;
  std::atomic<int> in_flight_{0};
  // Last, so that it is destroyed (and its workers joined) first.
  common::WorkerPool pool_;
};

// Applies the server-wide parts of `options` (the receive message size
// limit) to `builder`.
void ApplyServerOptions(const ServiceOptions& options,
                        grpc::ServerBuilder& builder);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CHUNK_SEARCH_SERVICE_H_
