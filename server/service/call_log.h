#ifndef CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_
#define CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_

// What the service records about each finished call, and its one log line.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/planner/search_types.h"

namespace chunkplan::service {

// One finished call.
struct CallRecord {
  const char* method = "Search";  // the RPC: "Search", "Layout", "Frontier"
  std::string peer;               // the client's address as gRPC names it
  uint64_t params = 0;            // entries in the request's numels
  uint64_t candidates = 0;        // grid points swept; 0 when no search ran
  // The engine that ran, or the one requested when no search finished.
  planner::Engine engine = planner::Engine::kAuto;
  uint64_t micros = 0;  // from the handler's start to the answer
  // Why `engine` answered instead of the engine first chosen (a GPU that
  // failed mid-search); empty when it did not.
  std::string fallback_reason;
  absl::Status status;  // what the client is answered
};

// Logs `record` as one line at info level on spdlog's default logger:
// "search peer=... params=... candidates=... engine=... micros=...
// code=... [message="..."] [fallback="..."]" ("layout ..." for Layout).
void LogCall(const CallRecord& record);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_
