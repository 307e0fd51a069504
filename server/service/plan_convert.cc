#include "server/service/plan_convert.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/cluster_checks.h"
#include "server/models/tp_shard.h"
#include "server/service/model_convert.h"
#include "server/service/proto_convert.h"
#include "server/service/workload_convert.h"

namespace chunkplan::service {
namespace {

// The tp degrees search_tp tries (those above gpus_per_node are the
// planner's to skip).
constexpr uint32_t kSearchedTpSizes[] = {1, 2, 4, 8};
// The most entries tp_sizes and extra_dp_sizes may have.
constexpr int kMaxMeshSizes = 8;

// A list of mesh degrees: each >= 1, distinct, at most kMaxMeshSizes.
absl::Status CheckMeshSizes(
    const google::protobuf::RepeatedField<uint32_t>& sizes,
    absl::string_view field) {
  if (sizes.size() > kMaxMeshSizes) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, ": ", sizes.size(), " entries; at most ", kMaxMeshSizes));
  }
  for (int i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, "[", i, "]: must be at least 1"));
    }
    for (int j = 0; j < i; ++j) {
      if (sizes[i] == sizes[j]) {
        return absl::InvalidArgumentError(absl::StrCat(
            field, "[", i, "]: ", sizes[i], " repeats ", field, "[", j, "]"));
      }
    }
  }
  return absl::OkStatus();
}

// The search part: its settings, and the numels given or described at each
// tp degree the request tries (docs/tensor-parallelism.md; the first
// description kept in *described for the workload's shape, which tp does
// not change). A degree the model's policy refuses is skipped under
// search_tp and refused otherwise.
absl::StatusOr<planner::SearchRequest> PlanSearch(
    const v1::PlanRequest& request, const ModelLimits& limits,
    std::optional<models::ModelDescription>* described,
    std::vector<planner::TpShards>* tp_shards) {
  const v1::ChunkSearchRequest& search = request.search();
  absl::StatusOr<planner::SearchRequest> out = SearchSettingsFromProto(search);
  if (!out.ok()) return Prefixed("search.", out.status());
  if (absl::Status s = CheckMeshSizes(request.tp_sizes(), "tp_sizes");
      !s.ok()) {
    return s;
  }
  std::vector<uint32_t> sizes;
  if (request.search_tp()) {
    if (request.tp_sizes_size() != 0) {
      return absl::InvalidArgumentError(
          "tp_sizes: leave it empty with search_tp (which tries 1, 2, 4, 8)");
    }
    sizes.assign(std::begin(kSearchedTpSizes), std::end(kSearchedTpSizes));
  } else if (request.tp_sizes_size() != 0) {
    sizes.assign(request.tp_sizes().begin(), request.tp_sizes().end());
  } else {
    sizes.push_back(std::max(1u, request.gemini().tp_size()));
  }
  // A parameter list has no policy to shard it (each tp rank's own).
  const bool sharded =
      search.has_model() && search.model().param_list_json().empty();
  if (!sharded && (request.search_tp() || sizes.size() > 1)) {
    return absl::InvalidArgumentError(
        "search_tp / tp_sizes: trying several tp degrees needs "
        "search.model of a family (its policy shards the described model); "
        "with numels or a parameter list give one tp degree and each rank's "
        "own parameters");
  }
  if (!search.has_model()) {
    out->numels.assign(search.numels().begin(), search.numels().end());
    tp_shards->push_back({sizes.front(), out->numels, {}, {}});
    return out;
  }
  for (const uint32_t tp : sizes) {
    models::TpOptions options;
    options.tp_size = tp;
    options.sequence_parallelism =
        request.gemini().enable_sequence_parallelism();
    absl::StatusOr<models::ModelDescription> description =
        DescribeRequestModel(search, limits, options);
    if (!description.ok()) {
      if (request.search_tp() && tp > 1 &&
          description.status().code() == absl::StatusCode::kInvalidArgument) {
        continue;  // the policy refuses this degree
      }
      return Prefixed("search.", description.status());
    }
    if (request.search_tp() && tp > 1 && description->tp_sequence_parallelism &&
        description->tp_causal_lm.sp_modelled && request.has_workload() &&
        request.workload().sequence_length() % tp != 0) {
      continue;  // _split asserts the sequence a multiple of tp
                 // (GPT-2, BLOOM)
    }
    tp_shards->push_back(
        {tp, std::move(description->numels), TpShapeOf(*description), {}});
    description->numels.clear();
    if (description->tp_sequence_parallelism) {
      // The rule once the mesh is known (GPT-2's gather over the world).
      tp_shards->back().mesh_check = [lm = description->tp_causal_lm,
                                      family = description->model_type,
                                      tp](uint64_t replicas) {
        return models::CheckSequenceParallelism(lm, family, tp, replicas);
      };
    }
    if (!described->has_value()) *described = *std::move(description);
  }
  out->numels = tp_shards->front().numels;
  return out;
}

void SetOption(const planner::PlanOption& o, v1::Precision precision,
               v1::PlanOption* out) {
  out->set_world_size(o.world_size);
  out->set_zero_size(o.zero_size);
  out->set_nodes(o.nodes);
  SetGemini(o.gemini, precision, out->mutable_gemini());
  for (const planner::ChunkConfig& c : o.configs) {
    SetConfig(c, out->add_configs());
  }
  out->set_objective(static_cast<v1::Objective>(o.objective));
  SetRank(o.most_loaded_rank, out->mutable_most_loaded_rank());
  out->set_gathered_chunk_bytes(o.gathered_chunk_bytes);
  out->set_gathered_chunks(o.gathered_chunks);
  out->set_host_bytes_per_node(o.verdict.host_bytes_per_node);
  out->set_layout_padding(o.layout_padding);
  out->set_fits(o.verdict.fits);
  out->set_why_not(o.verdict.why_not);
  out->set_colossalai(o.colossalai);
  out->set_activation_bytes(o.activation_bytes);
  out->set_transient_bytes(o.transient_bytes);
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
      PlanSearch(request, limits, &described, &out.tp_shards);
  if (!search.ok()) return search.status();
  if (notes != nullptr && described.has_value()) *notes = NotesOf(*described);
  out.search = *std::move(search);
  if (absl::Status s =
          CheckMeshSizes(request.extra_dp_sizes(), "extra_dp_sizes");
      !s.ok()) {
    return s;
  }
  out.extra_dp_sizes.assign(request.extra_dp_sizes().begin(),
                            request.extra_dp_sizes().end());
  if (out.extra_dp_sizes.empty()) {
    out.extra_dp_sizes.push_back(
        std::max(1u, request.gemini().extra_dp_size()));
  }
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
  out.operations = OperationsOf(std::move(described));
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
