#include "server/service/call_log.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace chunkplan::service {

spdlog::level::level_enum CallLogLevel(const CallRecord& record) {
  return record.status.ok() && record.fallback_reason.empty()
             ? spdlog::level::debug
             : spdlog::level::info;
}

bool CallIsLogged(const CallRecord& record) {
  return spdlog::should_log(CallLogLevel(record));
}

bool LogRateLimiter::Allow(Clock::time_point now, uint64_t* suppressed) {
  absl::MutexLock lock(&mu_);
  if (now >= window_end_) {
    window_end_ = now + std::chrono::seconds(1);
    in_window_ = 0;
  }
  if (in_window_ >= per_second_) {
    ++suppressed_;
    return false;
  }
  ++in_window_;
  *suppressed = suppressed_;
  suppressed_ = 0;
  return true;
}

void LogCall(const CallRecord& record) {
  const spdlog::level::level_enum level = CallLogLevel(record);
  if (!spdlog::should_log(level)) return;
  static LogRateLimiter* const limiter =
      new LogRateLimiter(kCallLinesPerSecond);
  uint64_t suppressed = 0;
  if (!limiter->Allow(LogRateLimiter::Clock::now(), &suppressed)) return;
  if (suppressed > 0) {
    spdlog::warn("{} call log lines held back (more than {} a second)",
                 suppressed, kCallLinesPerSecond);
  }
  const planner::Engine engine = record.engine;
  std::string line = absl::StrCat(
      absl::AsciiStrToLower(record.method), " peer=", record.peer,
      " params=", record.params, " candidates=", record.candidates,
      " engine=", planner::EngineName(engine), " micros=", record.micros,
      " code=", absl::StatusCodeToString(record.status.code()));
  if (!record.status.ok()) {
    absl::StrAppend(&line, " message=\"", record.status.message(), "\"");
  }
  if (!record.fallback_reason.empty()) {
    absl::StrAppend(&line, " fallback=\"", record.fallback_reason, "\"");
  }
  spdlog::log(level, line);
}

}  // namespace chunkplan::service
