#include "server/service/proto_convert.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/cluster_checks.h"
#include "server/models/model_description.h"
#include "server/service/workload_convert.h"

namespace chunkplan::service {
namespace {

using planner::Engine;

static_assert(static_cast<int>(Engine::kAuto) == v1::ENGINE_AUTO);
static_assert(static_cast<int>(Engine::kCpuSweep) == v1::ENGINE_CPU_SWEEP);
static_assert(static_cast<int>(Engine::kCpuPlateau) == v1::ENGINE_CPU_PLATEAU);
static_assert(static_cast<int>(Engine::kCuda) == v1::ENGINE_CUDA);
static_assert(static_cast<int>(planner::Optimizer::kAdam) ==
              v1::OPTIMIZER_ADAM);
static_assert(static_cast<int>(planner::Optimizer::kNone) ==
              v1::OPTIMIZER_NONE);
static_assert(static_cast<int>(planner::Placement::kStatic) ==
              v1::PLACEMENT_STATIC);
static_assert(static_cast<int>(planner::Placement::kAuto) ==
              v1::PLACEMENT_AUTO);
static_assert(static_cast<int>(planner::Objective::kSeedWaste) ==
              v1::OBJECTIVE_SEED_WASTE);
static_assert(static_cast<int>(planner::Objective::kLayoutPadding) ==
              v1::OBJECTIVE_LAYOUT_PADDING);
static_assert(static_cast<int>(planner::Objective::kPeakRankBytes) ==
              v1::OBJECTIVE_PEAK_RANK_BYTES);

}  // namespace

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

void SetConfig(const planner::ChunkConfig& c, v1::ChunkConfig* out) {
  out->set_dp_degree(c.dp_degree);
  out->set_chunk_size(c.chunk_size);
  out->set_keep_gathered(c.keep_gathered);
}

void SetRank(const planner::RankMemory& m, v1::RankMemory* out) {
  out->set_param_bytes(m.param_bytes);
  out->set_master_bytes(m.master_bytes);
  out->set_grad_bytes(m.grad_bytes);
  out->set_optimizer_bytes(m.optimizer_bytes);
  out->set_frozen_bytes(m.frozen_bytes);
  out->set_device_bytes(m.device_bytes);
  out->set_pinned_host_bytes(m.pinned_host_bytes);
  out->set_offloaded_host_bytes(m.offloaded_host_bytes);
  out->set_host_bytes(m.host_bytes);
}

namespace {

void SetPlacement(const planner::PlacementOutcome& p,
                  v1::PlacementOutcome* out) {
  out->set_offloaded_chunks(p.offloaded_chunks);
  out->set_offloaded_chunks_max(p.offloaded_chunks_max);
  out->set_effective_offload_optim_frac(p.effective_offload_optim_frac);
  out->set_gathered_at_run_time(p.gathered_at_run_time);
  out->set_param_offloaded_chunks(p.param_offloaded_chunks);
  for (const std::string& note : p.notes) out->add_notes(note);
}

}  // namespace

absl::StatusOr<planner::SearchRequest> SearchSettingsFromProto(
    const v1::ChunkSearchRequest& request) {
  if (!v1::Engine_IsValid(request.engine())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "engine is ", request.engine(),
        "; expected ENGINE_AUTO, ENGINE_CPU_SWEEP, ENGINE_CPU_PLATEAU or "
        "ENGINE_CUDA"));
  }
  planner::SearchRequest out;
  out.search_interval = request.search_interval();
  if (request.has_model() && out.search_interval == 0) {
    out.search_interval = kGeminiDefaultSearchInterval;
  }
  out.search_range_m = request.search_range_m();
  if (request.has_min_chunk_size_m()) {
    out.min_chunk_size_m = request.min_chunk_size_m();
  }
  if (request.has_filter_exlarge_params()) {
    out.filter_exlarge_params = request.filter_exlarge_params();
  }
  out.engine = static_cast<Engine>(request.engine());
  return out;
}

absl::StatusOr<planner::SearchRequest> FromProto(
    const v1::ChunkSearchRequest& request, const ModelLimits& limits,
    std::optional<models::ModelDescription>* described, ModelNotes* notes,
    const models::TpOptions& tp) {
  absl::StatusOr<planner::SearchRequest> out = SearchSettingsFromProto(request);
  if (!out.ok()) return out.status();
  if (request.has_model()) {
    std::optional<models::ModelDescription> local;
    if (described == nullptr) described = &local;
    absl::StatusOr<std::vector<uint64_t>> numels =
        ModelNumels(request, limits, described, tp);
    if (!numels.ok()) return numels.status();
    out->numels = *std::move(numels);
    if (notes != nullptr) *notes = NotesOf(**described);
  } else {
    out->numels.assign(request.numels().begin(), request.numels().end());
  }
  out->dp_degrees.assign(request.dp_degrees().begin(),
                         request.dp_degrees().end());
  return out;
}

