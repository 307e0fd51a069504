#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_ORACLE_RUNNER_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_ORACLE_RUNNER_H_

// Runs the Python oracle (tests/oracle/chunk_search_oracle.py) over many
// requests in one interpreter and reads its answers back.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::testing {

// The interpreter and the oracle script, as the build passes them.
struct OracleCommand {
  std::string python;   // e.g. /usr/bin/python3 (with Debian's numpy)
  std::string script;   // path of chunk_search_oracle.py
  bool strict = false;  // --strict: exactly the seed, no extension
};

// One answer line per request, in order: the oracle run once in --jsonl mode
// over `request_lines` (each one ChunkSearchRequest in JSON, no newline).
// Errors: INTERNAL when the temp file cannot be written, the oracle cannot
// be started, exits non-zero, or answers a different number of lines.
absl::StatusOr<std::vector<std::string>> RunOracleJsonl(
    const OracleCommand& command,
    const std::vector<std::string>& request_lines);

// The answer part of a response from one oracle line. Errors:
// INVALID_ARGUMENT with the line itself when the oracle answered
// {"error": ...} or the line is not a ChunkSearchResponse.
absl::StatusOr<v1::ChunkSearchResponse> ParseOracleAnswer(
    absl::string_view line);

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_ORACLE_RUNNER_H_
