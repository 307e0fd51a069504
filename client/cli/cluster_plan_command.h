#ifndef CHUNKPLAN_CLIENT_CLI_CLUSTER_PLAN_COMMAND_H_
#define CHUNKPLAN_CLIENT_CLI_CLUSTER_PLAN_COMMAND_H_

// `chunkplan plan`: the ranked Gemini configurations that fit a cluster
// (chunkplan.v1.ChunkSearch/Plan), for a model named by its config.json or
// a PlanRequest file, answered in this process or on a server.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "client/cli/cluster_flags.h"
#include "client/cli/model_request.h"
#include "client/cli/plan_command.h"
#include "client/cli/remote_call.h"
#include "client/cli/request_flags.h"

namespace chunkplan::cli {

struct ClusterPlanOptions {
  // The PlanRequest file, or "-" for standard input; empty with `model`.
  std::string request_path;
  // The model in place of a request file: its search is GeminiPlugin's
  // (ModelSearchRequest, dp_degrees cleared: the plan sets each world size).
  std::optional<ModelFlags> model;
  std::optional<RemoteTarget> server;  // none: answer in this process
  std::optional<v1::Engine> engine;    // replaces search.engine when set
  // Each field set replaces the request file's.
  ClusterFlags cluster;
  std::optional<uint32_t> max_options;
  // --micro-batch and --sequence-length (both, or neither), with the two
  // switches.
  std::optional<v1::Workload> workload;
  // GeminiPlugin's fixed choices over the request's (Plan chooses the
  // placement: those fields stay unset).
  GeminiFlags gemini;
  OutputFormat format = OutputFormat::kTable;
  // Print the first option's GeminiPlugin(...) line instead.
  bool emit_colossalai = false;
};

// Reads the request (or builds the model's), applies the flags, has it
// answered (here: the server's planner and conversions, with a server's
// default limits), and returns the text to print, ending in '\n': the
// PlanResponse as one line of protobuf JSON, FormatPlanTable (opened with
// the model's IntervalNote), or EmitColossalai's line; does_not_fit (exit 3)
// when no option fits by the server's verdict, saying why (then the emit
// prints nothing). Errors: the input's (naming the path), INVALID_ARGUMENT
// for JSON that is not a PlanRequest; then Plan's (as
// chunkplan.v1.ChunkSearch/Plan answers) and, with a server, the call's;
// EmitColossalai's.
absl::StatusOr<CommandOutput> RunClusterPlan(const ClusterPlanOptions& options);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_CLUSTER_PLAN_COMMAND_H_
