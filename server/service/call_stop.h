#ifndef CHUNKPLAN_SERVER_SERVICE_CALL_STOP_H_
#define CHUNKPLAN_SERVER_SERVICE_CALL_STOP_H_

// The planner's StopCheck for one gRPC call: the planner asks it between
// slices of work, so a call whose deadline passes, or that its client
// cancels, stops searching within a slice and frees its worker.
//
// Both checks are plain objects that live on the stack of the code that
// runs the search; StopCheckOf wraps one in a planner::StopCheck that holds
// only a reference (no allocation per call).

#include <chrono>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "chunkplan/planner/search_types.h"
#include "grpcpp/server_context.h"

namespace chunkplan::service {

// The status of a call that arrived at `arrived`, found cancelled at `now`,
// whose deadline is `deadline` (steady times; max(): none):
// DEADLINE_EXCEEDED from a slack before the deadline on, CANCELLED before
// that. The slack, 20 ms and 1/50 of the call's timeout, covers how much
// earlier its client's deadline passes (the client then resets the stream):
// the transit of the request, and the rounding up of the timeout on the
// wire (grpc-timeout: 1% of it at most).
absl::Status CancelledCallStatus(
    std::chrono::steady_clock::time_point arrived,
    std::chrono::steady_clock::time_point now,
    std::chrono::steady_clock::time_point deadline);

// Answers DEADLINE_EXCEEDED once `context`'s deadline has passed or, where
// that comes first, once `budget` (the server's --max_search_time) has
// passed since `arrived`, each with a message naming which; once the call
// is cancelled (by its client, or by a server shutdown whose grace has run
// out), CancelledCallStatus; and OK otherwise. Safe to call from several
// threads.
// `context` must outlive it (the service asks it only before it finishes
// the call).
//
// Each check reads the steady clock once: the deadline, a system_clock
// time, is turned into a steady one at construction (two clock reads, none
// for a call without a deadline), which also keeps a step of the wall
// clock out of the check.
class CallStop {
 public:
  using Clock = std::chrono::steady_clock;

  CallStop(const grpc::CallbackServerContext* context,
           Clock::time_point arrived, absl::Duration budget);

  absl::Status operator()() const { return CheckAt(Clock::now()); }

  // The check as of `now` (a steady_clock reading the caller has taken).
  absl::Status CheckAt(Clock::time_point now) const;

 private:
  const grpc::CallbackServerContext* context_;
  Clock::time_point arrived_;
  Clock::time_point deadline_;  // max(): none
  Clock::time_point budget_end_;
  absl::Duration budget_;
};

// The check of a search run inline on the gRPC callback thread that
// received it: `call`'s answer while that is not OK; else, once `slice`
// has passed since `start`, a status for which IsMovedToPool holds (the
// search is to continue on the worker pool, from its start); else OK. One
// steady clock read per check serves both. The planner passes any such
// status up unchanged. `call` must outlive it.
class InlineStop {
 public:
  InlineStop(const CallStop& call, CallStop::Clock::time_point start,
             absl::Duration slice);

  absl::Status operator()() const;

 private:
  const CallStop& call_;
  CallStop::Clock::time_point slice_end_;
};

// Whether `status` is InlineStop's "move to the worker pool".
bool IsMovedToPool(const absl::Status& status);

// A planner::StopCheck that asks `check` (which must outlive it).
template <typename Check>
planner::StopCheck StopCheckOf(const Check& check) {
  return [&check]() { return check(); };
}

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CALL_STOP_H_
