#include "client/cli/plan_command.h"

#include <type_traits>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "client/cli/layout_output.h"
#include "client/cli/model_report_text.h"
#include "client/cli/padding_warning.h"
#include "client/cli/table_format.h"
#include "client/cli/verdict_text.h"
#include "common/grpc_status.h"
#include "common/json_codec.h"
#include "common/request_file.h"
#include "common/status_macros.h"
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

// The ChunkSearchRequest of `options`: its model's (ModelSearchRequest)
// or its file's, with --engine applied.
absl::StatusOr<v1::ChunkSearchRequest> SearchRequestOf(
    const PlanOptions& options) {
  v1::ChunkSearchRequest request;
  if (options.model.has_value()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(request, ModelSearchRequest(*options.model));
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        request, ReadRequest<v1::ChunkSearchRequest>(options.request_path));
  }
  if (options.engine.has_value()) request.set_engine(*options.engine);
  return request;
}

// The LayoutRequest of `options`: its model's search at degree `dp` (with
// GeminiPlugin's other defaults), or its file's; then the flags over its
// fields (--engine on its search part, the gemini flags, the objective, the
// workload, the cluster; the cluster's device memory to the gemini settings
// too where the placement is auto, for its warm-up).
absl::StatusOr<v1::LayoutRequest> LayoutRequestOf(const PlanOptions& options,
                                                  uint32_t dp) {
  v1::LayoutRequest request;
  if (options.model.has_value()) {
    ModelFlags model = *options.model;
    model.dp = dp;
    CHUNKPLAN_ASSIGN_OR_RETURN(*request.mutable_search(),
                               ModelSearchRequest(model));
  } else {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        request, ReadRequest<v1::LayoutRequest>(options.request_path));
  }
  if (options.engine.has_value()) {
    request.mutable_search()->set_engine(*options.engine);
  }
  ApplyGeminiFlags(options.gemini, request.mutable_gemini());
  if (options.objective.has_value()) request.set_objective(*options.objective);
  if (options.workload.has_value()) {
    *request.mutable_workload() = *options.workload;
  }
  if (options.cluster.Any()) {
    ApplyClusterFlags(options.cluster, request.mutable_cluster());
    if (options.cluster.device_memory_bytes.has_value() &&
        request.gemini().placement() == v1::PLACEMENT_AUTO) {
      request.mutable_gemini()->set_device_memory_bytes(
          *options.cluster.device_memory_bytes);
    }
  }
  return request;
}

// `table`, opened with the parameter total and the model's warnings
// (`header`: HeaderOf the response) and, where the request is a model's,
// the interval note.
std::string Table(const PlanOptions& options, const std::string& header,
                  std::string table) {
  return absl::StrCat(
      header, options.model.has_value() ? IntervalNote(*options.model) : "",
      "\n", table);
}

// The response a server with default planner options would send for
// `request`, computed in this process with the server's own planner and
// conversions.
absl::StatusOr<v1::ChunkSearchResponse> AnswerLocally(
    const v1::ChunkSearchRequest& request) {
  service::ModelNotes notes;
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const planner::SearchRequest plain,
      service::FromProto(request, {}, /*described=*/nullptr, &notes));
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::SearchResult result,
                             planner::Planner().Search(plain));
  v1::ChunkSearchResponse response = service::ToProto(result);
  service::SetModelReport(notes, plain.numels, response.mutable_model_report());
  return response;
}

absl::StatusOr<v1::LayoutResponse> AnswerLocally(
    const v1::LayoutRequest& request) {
  service::ModelNotes notes;
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::LayoutRequest plain,
                             service::FromProto(request, {}, &notes));
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::LayoutResult result,
                             planner::Planner().Layout(plain));
  v1::LayoutResponse response = service::ToProto(result);
  service::SetModelReport(notes, plain.search.numels,
                          response.mutable_model_report());
  return response;
}

absl::StatusOr<v1::FrontierResponse> AnswerFrontierLocally(
    const v1::LayoutRequest& request) {
  service::ModelNotes notes;
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::LayoutRequest plain,
                             service::FromProto(request, {}, &notes));
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::FrontierResult result,
                             planner::Planner().Frontier(plain));
  v1::FrontierResponse response = service::ToProto(result);
  service::SetModelReport(notes, plain.search.numels,
                          response.mutable_model_report());
  return response;
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

// `request` answered by the server's `call`, or in this process by
// `local`.
template <typename Request, typename Response>
absl::StatusOr<Response> Answer(
    const PlanOptions& options, const Request& request,
    grpc::Status (v1::ChunkSearch::Stub::*call)(grpc::ClientContext*,
                                                const Request&, Response*),
    absl::StatusOr<std::type_identity_t<Response>> (*local)(const Request&)) {
  if (!options.server.has_value()) return local(request);
  return AnswerRemotely(*options.server, request, call);
}

absl::StatusOr<v1::LayoutResponse> AnswerLayout(
    const PlanOptions& options, const v1::LayoutRequest& request) {
  return Answer(options, request, &v1::ChunkSearch::Stub::Layout,
                AnswerLocally);
}

// Why the layouts that the server judged do not fit, one line each ("dp
// degree N " before each where several), or nullopt when every verdict
// fits (or none was asked for).
std::optional<std::string> LayoutsDoNotFit(
    const std::vector<DegreeLayout>& layouts) {
  std::vector<std::string> lines;
  for (const DegreeLayout& l : layouts) {
    const v1::LayoutResponse& r = l.response;
    if (!r.has_verdict() || r.verdict().fits()) continue;
    lines.push_back(absl::StrCat(
        layouts.size() > 1 ? absl::StrCat("dp degree ", l.dp_degree, " ") : "",
        VerdictWords(r.verdict())));
  }
  if (lines.empty()) return std::nullopt;
  return absl::StrJoin(lines, "\n");
}

