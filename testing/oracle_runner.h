#ifndef CHUNKPLAN_TESTING_ORACLE_RUNNER_H_
#define CHUNKPLAN_TESTING_ORACLE_RUNNER_H_

// The one way C++ tests ask the independent Python oracles (tests/oracle/):
// many requests, one interpreter, answers read back in order. The service
// tests and the differential test both ask through it.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::testing {

// The interpreter and the oracle script, as the build passes them.
struct OracleCommand {
  std::string python;  // e.g. /usr/bin/python3 (with Debian's numpy)
  std::string script;  // path of an oracle script taking --jsonl
  // One more flag for the script, e.g. "--strict" (the search oracle:
  // exactly the seed, no extension) or "--frontier" (the layout oracle).
  std::string flag;
};

// The search oracle (tests/oracle/chunk_search_oracle.py) run by the Python
// the build found (CHUNKPLAN_PYTHON), or the script named by the environment
// variable CHUNKPLAN_DIFF_ORACLE when it is set (to check that a broken
// oracle fails the tests).
OracleCommand SearchOracle(bool strict = false);

// The layout oracle (tests/oracle/layout_oracle.py), or the script named by
// CHUNKPLAN_DIFF_LAYOUT_ORACLE when it is set.
OracleCommand LayoutOracle();

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

// The search oracle's answer to each request, in order: configs,
// total_param_size and min_chunk_waste set (the other response fields are
// the service's own). A request the oracle rejects has an INVALID_ARGUMENT
// status in its place. Errors: INTERNAL when the oracle cannot be run or
// answers a different number of lines.
// The layout oracle's answer from one of its lines: the LayoutResponse (its
// search without engine, candidates or search_nanos, which are the
// service's own), or INVALID_ARGUMENT with the oracle's message when it
// refused the request. Errors: INTERNAL when the line is neither.
absl::StatusOr<absl::StatusOr<v1::LayoutResponse>> ParseLayoutAnswer(
    absl::string_view line);

absl::StatusOr<std::vector<absl::StatusOr<v1::ChunkSearchResponse>>> AskOracle(
    const std::vector<v1::ChunkSearchRequest>& requests);

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTING_ORACLE_RUNNER_H_
