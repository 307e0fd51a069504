#ifndef CHUNKPLAN_SERVER_SERVICE_CALL_STOP_H_
#define CHUNKPLAN_SERVER_SERVICE_CALL_STOP_H_

// The planner's StopCheck for one gRPC call: the planner asks it between
// slices of work, so a call whose deadline passes, or that its client
// cancels, stops searching within a slice and frees its worker.

#include <chrono>

#include "absl/time/time.h"
#include "grpcpp/server_context.h"
#include "server/planner/search_types.h"

namespace chunkplan::service {

// A StopCheck that answers DEADLINE_EXCEEDED once `context`'s deadline has
// passed or, where that comes first, once `budget` (the server's
// --max_search_time) has passed since `arrived`, each with a message naming
// which; CANCELLED once the call is cancelled (by its client, or by a server
// shutdown whose grace has run out); and OK otherwise. Safe to call from
// several threads. `context` must outlive every use of the returned function
// (the service calls it only before it finishes the call).
planner::StopCheck CallStopCheck(const grpc::CallbackServerContext* context,
                                 std::chrono::steady_clock::time_point arrived,
                                 absl::Duration budget);

// The StopCheck of a search run inline on the gRPC callback thread that
// received it: `call`'s answer while that is not OK; else, once `slice` has
// passed since this function was called, a status for which
// IsMovedToPool holds (the search is to continue on the worker pool, from
// its start); else OK. The planner passes any such status up unchanged.
planner::StopCheck InlineStopCheck(planner::StopCheck call,
                                   absl::Duration slice);

// Whether `status` is InlineStopCheck's "move to the worker pool".
bool IsMovedToPool(const absl::Status& status);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CALL_STOP_H_
