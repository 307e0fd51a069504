#include "client/cli/plan_command.h"

#include <type_traits>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "client/cli/padding_warning.h"
#include "client/cli/table_format.h"
#include "client/cli/verdict_text.h"
#include "common/grpc_status.h"
#include "common/json_codec.h"
#include "common/request_file.h"
#include "common/status_macros.h"
#include "server/planner/planner.h"
#include "server/service/proto_convert.h"

namespace chunkplan::cli {
namespace {

// The request of type Request in the file (or stdin) at `path`. Errors as
// RunSearch's.
template <typename Request>
absl::StatusOr<Request> ReadRequest(absl::string_view path) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const std::string json, common::ReadInput(path));
  Request request;
  if (absl::Status s = common::JsonToMessage(json, &request); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat(common::InputName(path), ": ", s.message()));
  }
  return request;
}

// The request of `options`: its model's (ModelSearchRequest; a
// LayoutRequest's search part) or its file's.
template <typename Request>
absl::StatusOr<Request> RequestOf(const PlanOptions& options) {
  if (!options.model.has_value()) {
    return ReadRequest<Request>(options.request_path);
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(v1::ChunkSearchRequest search,
                             ModelSearchRequest(*options.model));
  if constexpr (std::is_same_v<Request, v1::ChunkSearchRequest>) {
    return search;
  } else {
    v1::LayoutRequest request;
    *request.mutable_search() = std::move(search);
    return request;
  }
}

// `table`, opened with the interval note where the request is a model's.
std::string Table(const PlanOptions& options, std::string table) {
  if (!options.model.has_value()) return table;
  return absl::StrCat(IntervalNote(*options.model), "\n", table);
}

// The response a server with default planner options would send for
// `request`, computed in this process with the server's own planner and
// conversions.
absl::StatusOr<v1::ChunkSearchResponse> AnswerLocally(
    const v1::ChunkSearchRequest& request) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::SearchRequest plain,
                             service::FromProto(request));
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::SearchResult result,
                             planner::Planner().Search(plain));
  return service::ToProto(result);
}

absl::StatusOr<v1::LayoutResponse> AnswerLocally(
    const v1::LayoutRequest& request) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::LayoutRequest plain,
                             service::FromProto(request));
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::LayoutResult result,
                             planner::Planner().Layout(plain));
  return service::ToProto(result);
}

absl::StatusOr<v1::FrontierResponse> AnswerFrontierLocally(
    const v1::LayoutRequest& request) {
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::LayoutRequest plain,
                             service::FromProto(request));
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::FrontierResult result,
                             planner::Planner().Frontier(plain));
  return service::ToProto(result);
}

// The server's answer to `call` (a ChunkSearch stub method) for `request`.
template <typename Request, typename Response>
absl::StatusOr<Response> AnswerRemotely(
    const RemoteTarget& target, const Request& request,
    grpc::Status (v1::ChunkSearch::Stub::*call)(grpc::ClientContext*,
                                                const Request&, Response*)) {
  const auto stub = v1::ChunkSearch::NewStub(OpenChannel(target));
  grpc::ClientContext context;
  ApplyDeadline(target, &context);
  Response response;
  CHUNKPLAN_RETURN_IF_ERROR(
      common::ToAbslStatus(((*stub).*call)(&context, request, &response)));
  return response;
}

// The placement flags over the request's gemini settings.
void ApplyPlacement(const PlanOptions& options, v1::GeminiSettings* gemini) {
  if (options.placement.has_value()) gemini->set_placement(*options.placement);
  if (options.shard_param_frac.has_value()) {
    gemini->set_shard_param_frac(*options.shard_param_frac);
  }
  if (options.offload_optim_frac.has_value()) {
    gemini->set_offload_optim_frac(*options.offload_optim_frac);
  }
  if (options.offload_param_frac.has_value()) {
    gemini->set_offload_param_frac(*options.offload_param_frac);
  }
}