v1::ChunkSearchResponse ToProto(const planner::SearchResult& result) {
  v1::ChunkSearchResponse out;
  for (const planner::ChunkConfig& c : result.configs) {
    SetConfig(c, out.add_configs());
  }
  out.set_total_param_size(result.total_param_size);
  out.set_min_chunk_waste(result.min_chunk_waste);
  out.set_engine(static_cast<v1::Engine>(result.engine));
  out.set_candidates(result.candidates);
  out.set_search_nanos(result.search_nanos);
  return out;
}

absl::StatusOr<planner::GeminiSettings> FromProto(
    const v1::GeminiSettings& gemini) {
  if (!v1::Precision_IsValid(gemini.precision())) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemini.precision is ", gemini.precision(),
                     "; expected PRECISION_FP16 or PRECISION_BF16"));
  }
  if (!v1::Placement_IsValid(gemini.placement())) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemini.placement is ", gemini.placement(),
                     "; expected PLACEMENT_STATIC or PLACEMENT_AUTO"));
  }
  if (!v1::Optimizer_IsValid(gemini.optimizer())) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemini.optimizer is ", gemini.optimizer(),
                     "; expected OPTIMIZER_ADAM or OPTIMIZER_NONE"));
  }
  planner::GeminiSettings out;
  if (gemini.has_master_weights()) out.master_weights = gemini.master_weights();
  out.gradient_accumulation = gemini.gradient_accumulation();
  if (gemini.has_pin_memory()) out.pin_memory = gemini.pin_memory();
  out.optimizer = static_cast<planner::Optimizer>(gemini.optimizer());
  out.placement = static_cast<planner::Placement>(gemini.placement());
  if (gemini.has_shard_param_frac()) {
    out.shard_param_frac = gemini.shard_param_frac();
  }
  out.offload_optim_frac = gemini.offload_optim_frac();
  out.offload_param_frac = gemini.offload_param_frac();
  if (gemini.has_device_memory_bytes()) {
    out.device_memory_bytes = gemini.device_memory_bytes();
  }
  out.tp_size = gemini.tp_size() == 0 ? 1 : gemini.tp_size();
  out.extra_dp_size = gemini.extra_dp_size() == 0 ? 1 : gemini.extra_dp_size();
  out.sequence_parallelism = gemini.enable_sequence_parallelism();
  out.max_prefetch = gemini.max_prefetch();
  return out;
}

void SetGemini(const planner::GeminiSettings& g, v1::Precision precision,
               v1::GeminiSettings* out) {
  out->set_precision(precision);
  out->set_master_weights(g.master_weights);
  out->set_gradient_accumulation(g.gradient_accumulation);
  out->set_pin_memory(g.pin_memory);
  out->set_optimizer(static_cast<v1::Optimizer>(g.optimizer));
  out->set_placement(static_cast<v1::Placement>(g.placement));
  if (g.shard_param_frac.has_value()) {
    out->set_shard_param_frac(*g.shard_param_frac);
  }
  out->set_offload_optim_frac(g.offload_optim_frac);
  out->set_offload_param_frac(g.offload_param_frac);
  if (g.device_memory_bytes.has_value()) {
    out->set_device_memory_bytes(*g.device_memory_bytes);
  }
  // 0 and 1 both mean none on the wire: a mesh of one data-parallel group
  // stays as every answer before tensor parallelism wrote it.
  if (g.tp_size > 1) out->set_tp_size(g.tp_size);
  if (g.extra_dp_size > 1) out->set_extra_dp_size(g.extra_dp_size);
  out->set_enable_sequence_parallelism(g.sequence_parallelism);
  out->set_max_prefetch(g.max_prefetch);
}

absl::StatusOr<planner::LayoutRequest> FromProto(
    const v1::LayoutRequest& request, const ModelLimits& limits,
    ModelNotes* notes) {
  absl::StatusOr<planner::GeminiSettings> gemini = FromProto(request.gemini());
  if (!gemini.ok()) return gemini.status();
  if (!v1::Objective_IsValid(request.objective())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "objective is ", request.objective(),
        "; expected OBJECTIVE_SEED_WASTE, OBJECTIVE_LAYOUT_PADDING or "
        "OBJECTIVE_PEAK_RANK_BYTES"));
  }
  if (request.has_workload()) {
    if (absl::Status s = CheckWorkloadSizes(request.workload()); !s.ok()) {
      return s;
    }
  }
  std::optional<planner::Cluster> cluster;
  if (request.has_cluster()) {
    // Before the model is described, as Plan checks its cluster.
    cluster = ClusterFromProto(request.cluster());
    if (absl::Status s = planner::CheckLayoutCluster(*cluster); !s.ok()) {
      return s;
    }
  }
  std::optional<models::ModelDescription> described;
  absl::StatusOr<planner::SearchRequest> search =
      FromProto(request.search(), limits, &described, notes,
                TpOptionsOf(request.gemini()));
  if (!search.ok()) return Prefixed("search.", search.status());
  if (described.has_value()) {
    // The mesh: the zero group is the largest dp degree (as JudgeLayout
    // counts it), times gemini.extra_dp_size.
    uint64_t zero = 1;
    for (const uint32_t d : request.search().dp_degrees()) {
      zero = std::max<uint64_t>(zero, d);
    }
    for (const v1::ChunkConfig& c : request.configs()) {
      zero = std::max<uint64_t>(zero, c.dp_degree());
    }
    if (absl::Status s = models::CheckSequenceParallelMesh(
            *described, zero * gemini->extra_dp_size);
        !s.ok()) {
      return s;
    }
  }
  planner::LayoutRequest out;
  if (request.has_workload()) {
    absl::StatusOr<planner::PlanWorkload> workload =
        PlanWorkloadOf(request.workload(), described, limits);
    if (!workload.ok()) return workload.status();
    out.workload = *std::move(workload);
  }
  out.search = *std::move(search);
  out.configs.reserve(request.configs_size());
  for (const v1::ChunkConfig& c : request.configs()) {
    out.configs.push_back({c.dp_degree(), c.chunk_size(), c.keep_gathered()});
  }
  absl::StatusOr<std::vector<bool>> frozen =
      FrozenMask(request.frozen(), described);
  if (!frozen.ok()) return frozen.status();
  out.frozen = *std::move(frozen);
  // Last: it takes the description (FrozenMask reads its frozen mask).
  out.operations = OperationsOf(std::move(described));
  out.gemini = *std::move(gemini);
  out.objective = static_cast<planner::Objective>(request.objective());
  out.cluster = std::move(cluster);
  return out;
}

