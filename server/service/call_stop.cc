#include "server/service/call_stop.h"

#include <algorithm>
#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace chunkplan::service {
namespace {

// The payload that marks InlineStop's status.
constexpr absl::string_view kMovedToPool = "chunkplan.dev/moved-to-pool";

// `d`, clamped to [0, a day] so that sums with a time point cannot
// overflow, as a steady_clock duration.
std::chrono::steady_clock::duration Clamped(absl::Duration d) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      absl::ToChronoNanoseconds(
          std::clamp(d, absl::ZeroDuration(), absl::Hours(24))));
}

}  // namespace

CallStop::CallStop(const grpc::CallbackServerContext* context,
                   std::chrono::steady_clock::time_point arrived,
                   absl::Duration budget)
    : context_(context),
      deadline_(context->deadline()),
      budget_end_(arrived + Clamped(budget)),
      budget_(budget) {}

absl::Status CallStop::operator()() const {
  // The deadline first: gRPC also marks a call cancelled when its deadline
  // passes, and the caller wants to know which of the two happened.
  if (std::chrono::system_clock::now() >= deadline_) {
    return absl::DeadlineExceededError(
        "the call's deadline passed before the search finished");
  }
  if (std::chrono::steady_clock::now() >= budget_end_) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the search ran past this server's budget of ",
        absl::FormatDuration(budget_),
        " per search (--max_search_time); narrow search_range_m, widen "
        "search_interval, or ask the operator for a larger budget"));
  }
  if (context_->IsCancelled()) {
    return absl::CancelledError("the call was cancelled mid-search");
  }
  return absl::OkStatus();
}

InlineStop::InlineStop(const CallStop& call, absl::Duration slice)
    : call_(call),
      slice_end_(std::chrono::steady_clock::now() + Clamped(slice)) {}

absl::Status InlineStop::operator()() const {
  if (absl::Status s = call_(); !s.ok()) return s;
  if (std::chrono::steady_clock::now() < slice_end_) return absl::OkStatus();
  absl::Status moved =
      absl::UnavailableError("the search outgrew the callback thread's slice");
  moved.SetPayload(kMovedToPool, absl::Cord());
  return moved;
}

bool IsMovedToPool(const absl::Status& status) {
  return status.GetPayload(kMovedToPool).has_value();
}

}  // namespace chunkplan::service
