#ifndef CHUNKPLAN_SERVER_SERVICE_CALL_SCHEDULER_H_
#define CHUNKPLAN_SERVER_SERVICE_CALL_SCHEDULER_H_

// Where a call of the service runs once its request is prepared: admitted
// (Admission), then on the gRPC callback thread that received it (a light
// call, for at most inline_slice) or on a fixed worker pool, under the
// call's StopCheck (call_stop.h); its answer held against the unsent-answer
// budget until gRPC is done with the call, and the call finished
// (CallFinisher). Why a worker pool, and when not: call_scheduler.cc.

#include <chrono>
#include <functional>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "chunkplan/planner/search_types.h"
#include "common/worker_pool.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/byte_buffer.h"
#include "server/service/admission.h"
#include "server/service/call_finisher.h"
#include "server/service/call_log.h"
#include "server/service/service_options.h"

namespace chunkplan::service {

class CallScheduler {
 public:
  using Clock = std::chrono::steady_clock;

  // The work of one admitted call: runs the planner on the request with the
  // call's StopCheck, fills the record's engine, candidates and fallback
  // reason, and serializes the answer into the response bytes.
  using Work = std::function<absl::Status(const planner::StopCheck& stop,
                                          CallRecord& record,
                                          grpc::ByteBuffer* response)>;

  // Work as the callback thread runs it: borrowed, so that a search served
  // inline needs no Work (a std::function that holds the request, an
  // allocation per call).
  using WorkHere = absl::FunctionRef<absl::Status(
      const planner::StopCheck& stop, CallRecord& record,
      grpc::ByteBuffer* response)>;
  // The owning Work of the same call, for the pool; asked at most once, and
  // `here` is not run after it.
  using WorkToPool = absl::FunctionRef<Work()>;

  // A pool of options.search_threads workers (0: one per core); the call's
  // limits from `options` (max_search_time, inline_slice). `admission` and
  // `finisher` must outlive it. Destroying it waits for the calls queued.
  CallScheduler(const ServiceOptions& options, Admission& admission,
                const CallFinisher& finisher);

  // The one path of every call, after its request was prepared (parsed,
  // checked against the limits, converted: request_intake.h), `prepared`
  // the status of that: admits the call, light when `run_inline` and heavy
  // otherwise, holding record.held_params, then runs `here` on this thread
  // when `run_inline` and queues to_pool() on the pool otherwise; answers
  // at once when preparing failed or admission refused. Returns the call's
  // reactor.
  grpc::ServerUnaryReactor* Serve(grpc::CallbackServerContext* context,
                                  const absl::Status& prepared, WorkHere here,
                                  WorkToPool to_pool,
                                  grpc::ByteBuffer* response, CallRecord record,
                                  Clock::time_point started, bool run_inline);

 private:
  // The reactor of an admitted call: holds the bytes of its answer against
  // the unsent-answer budget until gRPC is done with the call, then deletes
  // itself (call_scheduler.cc).
  class AnswerReactor;

  // Queues an admitted call's `work` on the pool (RunWork).
  void Submit(grpc::CallbackServerContext* context, AnswerReactor* reactor,
              Work work, grpc::ByteBuffer* response, CallRecord record,
              Clock::time_point started);

  // Runs an admitted call's `here` on this (the callback) thread under the
  // call's StopCheck and inline_slice (InlineStop), then finishes it; a
  // search that outgrows the slice is handed to Submit instead (as
  // to_pool()), its slot kept, and starts again on a worker.
  void RunInline(grpc::CallbackServerContext* context, AnswerReactor* reactor,
                 WorkHere here, WorkToPool to_pool, grpc::ByteBuffer* response,
                 CallRecord record, Clock::time_point started);

  // Runs on a worker: `work` under the call's StopCheck, then finishes it.
  // A call on the pool holds a light slot exactly when it moved there from
  // the callback thread (CallRecord::moved_to_pool).
  void RunWork(grpc::CallbackServerContext* context, AnswerReactor* reactor,
               const Work& work, grpc::ByteBuffer* response, CallRecord record,
               Clock::time_point started);

  // `status` when it is not OK; otherwise OK once the answer in `response`
  // is held by `reactor` (Admission::HoldAnswer), or RESOURCE_EXHAUSTED
  // (the answer dropped) when it would pass the budget.
  absl::Status HoldAnswer(AnswerReactor* reactor, absl::Status status,
                          grpc::ByteBuffer* response);

  const absl::Duration max_search_time_;
  const absl::Duration inline_slice_;
  Admission& admission_;
  const CallFinisher& finisher_;
  // Last, so that it is destroyed (and its workers joined) first.
  common::WorkerPool pool_;
};

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CALL_SCHEDULER_H_