planner::Cluster ClusterFromProto(const v1::Cluster& c) {
  planner::Cluster out;
  out.device_memory_bytes = c.device_memory_bytes();
  out.host_memory_bytes = c.host_memory_bytes();
  out.gpus_per_node = c.gpus_per_node();
  out.world_sizes.assign(c.world_sizes().begin(), c.world_sizes().end());
  out.reserve_bytes = c.reserve_bytes();
  if (c.has_margin()) out.margin = c.margin();
  out.whole_nodes = c.whole_nodes();
  out.max_nodes = c.max_nodes();
  return out;
}

void SetVerdict(const planner::Verdict& v, v1::Verdict* out) {
  out->set_device_need_bytes(v.device_need_bytes);
  out->set_device_memory_bytes(v.device_memory_bytes);
  out->set_reserve_bytes(v.reserve_bytes);
  out->set_margin(v.margin);
  out->set_margin_bytes(v.margin_bytes);
  out->set_headroom_bytes(v.headroom_bytes);
  out->set_device_excess_bytes(v.device_excess_bytes);
  out->set_host_bytes_per_node(v.host_bytes_per_node);
  out->set_host_memory_bytes(v.host_memory_bytes);
  out->set_host_excess_bytes(v.host_excess_bytes);
  out->set_fits(v.fits);
  out->set_tight(v.tight);
  out->set_why_not(v.why_not);
}

v1::FrontierResponse ToProto(const planner::FrontierResult& result) {
  v1::FrontierResponse out;
  out.mutable_points()->Reserve(static_cast<int>(result.points.size()));
  for (const planner::FrontierPoint& p : result.points) {
    v1::FrontierPoint* point = out.add_points();
    point->set_candidate(p.candidate);
    point->set_chunk_size(p.chunk_size);
    point->set_value(p.value);
    point->set_seed_waste(p.seed_waste);
    point->set_layout_padding(p.layout_padding);
    point->set_peak_rank_bytes(p.peak_rank_bytes);
  }
  out.set_engine(static_cast<v1::Engine>(result.engine));
  out.set_candidates(result.candidates);
  out.set_search_nanos(result.search_nanos);
  return out;
}

v1::LayoutResponse ToProto(const planner::LayoutResult& result) {
  v1::LayoutResponse out;
  if (result.search.has_value()) {
    *out.mutable_search() = ToProto(*result.search);
  }
  for (const planner::GroupLayout& g : result.groups) {
    v1::GroupLayout* group = out.add_groups();
    group->set_dp_degree(g.config.dp_degree);
    group->set_chunk_size(g.config.chunk_size);
    group->set_keep_gathered(g.config.keep_gathered);
    group->mutable_chunks()->Reserve(static_cast<int>(g.chunks.size()));
    for (const planner::ChunkLayout& c : g.chunks) {
      v1::ChunkLayout* chunk = group->add_chunks();
      chunk->set_size(c.size);
      chunk->set_used(c.used);
      chunk->set_first_param(c.first_param);
      chunk->set_num_params(c.num_params);
    }
    group->set_padding(g.padding);
  }
  out.set_layout_padding(result.layout_padding);
  SetRank(result.most_loaded_rank, out.mutable_most_loaded_rank());
  SetRank(result.least_loaded_rank, out.mutable_least_loaded_rank());
  out.set_gathered_chunk_bytes(result.gathered_chunk_bytes);
  out.set_gathered_chunks(result.gathered_chunks);
  SetPlacement(result.placement, out.mutable_placement());
  SetRank(result.most_loaded_rank_least, out.mutable_most_loaded_rank_least());
  out.set_activation_bytes(result.activation_bytes);
  out.set_transient_bytes(result.transient_bytes);
  if (result.verdict.has_value()) {
    SetVerdict(*result.verdict, out.mutable_verdict());
  }
  return out;
}

}  // namespace chunkplan::service
