#include "server/service/call_scheduler.h"

#include <utility>

#include "server/service/call_stop.h"

namespace chunkplan::service {

// Why a reactor of our own: a call's slot is freed once its answer is
// ready, but gRPC holds the answer until the client has read it, which a
// client need never do. The answer's bytes are counted from then until
// OnDone, when gRPC is done with the call (sent, cancelled or its
// connection closed), so that max_unsent_answer_bytes bounds them.
class CallScheduler::AnswerReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit AnswerReactor(Admission& admission) : admission_(admission) {}

  // Counts `bytes`, already held by Admission::HoldAnswer, as this call's
  // until OnDone.
  void Hold(uint64_t bytes) { held_ = bytes; }

  void OnDone() override {
    if (held_ != 0) admission_.ReleaseAnswer(held_);
    delete this;
  }

 private:
  Admission& admission_;
  uint64_t held_ = 0;
};

CallScheduler::CallScheduler(const ServiceOptions& options,
                             Admission& admission, const CallFinisher& finisher)
    : max_search_time_(options.max_search_time),
      inline_slice_(options.inline_slice),
      admission_(admission),
      finisher_(finisher),
      pool_(common::ThreadsOrCores(options.search_threads)) {}

// Why a worker pool, and when not: the callback API runs handlers on a few
// gRPC-owned threads, which also dispatch every other call (health checks
// included). A CPU_SWEEP can run for seconds; run there it would stall
// them. The handler therefore checks and converts the request (microseconds
// to a few milliseconds for a million parameters), admits it against
// max_concurrent_searches with an atomic counter, and queues it on a fixed
// pool of search_threads workers; the queue never holds more than the two
// limits together, and a search beyond its limit is answered
// RESOURCE_EXHAUSTED at once. A cheap plateau-engine Search (RunsInline:
// every model at GeminiPlugin's defaults) is the exception: the hop to a
// worker (a wake-up and two context switches) costs more than the search,
// so it runs on the callback thread, for at most inline_slice before it
// moves to the pool after all. It is admitted by its estimated work, against
// a limit of its own (max_concurrent_light_searches), so that heavy callers
// holding every heavy slot cannot starve it.
grpc::ServerUnaryReactor* CallScheduler::Serve(
    grpc::CallbackServerContext* context, const absl::Status& prepared,
    WorkHere here, WorkToPool to_pool, grpc::ByteBuffer* response,
    CallRecord record, Clock::time_point started, bool run_inline) {
  // A call answered before admission has no answer to hold.
  grpc::ServerUnaryReactor* refused = context->DefaultReactor();
  if (!prepared.ok()) {
    finisher_.Finish(context, refused, std::move(record), prepared, started);
    return refused;
  }
  if (absl::Status admitted = admission_.Admit(run_inline, record.held_params);
      !admitted.ok()) {
    finisher_.Finish(context, refused, std::move(record), std::move(admitted),
                     started);
    return refused;
  }
  auto* reactor = new AnswerReactor(admission_);
  CallFinisher::LogAdmitted(*context, record);
  if (run_inline) {
    RunInline(context, reactor, here, to_pool, response, std::move(record),
              started);
  } else {
    Submit(context, reactor, to_pool(), response, std::move(record), started);
  }
  return reactor;
}

void CallScheduler::Submit(grpc::CallbackServerContext* context,
                           AnswerReactor* reactor, Work work,
                           grpc::ByteBuffer* response, CallRecord record,
                           Clock::time_point started) {
  pool_.Submit([this, context, reactor, response, started,
                record = std::move(record), work = std::move(work)]() mutable {
    RunWork(context, reactor, work, response, std::move(record), started);
  });
}

void CallScheduler::RunInline(grpc::CallbackServerContext* context,
                              AnswerReactor* reactor, WorkHere here,
                              WorkToPool to_pool, grpc::ByteBuffer* response,
                              CallRecord record, Clock::time_point started) {
  const CallStop call(context, started, max_search_time_);
  const InlineStop check(call, started, inline_slice_);
  const planner::StopCheck stop = StopCheckOf(check);
  absl::Status status = check();
  if (status.ok()) status = here(stop, record, response);
  if (IsMovedToPool(status)) {
    record.moved_to_pool = true;
    Submit(context, reactor, to_pool(), response, std::move(record), started);
    return;
  }
  record.ran_inline = true;
  admission_.Release(/*light=*/true, record.held_params);
  status = HoldAnswer(reactor, std::move(status), response);
  finisher_.Finish(context, reactor, std::move(record), std::move(status),
                   started);
}

void CallScheduler::RunWork(grpc::CallbackServerContext* context,
                            AnswerReactor* reactor, const Work& work,
                            grpc::ByteBuffer* response, CallRecord record,
                            Clock::time_point started) {
  const CallStop check(context, started, max_search_time_);
  const planner::StopCheck stop = StopCheckOf(check);
  // A call that waited for a worker past its deadline does not start.
  absl::Status status = check();
  if (status.ok()) status = work(stop, record, response);
  // Free the slot before answering, so that a client that calls again as
  // soon as it has its answer finds the slot free.
  admission_.Release(/*light=*/record.moved_to_pool, record.held_params);
  status = HoldAnswer(reactor, std::move(status), response);
  finisher_.Finish(context, reactor, std::move(record), std::move(status),
                   started);
}

absl::Status CallScheduler::HoldAnswer(AnswerReactor* reactor,
                                       absl::Status status,
                                       grpc::ByteBuffer* response) {
  if (!status.ok()) return status;
  const uint64_t bytes = response->Length();
  if (absl::Status held = admission_.HoldAnswer(bytes); !held.ok()) {
    response->Clear();
    return held;
  }
  reactor->Hold(bytes);
  return absl::OkStatus();
}

}  // namespace chunkplan::service
