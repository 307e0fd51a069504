#include "server/service/call_stop.h"

#include <chrono>

#include "absl/status/status.h"

namespace chunkplan::service {

planner::StopCheck CallStopCheck(const grpc::CallbackServerContext* context) {
  // time_point::max() when the call has no deadline.
  const std::chrono::system_clock::time_point deadline = context->deadline();
  return [context, deadline]() -> absl::Status {
    // The deadline first: gRPC also marks a call cancelled when its deadline
    // passes, and the caller wants to know which of the two happened.
    if (std::chrono::system_clock::now() >= deadline) {
      return absl::DeadlineExceededError(
          "the call's deadline passed before the search finished");
    }
    if (context->IsCancelled()) {
      return absl::CancelledError("the call was cancelled mid-search");
    }
    return absl::OkStatus();
  };
}

}  // namespace chunkplan::service
