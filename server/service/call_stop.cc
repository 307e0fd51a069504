#include "server/service/call_stop.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace chunkplan::service {
namespace {

// The payload that marks InlineStopCheck's status.
constexpr absl::string_view kMovedToPool = "chunkplan.dev/moved-to-pool";

}  // namespace

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

planner::StopCheck InlineStopCheck(planner::StopCheck call,
                                   absl::Duration slice) {
  const std::chrono::steady_clock::time_point slice_end =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          absl::ToChronoNanoseconds(
              std::clamp(slice, absl::ZeroDuration(), absl::Hours(24))));
  return [call = std::move(call), slice_end]() -> absl::Status {
    if (absl::Status s = call(); !s.ok()) return s;
    if (std::chrono::steady_clock::now() < slice_end) return absl::OkStatus();
    absl::Status moved = absl::UnavailableError(
        "the search outgrew the callback thread's slice");
    moved.SetPayload(kMovedToPool, absl::Cord());
    return moved;
  };
}

bool IsMovedToPool(const absl::Status& status) {
  return status.GetPayload(kMovedToPool).has_value();
}

}  // namespace chunkplan::service
