#include "server/service/plan_convert.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/cluster_checks.h"
#include "server/service/model_convert.h"
#include "server/service/proto_convert.h"
#include "server/service/workload_convert.h"

namespace chunkplan::service {
namespace {

// The search part: its settings, and the numels given or described (the
// description kept in *described for the workload's shape).
absl::StatusOr<planner::SearchRequest> PlanSearch(
    const v1::ChunkSearchRequest& search, const ModelLimits& limits,
    std::optional<models::ModelDescription>* described) {
  absl::StatusOr<planner::SearchRequest> out = SearchSettingsFromProto(search);
  if (!out.ok()) return Prefixed("search.", out.status());
  if (!search.has_model()) {
    out->numels.assign(search.numels().begin(), search.numels().end());
    return out;
  }
  absl::StatusOr<models::ModelDescription> description =
      DescribeRequestModel(search, limits);
  if (!description.ok()) return Prefixed("search.", description.status());
  out->numels = std::move(description->numels);
  description->numels.clear();
  *described = *std::move(description);
  return out;
}

void SetOption(const planner::PlanOption& o, v1::Precision precision,
               v1::PlanOption* out) {
  out->set_world_size(o.world_size);
  SetGemini(o.gemini, precision, out->mutable_gemini());
  for (const planner::ChunkConfig& c : o.configs) {
    SetConfig(c, out->add_configs());
  }
  out->set_objective(static_cast<v1::Objective>(o.objective));
  SetRank(o.most_loaded_rank, out->mutable_most_loaded_rank());
  out->set_gathered_chunk_bytes(o.gathered_chunk_bytes);
  out->set_host_bytes_per_node(o.verdict.host_bytes_per_node);
  out->set_layout_padding(o.layout_padding);
  out->set_fits(o.verdict.fits);
  out->set_why_not(o.verdict.why_not);
  out->set_colossalai(o.colossalai);
  out->set_activation_bytes(o.activation_bytes);
  out->set_chunk_size_from(planner::ChunkSizeFromName(o.chunk_size_from));
  for (const std::string& note : o.notes) out->add_notes(note);
  out->set_device_need_bytes(o.verdict.device_need_bytes);
  SetVerdict(o.verdict, out->mutable_verdict());
}

// The checks after the cluster's, in the oracle's order: a present
// workload's sizes, then FromProto.
absl::StatusOr<planner::PlanRequest> SizesThenFromProto(
    const v1::PlanRequest& request, const ModelLimits& limits,
    ModelNotes* notes) {
  if (request.has_workload()) {
    if (absl::Status s = CheckWorkloadSizes(request.workload()); !s.ok()) {
      return s;
    }
  }
  return FromProto(request, limits, notes);
}

}  // namespace

std::string PrecisionName(v1::Precision precision) {
  return precision == v1::PRECISION_BF16 ? "bf16" : "fp16";
}

absl::StatusOr<planner::PlanRequest> FromProto(const v1::PlanRequest& request,
                                               const ModelLimits& limits,
                                               ModelNotes* notes) {
  // The placement fields are the plan's to choose: ignored, not checked.
  v1::GeminiSettings fixed = request.gemini();
  fixed.clear_placement();
  fixed.clear_shard_param_frac();
  fixed.clear_offload_optim_frac();
  fixed.clear_offload_param_frac();
  fixed.clear_device_memory_bytes();
  absl::StatusOr<planner::GeminiSettings> gemini = FromProto(fixed);
  if (!gemini.ok()) return gemini.status();
  planner::PlanRequest out;
  std::optional<models::ModelDescription> described;
  absl::StatusOr<planner::SearchRequest> search =
      PlanSearch(request.search(), limits, &described);
  if (!search.ok()) return search.status();
  if (notes != nullptr && described.has_value()) *notes = NotesOf(*described);
  out.search = *std::move(search);
  absl::StatusOr<std::vector<bool>> frozen =
      FrozenMask(request.frozen(), described);
  if (!frozen.ok()) return frozen.status();
  out.frozen = *std::move(frozen);
  out.gemini = *std::move(gemini);
  out.precision = PrecisionName(request.gemini().precision());
  out.cluster = ClusterFromProto(request.cluster());
  out.max_options = request.max_options();
  if (request.has_workload()) {
    absl::StatusOr<planner::PlanWorkload> workload =
        PlanWorkloadOf(request.workload(), described, limits);
    if (!workload.ok()) return workload.status();
    out.workload = *std::move(workload);
  }
  return out;
}

absl::StatusOr<planner::PlanRequest> FromProtoInOrder(
    const v1::PlanRequest& request, const ModelLimits& limits,
    ModelNotes* notes) {
  absl::StatusOr<planner::PlanRequest> out =
      SizesThenFromProto(request, limits, notes);
  if (out.ok()) return out;
  if (absl::Status s =
          planner::CheckCluster(ClusterFromProto(request.cluster()));
      !s.ok()) {
    return s;
  }
  return out;
}

v1::PlanResponse ToProto(const planner::PlanResult& result,
                         v1::Precision precision) {
  v1::PlanResponse out;
  out.mutable_options()->Reserve(static_cast<int>(result.options.size()));
  for (const planner::PlanOption& o : result.options) {
    SetOption(o, precision, out.add_options());
  }
  out.set_options_considered(result.options_considered);
  out.set_plan_nanos(result.plan_nanos);
  return out;
}

}  // namespace chunkplan::service
