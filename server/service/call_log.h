#ifndef CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_
#define CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_

// What the service records about each finished call, and its one log line.

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "server/planner/search_types.h"
#include "spdlog/common.h"

namespace chunkplan::service {

// One finished call.
struct CallRecord {
  const char* method = "Search";  // the RPC: "Search", "Layout", "Frontier"
  // The client's address as gRPC names it; filled only for a call that is
  // logged (CallIsLogged), as it costs an allocation per call.
  std::string peer;
  uint64_t params = 0;      // entries in the request's numels
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
};

// The level of `record`'s line: info for a call that failed or whose
// engine fell back (what an operator looks for), debug for a call answered
// OK by the engine chosen (counted by the metrics endpoint; at tens of
// thousands of calls a second a line each serves no reader and costs a
// write per call).
spdlog::level::level_enum CallLogLevel(const CallRecord& record);

// Whether spdlog's default logger writes `record`'s line at its level.
bool CallIsLogged(const CallRecord& record);

// Logs `record` as one line at CallLogLevel on spdlog's default logger:
// "search peer=... params=... candidates=... engine=... micros=...
// code=... [message="..."] [fallback="..."]" ("layout ..." for Layout).
// Builds nothing when the logger would drop it.
void LogCall(const CallRecord& record);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_CALL_LOG_H_
