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

// `deadline` as a steady_clock time: max() where it is max() (no deadline)
// or beyond what the steady clock can hold.
CallStop::Clock::time_point SteadyDeadline(
    std::chrono::system_clock::time_point deadline) {
  using System = std::chrono::system_clock;
  if (deadline == System::time_point::max()) {
    return CallStop::Clock::time_point::max();
  }
  const CallStop::Clock::time_point steady_now = CallStop::Clock::now();
  const System::time_point system_now = System::now();
  if (deadline <= system_now) return steady_now;  // already passed
  const auto left = std::chrono::duration_cast<CallStop::Clock::duration>(
      deadline - system_now);
  if (left >= CallStop::Clock::time_point::max() - steady_now) {
    return CallStop::Clock::time_point::max();
  }
  return steady_now + left;
}

}  // namespace

absl::Status CancelledCallStatus(CallStop::Clock::time_point arrived,
                                 CallStop::Clock::time_point now,
                                 CallStop::Clock::time_point deadline) {
  if (deadline != CallStop::Clock::time_point::max()) {
    const CallStop::Clock::duration slack =
        std::chrono::milliseconds(20) + (deadline - arrived) / 50;
    if (now >= deadline - slack) {
      return absl::DeadlineExceededError(
          "the call's deadline passed (its client ended it) before it was "
          "answered");
    }
  }
  return absl::CancelledError("the call was cancelled before it was answered");
}

CallStop::CallStop(const grpc::CallbackServerContext* context,
                   Clock::time_point arrived, absl::Duration budget)
    : context_(context),
      arrived_(arrived),
      deadline_(SteadyDeadline(context->deadline())),
      budget_end_(arrived + Clamped(budget)),
      budget_(budget) {}

absl::Status CallStop::CheckAt(Clock::time_point now) const {
  // The deadline first: gRPC also marks a call cancelled when its deadline
  // passes, and the caller wants to know which of the two happened.
  if (now >= deadline_) {
    return absl::DeadlineExceededError(
        "the call's deadline passed before the search finished");
  }
  if (now >= budget_end_) {
    return absl::DeadlineExceededError(absl::StrCat(
        "the search ran past this server's budget of ",
        absl::FormatDuration(budget_),
        " per search (--max_search_time); narrow search_range_m, widen "
        "search_interval, or ask the operator for a larger budget"));
  }
  if (context_->IsCancelled())
    return CancelledCallStatus(arrived_, now, deadline_);
  return absl::OkStatus();
}

InlineStop::InlineStop(const CallStop& call, CallStop::Clock::time_point start,
                       absl::Duration slice)
    : call_(call), slice_end_(start + Clamped(slice)) {}

absl::Status InlineStop::operator()() const {
  const CallStop::Clock::time_point now = CallStop::Clock::now();
  if (absl::Status s = call_.CheckAt(now); !s.ok()) return s;
  if (now < slice_end_) return absl::OkStatus();
  absl::Status moved =
      absl::UnavailableError("the search outgrew the callback thread's slice");
  moved.SetPayload(kMovedToPool, absl::Cord());
  return moved;
}

bool IsMovedToPool(const absl::Status& status) {
  return status.GetPayload(kMovedToPool).has_value();
}

}  // namespace chunkplan::service
