#ifndef CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_
#define CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_

// What the service records about each finished call, and its one log line.

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "chunkplan/planner/search_types.h"
#include "server/service/model_notes.h"
#include "spdlog/common.h"

namespace chunkplan::service {

// One finished call.
struct CallRecord {
  // The RPC: "Search", "Layout", "Frontier", "Describe", "Plan".
  const char* method = "Search";
  // The client's address as gRPC names it; filled only for a call that is
  // logged (CallIsLogged), as it costs an allocation per call.
  std::string peer;
  uint64_t params = 0;  // entries in the request's numels
  // What an admitted heavy call holds of
  // ServiceOptions::max_params_in_flight: its params, or a Plan's weight
  // (PlanWeight, request_intake.h). Set at intake.
  uint64_t held_params = 0;
  uint64_t candidates = 0;  // grid points swept; 0 when no search ran
  // The engine that ran, or the one requested when no search finished.
  planner::Engine engine = planner::Engine::kAuto;
  uint64_t micros = 0;  // from the handler's start to the answer
  // Served on the gRPC callback thread that received it
  // (ServiceOptions::max_inline_work), not on a worker.
  bool ran_inline = false;
  // Started inline, outgrew ServiceOptions::inline_slice and was served on
  // a worker.
  bool moved_to_pool = false;
  // Why `engine` answered instead of the engine first chosen (a GPU that
  // failed mid-search); empty when it did not.
  std::string fallback_reason;
  absl::Status status;  // what the client is answered
  // The request's model, once described (its warnings go to the answer).
  ModelNotes model;
};

// The level of `record`'s line: info for a call that failed or whose
// engine fell back (what an operator looks for), debug for a call answered
// OK by the engine chosen (counted by the metrics endpoint; at tens of
// thousands of calls a second a line each serves no reader and costs a
// write per call).
spdlog::level::level_enum CallLogLevel(const CallRecord& record);

// Whether spdlog's default logger writes `record`'s line at its level.
bool CallIsLogged(const CallRecord& record);

// At most `per_second` lines let through in each one-second window (a
// window starts at the first line after the last one ended); the lines
// beyond are counted, and the count is handed to the next line let through.
// Thread-safe.
class LogRateLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogRateLimiter(uint32_t per_second) : per_second_(per_second) {}

  // Whether a line at `now` is let through; if so, `*suppressed` gets the
  // lines held back since the last line let through (else it is left).
  bool Allow(Clock::time_point now, uint64_t* suppressed);

 private:
  const uint32_t per_second_;
  absl::Mutex mu_;
  Clock::time_point window_end_ ABSL_GUARDED_BY(mu_);
  uint32_t in_window_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t suppressed_ ABSL_GUARDED_BY(mu_) = 0;
};

// Lines LogCall writes per second at most: a flood of failing calls (a
// stream-reset flood makes tens of thousands a second) costs the log a
// line a second more, not a line a call.
inline constexpr uint32_t kCallLinesPerSecond = 100;

// Logs `record` as one line at CallLogLevel on spdlog's default logger:
// "search peer=... params=... candidates=... engine=... micros=...
// code=... [message="..."] [fallback="..."]" ("layout ..." for Layout),
// at most kCallLinesPerSecond lines a second; the first line after lines
// were held back is preceded by a warning that counts them. Builds nothing
// when the logger would drop it.
void LogCall(const CallRecord& record);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_
