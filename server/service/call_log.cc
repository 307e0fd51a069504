#include "server/service/call_log.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace chunkplan::service {

void LogCall(const CallRecord& record) {
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
  spdlog::info(line);
}

}  // namespace chunkplan::service