// A command on a LayoutRequest: reads it, applies --engine to its search
// part, the placement and cluster flags, has it answered by `call` on the
// server or by `local` here, and prints the answer as JSON or with `table`.
template <typename Response>
absl::StatusOr<CommandOutput> RunOnLayoutRequest(
    const PlanOptions& options,
    grpc::Status (v1::ChunkSearch::Stub::*call)(grpc::ClientContext*,
                                                const v1::LayoutRequest&,
                                                Response*),
    absl::StatusOr<std::type_identity_t<Response>> (*local)(
        const v1::LayoutRequest&),
    absl::FunctionRef<std::string(const v1::LayoutRequest&,
                                  const std::type_identity_t<Response>&)>
        table) {
  CHUNKPLAN_ASSIGN_OR_RETURN(v1::LayoutRequest request,
                             RequestOf<v1::LayoutRequest>(options));
  if (options.engine.has_value()) {
    request.mutable_search()->set_engine(*options.engine);
  }
  ApplyPlacement(options, request.mutable_gemini());
  if (options.cluster.Any()) {
    ApplyClusterFlags(options.cluster, request.mutable_cluster());
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const Response response,
      options.server.has_value()
          ? AnswerRemotely(*options.server, request, call)
          : local(request));
  CommandOutput out;
  if constexpr (std::is_same_v<Response, v1::LayoutResponse>) {
    if (response.has_verdict() && !response.verdict().fits()) {
      out.does_not_fit = VerdictWords(response.verdict());
    }
  }
  out.text = options.format == OutputFormat::kTable
                 ? Table(options, table(request, response))
                 : absl::StrCat(common::MessageToJson(response), "\n");
  return out;
}

// The layout table, then the warning of chunks that dwarf what they hold.
std::string LayoutTable(const v1::LayoutRequest& /*request*/,
                        const v1::LayoutResponse& response) {
  return absl::StrCat(FormatLayoutTable(response), PaddingWarning(response));
}

std::string FrontierTable(const v1::LayoutRequest& request,
                          const v1::FrontierResponse& response) {
  return FormatFrontierTable(response, request.objective());
}

}  // namespace

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name) {
  if (name == "json") return OutputFormat::kJson;
  if (name == "table") return OutputFormat::kTable;
  return absl::InvalidArgumentError(
      absl::StrCat("--format must be json or table, not '", name, "'"));
}

absl::StatusOr<v1::Placement> ParsePlacement(absl::string_view name) {
  v1::Placement placement;
  if (v1::Placement_Parse(
          absl::StrCat("PLACEMENT_", absl::AsciiStrToUpper(name)),
          &placement)) {
    return placement;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--placement must be static or auto, not '", name, "'"));
}

absl::StatusOr<v1::Engine> ParseEngine(absl::string_view name) {
  v1::Engine engine;
  if (v1::Engine_Parse(absl::StrCat("ENGINE_", absl::AsciiStrToUpper(name)),
                       &engine)) {
    return engine;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--engine must be auto, cpu_sweep, cpu_plateau or cuda, not '", name,
      "'"));
}

absl::StatusOr<CommandOutput> RunSearch(const PlanOptions& options) {
  CHUNKPLAN_ASSIGN_OR_RETURN(v1::ChunkSearchRequest request,
                             RequestOf<v1::ChunkSearchRequest>(options));
  if (options.engine.has_value()) request.set_engine(*options.engine);
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const v1::ChunkSearchResponse response,
      options.server.has_value()
          ? AnswerRemotely(*options.server, request,
                           &v1::ChunkSearch::Stub::Search)
          : AnswerLocally(request));
  CommandOutput out;
  out.text = options.format == OutputFormat::kTable
                 ? Table(options, FormatTable(response))
                 : absl::StrCat(common::MessageToJson(response), "\n");
  return out;
}

absl::StatusOr<CommandOutput> RunLayout(const PlanOptions& options) {
  return RunOnLayoutRequest<v1::LayoutResponse>(
      options, &v1::ChunkSearch::Stub::Layout, AnswerLocally, LayoutTable);
}

absl::StatusOr<CommandOutput> RunFrontier(const PlanOptions& options) {
  return RunOnLayoutRequest<v1::FrontierResponse>(
      options, &v1::ChunkSearch::Stub::Frontier, AnswerFrontierLocally,
      FrontierTable);
}

}  // namespace chunkplan::cli