// `message` as one line of protobuf JSON.
std::string JsonLine(const google::protobuf::Message& message) {
  return absl::StrCat(common::MessageToJson(message), "\n");
}

// `response` as `options` asks into `out`: `table()` (opened as Table
// opens it), or JsonLine with its model's warnings for stderr.
template <typename Response>
void Output(const PlanOptions& options, const Response& response,
            absl::FunctionRef<std::string()> table, CommandOutput* out) {
  if (options.format == OutputFormat::kTable) {
    out->text = Table(options, HeaderOf(response), table());
    return;
  }
  out->text = JsonLine(response);
  out->warnings = WarningLines(response.model_report().warnings());
}

// --offload-sweep: per layout, FormatOffloadSweep of its configs laid out
// again at every SweepFractions() (under "dp degree N" when several).
absl::StatusOr<std::string> OffloadSweep(
    const PlanOptions& options, const std::vector<DegreeLayout>& layouts) {
  std::string out;
  for (const DegreeLayout& layout : layouts) {
    std::vector<std::pair<double, v1::LayoutResponse>> rows;
    for (const double fraction : SweepFractions()) {
      CHUNKPLAN_ASSIGN_OR_RETURN(
          v1::LayoutResponse response,
          AnswerLayout(options, SweepRequest(layout, fraction)));
      rows.emplace_back(fraction, std::move(response));
    }
    if (!out.empty()) out += "\n";
    if (layouts.size() > 1) {
      absl::StrAppend(&out, "dp degree ", layout.dp_degree, "\n");
    }
    out += FormatOffloadSweep(rows);
  }
  return out;
}

}  // namespace

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view name) {
  if (name == "json") return OutputFormat::kJson;
  if (name == "table") return OutputFormat::kTable;
  return absl::InvalidArgumentError(
      absl::StrCat("--format must be json or table, not '", name, "'"));
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
  CHUNKPLAN_ASSIGN_OR_RETURN(const v1::ChunkSearchRequest request,
                             SearchRequestOf(options));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const v1::ChunkSearchResponse response,
      Answer(options, request, &v1::ChunkSearch::Stub::Search, AnswerLocally));
  CommandOutput out;
  Output(
      options, response, [&] { return FormatTable(response); }, &out);
  return out;
}

absl::StatusOr<CommandOutput> RunLayout(const PlanOptions& options) {
  std::vector<uint32_t> degrees = options.degrees;
  if (degrees.empty()) degrees.push_back(options.model ? options.model->dp : 0);
  std::vector<DegreeLayout> layouts;
  for (const uint32_t dp : degrees) {
    DegreeLayout layout;
    layout.dp_degree = dp;
    CHUNKPLAN_ASSIGN_OR_RETURN(layout.request, LayoutRequestOf(options, dp));
    CHUNKPLAN_ASSIGN_OR_RETURN(layout.response,
                               AnswerLayout(options, layout.request));
    layouts.push_back(std::move(layout));
  }
  CommandOutput out;
  out.does_not_fit = LayoutsDoNotFit(layouts);
  // Every degree lays out the same parameters: one report says it.
  const v1::LayoutResponse& first = layouts[0].response;
  if (options.offload_sweep) {
    CHUNKPLAN_ASSIGN_OR_RETURN(std::string sweep,
                               OffloadSweep(options, layouts));
    out.text = Table(options, HeaderOf(first), std::move(sweep));
    return out;
  }
  if (options.format == OutputFormat::kTable && !options.emit_colossalai) {
    out.text = Table(options, HeaderOf(first),
                     layouts.size() > 1
                         ? FormatLayoutRows(layouts)
                         : absl::StrCat(FormatLayoutTable(layouts[0].response),
                                        PaddingWarning(layouts[0].response)));
    return out;
  }
  out.warnings = WarningLines(first.model_report().warnings());
  // Nothing to paste where a layout does not fit.
  if (options.emit_colossalai && out.does_not_fit.has_value()) return out;
  for (const DegreeLayout& layout : layouts) {
    if (!options.emit_colossalai) {
      out.text += JsonLine(layout.response);
      continue;
    }
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const std::string line,
        EmitLayoutColossalai(layout.request, layout.response));
    out.text += line;
  }
  return out;
}

absl::StatusOr<CommandOutput> RunFrontier(const PlanOptions& options) {
  const uint32_t dp = options.model ? options.model->dp : 0;
  CHUNKPLAN_ASSIGN_OR_RETURN(const v1::LayoutRequest request,
                             LayoutRequestOf(options, dp));
  CommandOutput out;
  if (options.emit_colossalai) {
    CHUNKPLAN_ASSIGN_OR_RETURN(const v1::LayoutResponse layout,
                               AnswerLayout(options, request));
    CHUNKPLAN_ASSIGN_OR_RETURN(out.text, EmitLayoutColossalai(request, layout));
    out.warnings = WarningLines(layout.model_report().warnings());
    return out;
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const v1::FrontierResponse response,
      Answer(options, request, &v1::ChunkSearch::Stub::Frontier,
             AnswerFrontierLocally));
  Output(
      options, response,
      [&] { return FormatFrontierTable(response, request.objective()); }, &out);
  return out;
}

}  // namespace chunkplan::cli
