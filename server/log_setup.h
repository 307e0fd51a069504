#ifndef CHUNKPLAN_SERVER_LOG_SETUP_H_
#define CHUNKPLAN_SERVER_LOG_SETUP_H_

// chunkplan-server's logging: spdlog's default logger, on standard error,
// one line per record, flushed per line, as text or as one JSON object.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace chunkplan::server {

// Makes spdlog's default logger write to standard error at `level` (trace,
// debug, info, warn, error, critical or off) in `format`:
//   text  "[2024-01-02 03:04:05.678] [info] <message>"
//   json  {"time":"2024-01-02T03:04:05.678901Z","level":"info","msg":"..."}
//         (UTC; the message JSON-escaped), one object per line.
// Errors: INVALID_ARGUMENT naming the accepted values, with the logger left
// as it was.
absl::Status ConfigureLogging(absl::string_view level,
                              absl::string_view format);

// `text` as the contents of a JSON string (without the quotes): quote,
// backslash and control characters escaped, other bytes as they are.
std::string JsonEscape(absl::string_view text);

}  // namespace chunkplan::server

#endif  // CHUNKPLAN_SERVER_LOG_SETUP_H_
