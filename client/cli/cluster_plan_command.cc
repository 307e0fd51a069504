#include "client/cli/cluster_plan_command.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/planner.h"
#include "chunkplan/v1/chunk_search.grpc.pb.h"
#include "client/cli/model_report_text.h"
#include "client/cli/plan_table.h"
#include "common/grpc_status.h"
#include "common/json_codec.h"
#include "common/request_file.h"
#include "common/status_macros.h"
#include "server/service/plan_convert.h"

namespace chunkplan::cli {
namespace {

// The PlanRequest of `options`: the file's, or the model's search.
absl::StatusOr<v1::PlanRequest> ReadPlanRequest(
    const ClusterPlanOptions& options) {
  v1::PlanRequest request;
  if (options.model.has_value()) {
    CHUNKPLAN_ASSIGN_OR_RETURN(*request.mutable_search(),
                               ModelSearchRequest(*options.model));
    request.mutable_search()->clear_dp_degrees();
    return request;
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(const std::string json,
                             common::ReadInput(options.request_path));
  if (absl::Status s = common::JsonToMessage(json, &request); !s.ok()) {
    return absl::Status(
        s.code(), absl::StrCat(common::InputName(options.request_path), ": ",
                               s.message()));
  }
  return request;
}

// The flags over the request's fields.
void ApplyFlags(const ClusterPlanOptions& options, v1::PlanRequest* request) {
  if (options.engine.has_value()) {
    request->mutable_search()->set_engine(*options.engine);
  }
  ApplyClusterFlags(options.cluster, request->mutable_cluster());
  if (options.max_options) request->set_max_options(*options.max_options);
  if (options.workload) *request->mutable_workload() = *options.workload;
  ApplyGeminiFlags(options.gemini, request->mutable_gemini());
  if (options.gemini.search_tp) request->set_search_tp(true);
  if (options.gemini.tp_sizes.size() > 1) {
    request->clear_tp_sizes();
    for (const uint32_t t : options.gemini.tp_sizes) request->add_tp_sizes(t);
  }
  if (options.gemini.extra_dp_sizes.size() > 1) {
    request->clear_extra_dp_sizes();
    for (const uint32_t e : options.gemini.extra_dp_sizes) {
      request->add_extra_dp_sizes(e);
    }
  }
}

// The answer of a server with default limits, computed here.
absl::StatusOr<v1::PlanResponse> PlanLocally(const v1::PlanRequest& request) {
  service::ModelNotes notes;
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::PlanRequest plain,
                             service::FromProto(request, {}, &notes));
  CHUNKPLAN_ASSIGN_OR_RETURN(const planner::PlanResult result,
                             planner::Planner().Plan(plain));
  v1::PlanResponse response =
      service::ToProto(result, request.gemini().precision());
  service::SetModelReport(notes, plain.search.numels,
                          response.mutable_model_report());
  return response;
}

absl::StatusOr<v1::PlanResponse> PlanRemotely(const RemoteTarget& target,
                                              const v1::PlanRequest& request) {
  const auto stub = v1::ChunkSearch::NewStub(OpenChannel(target));
  grpc::ClientContext context;
  ApplyDeadline(target, &context);
  v1::PlanResponse response;
  CHUNKPLAN_RETURN_IF_ERROR(
      common::ToAbslStatus(stub->Plan(&context, request, &response)));
  return response;
}

}  // namespace

absl::StatusOr<CommandOutput> RunClusterPlan(
    const ClusterPlanOptions& options) {
  CHUNKPLAN_ASSIGN_OR_RETURN(v1::PlanRequest request, ReadPlanRequest(options));
  ApplyFlags(options, &request);
  CHUNKPLAN_ASSIGN_OR_RETURN(const v1::PlanResponse response,
                             options.server.has_value()
                                 ? PlanRemotely(*options.server, request)
                                 : PlanLocally(request));
  CommandOutput out;
  out.does_not_fit = NothingFits(response);
  out.warnings = WarningLines(response.model_report().warnings());
  if (options.emit_colossalai) {
    if (out.does_not_fit.has_value()) return out;  // nothing to paste
    CHUNKPLAN_ASSIGN_OR_RETURN(out.text, EmitColossalai(response));
    return out;
  }
  if (options.format == OutputFormat::kJson) {
    out.text = absl::StrCat(common::MessageToJson(response), "\n");
    return out;
  }
  // The table opens with the total and holds the warnings itself.
  out.warnings.clear();
  out.text = absl::StrCat(
      HeaderOf(response),
      options.model.has_value() ? IntervalNote(*options.model) : "", "\n",
      FormatPlanTable(request, response));
  return out;
}

}  // namespace chunkplan::cli
