#ifndef CHUNKPLAN_SERVER_SERVICE_CALL_FINISHER_H_
#define CHUNKPLAN_SERVER_SERVICE_CALL_FINISHER_H_

// How every call of the service ends, admitted or not: its status settled,
// its record timed, logged (LogCall, call_log.h) and passed to the
// observer (the server's metrics), then the client answered. The service's
// logging and metrics live here, apart from its handlers.

#include <chrono>
#include <functional>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"
#include "server/service/call_log.h"

namespace chunkplan::service {

class CallFinisher {
 public:
  using Clock = std::chrono::steady_clock;

  // Called once per finished call, on the thread that finishes it, before
  // the client is answered.
  using CallObserver = std::function<void(const CallRecord&)>;

  // `max_search_time`: the server's budget per call (CallStop's), to name
  // why a call its client ended was stopped.
  CallFinisher(absl::Duration max_search_time, CallObserver observer);

  // Records `record` with `status` (a call its client ended, by a reset
  // stream or a deadline passed on its side, counted as such whatever the
  // handler found first) and its time since `started`, logs it where
  // CallIsLogged, passes it to the observer, then answers the call through
  // `reactor`.
  void Finish(grpc::CallbackServerContext* context,
              grpc::ServerUnaryReactor* reactor, CallRecord record,
              absl::Status status, Clock::time_point started) const;

  // The debug line of an admitted call (method, peer, params), where debug
  // lines are logged.
  static void LogAdmitted(const grpc::CallbackServerContext& context,
                          const CallRecord& record);

 private:
  const absl::Duration max_search_time_;
  const CallObserver observer_;
};

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CALL_FINISHER_H_
