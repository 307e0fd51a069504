#ifndef CHUNKPLAN_CLIENT_CLI_PLAN_COMMAND_H_
#define CHUNKPLAN_CLIENT_CLI_PLAN_COMMAND_H_

// `chunkplan search`, `chunkplan layout` and `chunkplan frontier`: read a
// ChunkSearchRequest or a LayoutRequest as protobuf JSON, answer it in this
// process or on a server, print the response.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "client/cli/cluster_flags.h"
#include "client/cli/command_output.h"
#include "client/cli/model_request.h"
#include "client/cli/remote_call.h"
#include "client/cli/request_flags.h"

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
  // layout with `model`: the dp degrees to lay out, one layout each with
  // every parameter at that degree (empty: model->dp alone).
  std::vector<uint32_t> degrees;
  // The server to ask; none: answer in this process.
  std::optional<RemoteTarget> server;
  // Replaces the request's engine (a layout's: its search part's) when set.
  std::optional<v1::Engine> engine;
  OutputFormat format = OutputFormat::kJson;
  // layout, frontier: replace the request's gemini settings (GeminiFlags),
  // objective and (layout) workload where set.
  GeminiFlags gemini;
  std::optional<v1::Objective> objective;
  std::optional<v1::Workload> workload;
  // layout: the cluster to judge each layout against
  // (LayoutRequest.cluster), each field given replacing the request's; none
  // set: the request's own. Its device memory also reaches
  // gemini.device_memory_bytes where the placement is auto.
  ClusterFlags cluster;
  // layout, frontier: print EmitLayoutColossalai's line (one per degree;
  // frontier: of the objective's best, laid out) instead.
  bool emit_colossalai = false;
  // layout: one row per SweepFractions() on each configuration laid out.
  bool offload_sweep = false;
};

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

// `chunkplan layout`: the same for a LayoutRequest (or one per degree of
// `degrees`), with options.cluster over its cluster, answered as
// chunkplan.v1.ChunkSearch/Layout answers it: one layout's table,
// FormatLayoutRows for several, FormatOffloadSweep's tables with
// `offload_sweep` (21 more layouts each), one JSON line or
// EmitLayoutColossalai line per layout. does_not_fit holds the server's
// VerdictWords when a layout's verdict does not fit (then the emit prints
// nothing).
absl::StatusOr<CommandOutput> RunLayout(const PlanOptions& options);

// `chunkplan frontier`: the same for a LayoutRequest, answered as
// chunkplan.v1.ChunkSearch/Frontier answers it; with `emit_colossalai`,
// the request is laid out instead (Layout lays out the objective's best)
// and printed as `layout --emit colossalai` prints it.
absl::StatusOr<CommandOutput> RunFrontier(const PlanOptions& options);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_PLAN_COMMAND_H_
