#ifndef CHUNKPLAN_CLIENT_CLI_PLAN_COMMAND_H_
#define CHUNKPLAN_CLIENT_CLI_PLAN_COMMAND_H_

// `chunkplan search`, `chunkplan layout` and `chunkplan frontier`: read a
// ChunkSearchRequest or a LayoutRequest as protobuf JSON, answer it in this
// process or on a server, print the response.

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "client/cli/cluster_flags.h"
#include "client/cli/model_request.h"
#include "client/cli/remote_call.h"

namespace chunkplan::cli {

enum class OutputFormat {
  kJson,   // the response in protobuf's JSON mapping, one line
  kTable,  // FormatTable / FormatLayoutTable / FormatFrontierTable
};

// "json" or "table". Errors: INVALID_ARGUMENT naming the accepted values.
absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name);

// "auto", "cpu_sweep", "cpu_plateau", "cuda" (any case): chunkplan.v1.Engine
// names without "ENGINE_". Errors: INVALID_ARGUMENT naming them.
absl::StatusOr<v1::Engine> ParseEngine(absl::string_view name);

struct PlanOptions {
  // The request file, or "-" for standard input; empty with `model`.
  std::string request_path;
  // The model whose GeminiPlugin search is the request (ModelSearchRequest;
  // a LayoutRequest's search, with GeminiPlugin's other defaults), in place
  // of a request file. The table then opens with IntervalNote.
  std::optional<ModelFlags> model;
  // The server to ask; none: answer in this process.
  std::optional<RemoteTarget> server;
  // Replaces the request's engine (a layout's: its search part's) when set.
  std::optional<v1::Engine> engine;
  OutputFormat format = OutputFormat::kJson;
  // layout, frontier: replace the request's gemini placement fields when
  // set (docs/placement.md).
  std::optional<v1::Placement> placement;
  std::optional<double> shard_param_frac;
  std::optional<double> offload_optim_frac;
  std::optional<double> offload_param_frac;
  // layout: the cluster to judge the layout against (LayoutRequest.cluster),
  // each field given replacing the request's; none: the request's own.
  ClusterFlags cluster;
};

// What a command prints, and the verdict's say on its exit status.
struct CommandOutput {
  std::string text;  // for stdout, ending in '\n'; may be empty
  // The server's verdict says it does not fit (exit 3): why, for stderr.
  std::optional<std::string> does_not_fit;
};

// "static" or "auto" as a Placement; INVALID_ARGUMENT naming --placement
// otherwise.
absl::StatusOr<v1::Placement> ParsePlacement(absl::string_view name);

// `chunkplan search`: reads a ChunkSearchRequest, runs the search and
// returns the text to print, ending in '\n'. In this process the answer is
// the one a server with default planner options would send.
// Errors: the input's (NOT_FOUND etc. naming the path), INVALID_ARGUMENT for
// JSON that is not a ChunkSearchRequest (naming the input), then the
// search's own: as chunkplan.v1.ChunkSearch/Search answers
// (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, FAILED_PRECONDITION for an engine
// this binary lacks), and with a server the call's (UNAVAILABLE,
// DEADLINE_EXCEEDED, ...).
absl::StatusOr<CommandOutput> RunSearch(const PlanOptions& options);

// `chunkplan layout`: the same for a LayoutRequest (with options.cluster
// over its cluster), answered as chunkplan.v1.ChunkSearch/Layout answers
// it; does_not_fit holds VerdictWords when the response's verdict does not
// fit.
absl::StatusOr<CommandOutput> RunLayout(const PlanOptions& options);

// `chunkplan frontier`: the same for a LayoutRequest, answered as
// chunkplan.v1.ChunkSearch/Frontier answers it.
absl::StatusOr<CommandOutput> RunFrontier(const PlanOptions& options);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_PLAN_COMMAND_H_
