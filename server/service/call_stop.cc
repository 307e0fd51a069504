#include "server/service/call_stop.h"

#include <algorithm>
#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace chunkplan::service {

planner::StopCheck CallStopCheck(const grpc::CallbackServerContext* context,
                                 std::chrono::steady_clock::time_point arrived,
                                 absl::Duration budget) {
  // time_point::max() when the call has no deadline.
  const std::chrono::system_clock::time_point deadline = context->deadline();
  // Clamped to a day, so that the sum cannot overflow.
  const std::chrono::steady_clock::time_point budget_end =
      arrived + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    absl::ToChronoNanoseconds(std::clamp(
                        budget, absl::ZeroDuration(), absl::Hours(24))));
  return [context, deadline, budget_end, budget]() -> absl::Status {
    // The deadline first: gRPC also marks a call cancelled when its deadline
    // passes, and the caller wants to know which of the two happened.
    if (std::chrono::system_clock::now() >= deadline) {
      return absl::DeadlineExceededError(
          "the call's deadline passed before the search finished");
    }
    if (std::chrono::steady_clock::now() >= budget_end) {
      return absl::DeadlineExceededError(absl::StrCat(
          "the search ran past this server's budget of ",
          absl::FormatDuration(budget),
          " per search (--max_search_time); narrow search_range_m, widen "
          "search_interval, or ask the operator for a larger budget"));
    }
    if (context->IsCancelled()) {
      return absl::CancelledError("the call was cancelled mid-search");
    }
    return absl::OkStatus();
  };
}

}  // namespace chunkplan::service
