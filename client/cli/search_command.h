#ifndef CHUNKPLAN_CLIENT_CLI_SEARCH_COMMAND_H_
#define CHUNKPLAN_CLIENT_CLI_SEARCH_COMMAND_H_

// `chunkplan search`: read a ChunkSearchRequest as protobuf JSON, answer it
// in this process or on a server, print the response.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "client/cli/remote_call.h"

namespace chunkplan::cli {

enum class OutputFormat {
  kJson,   // the response in protobuf's JSON mapping, one line
  kTable,  // FormatTable
};

// "json" or "table". Errors: INVALID_ARGUMENT naming the accepted values.
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name);

// "auto", "cpu_sweep", "cpu_plateau", "cuda" (any case): chunkplan.v1.Engine
// names without "ENGINE_". Errors: INVALID_ARGUMENT naming them.
absl::StatusOr<v1::Engine> ParseEngine(absl::string_view name);

struct SearchOptions {
  // The request file, or "-" for standard input.
  std::string request_path;
  // The server to ask; none: search in this process.
  std::optional<RemoteTarget> server;
  // Replaces the request's engine when set.
  std::optional<v1::Engine> engine;
  OutputFormat format = OutputFormat::kJson;
};

// Reads the request, runs the search and returns the text to print, ending
// in '\n'. Errors: the input's (NOT_FOUND etc. naming the path),
// INVALID_ARGUMENT for JSON that is not a ChunkSearchRequest (naming the
// input), then the search's own: as chunkplan.v1.ChunkSearch/Search
// answers (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, FAILED_PRECONDITION for an
// engine this binary lacks), and with a server the call's (UNAVAILABLE,
// DEADLINE_EXCEEDED, ...).
absl::StatusOr<std::string> RunSearch(const SearchOptions& options);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_SEARCH_COMMAND_H_
