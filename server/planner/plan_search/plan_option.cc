#include "server/planner/plan_search/plan_option.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "chunkplan/planner/activation_estimate.h"
#include "chunkplan/planner/plan_colossalai.h"
#include "common/status_macros.h"
#include "server/planner/layout/gathered_chunks.h"
#include "server/planner/layout/placement.h"
#include "server/planner/layout/rank_memory.h"
#include "server/planner/plan_search/plan_nodes.h"
#include "server/planner/plan_search/verdict.h"

namespace chunkplan::planner {
namespace {

constexpr char kOptimizerNote[] =
    "the optimizer must run where its states live: HybridAdam (CPUAdam on "
    "the host states); a GPU-only fused Adam fails at the first step";
constexpr char kActivationNote[] =
    "activation_bytes and transient_bytes are estimates (docs/plan.md)";

// most_loaded_rank's device bytes + the gathered chunk + reserve_bytes +
// activation_bytes + transient_bytes. Errors: INVALID_ARGUMENT naming
// device_need_bytes.
absl::StatusOr<uint64_t> NeedOf(const PlanContext& context,
                                const PlanChunks& chunks, uint64_t device_bytes,
                                uint64_t gathered_chunk_bytes) {
  const std::optional<uint64_t> need = DeviceNeedOf(
      device_bytes, gathered_chunk_bytes, context.cluster->reserve_bytes,
      chunks.activation_bytes, chunks.transient_bytes);
  if (!need.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device_need_bytes: most_loaded_rank.device_bytes + "
        "gathered_chunk_bytes + reserve_bytes + activation_bytes + "
        "transient_bytes exceeds "
        "2^64-1 at world size ",
        chunks.world_size, " (", ChunkSizeFromName(chunks.from), ")"));
  }
  return *need;
}

}  // namespace

GeminiSettings PlacementSettings(const GeminiSettings& fixed,
                                 PlanPlacement placement, double fraction,
                                 uint64_t device_memory_bytes) {
  GeminiSettings s;
  s.master_weights = fixed.master_weights;
  s.gradient_accumulation = fixed.gradient_accumulation;
  s.pin_memory = fixed.pin_memory;
  s.optimizer = fixed.optimizer;
  s.sequence_parallelism = fixed.sequence_parallelism;
  s.max_prefetch = fixed.max_prefetch;
  switch (placement) {
    case PlanPlacement::kNothingMoved:
      break;
    case PlanPlacement::kPartialOptimizer:
      s.offload_optim_frac = fraction;
      break;
    case PlanPlacement::kFullOptimizer:
      s.offload_optim_frac = 1.0;
      break;
    case PlanPlacement::kOptimizerAndParams:
      s.offload_optim_frac = 1.0;
      s.offload_param_frac = fraction;
      break;
    case PlanPlacement::kAuto:
      s.placement = Placement::kAuto;
      s.device_memory_bytes = device_memory_bytes;
      break;
  }
  return s;
}

absl::StatusOr<GatheredPeak> GatheredOf(const PlanContext& context,
                                        const PlanChunks& chunks,
                                        const GeminiSettings& settings) {
  static const std::vector<bool> kNoneFrozen;
  static const ModelOperations kNoOperations;
  const uint32_t degree[] = {chunks.world_size};
  return GatheredChunkPeak(
      degree, context.num_params,
      context.frozen != nullptr ? *context.frozen : kNoneFrozen, chunks.groups,
      (context.operations != nullptr ? *context.operations : kNoOperations)
          .forward,
      context.recomputed_layers, settings);
}

absl::StatusOr<uint64_t> DeviceNeedBytes(const PlanContext& context,
                                         const PlanChunks& chunks,
                                         const GeminiSettings& settings) {
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const RankMemory rank,
      MostLoadedRank(chunks.groups, chunks.frozen_elements, settings));
  CHUNKPLAN_ASSIGN_OR_RETURN(const GatheredPeak gathered,
                             GatheredOf(context, chunks, settings));
  return NeedOf(context, chunks, rank.device_bytes, gathered.bytes);
}

absl::StatusOr<PlanOption> EvaluateOption(const PlanContext& context,
                                          const PlanChunks& chunks,
                                          PlanPlacement placement,
                                          const GeminiSettings& settings) {
  LayoutResult r;
  CHUNKPLAN_RETURN_IF_ERROR(
      PlaceOnDevices(chunks.groups, chunks.frozen_elements, settings, &r));
  CHUNKPLAN_ASSIGN_OR_RETURN(const GatheredPeak gathered,
                             GatheredOf(context, chunks, settings));
  r.gathered_chunk_bytes = gathered.bytes;
  const Cluster& cluster = *context.cluster;
  PlanOption o;
  const uint64_t world =
      MeshWorld(chunks.world_size, chunks.tp_size, chunks.extra_dp_size);
  o.world_size = static_cast<uint32_t>(world);  // one of cluster.world_sizes
  o.zero_size = chunks.world_size;
  o.nodes = NodesOf(o.world_size, cluster.gpus_per_node);
  o.gemini = settings;
  o.gemini.tp_size = chunks.tp_size;
  o.gemini.extra_dp_size = chunks.extra_dp_size;
  o.placement = placement;
  o.configs = chunks.configs;
  o.chunk_size_from = chunks.from;
  o.objective = chunks.from == ChunkSizeFrom::kColossalaiSearch
                    ? Objective::kSeedWaste
                    : Objective::kPeakRankBytes;
  o.most_loaded_rank = r.most_loaded_rank;
  o.gathered_chunk_bytes = r.gathered_chunk_bytes;
  o.gathered_chunks = gathered.chunks;
  o.layout_padding = chunks.layout_padding;
  o.activation_bytes = chunks.activation_bytes;
  o.transient_bytes = chunks.transient_bytes;
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const uint64_t need,
      NeedOf(context, chunks, r.most_loaded_rank.device_bytes,
             r.gathered_chunk_bytes));
  const std::optional<uint64_t> host =
      HostBytesPerNode(cluster.gpus_per_node, world, r.most_loaded_rank,
                       r.most_loaded_rank_least);
  if (!host.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "host_bytes_per_node: exceeds 2^64-1 at world size ", chunks.world_size,
        " (", ChunkSizeFromName(chunks.from), ")"));
  }
  o.verdict = Judge(cluster, need, *host);
  o.colossalai = ColossalaiKwargs(o.gemini, *context.precision, o.configs);
  o.notes = std::move(r.placement.notes);
  if (placement != PlanPlacement::kNothingMoved) {
    o.notes.push_back(kOptimizerNote);
  }
  if (context.has_workload) o.notes.push_back(kActivationNote);
  if (chunks.activation_note.has_value()) {
    o.notes.push_back(*chunks.activation_note);
  }
  if (std::optional<std::string> note =
          context.operations != nullptr
              ? GatheredChunksNote(*context.operations)
              : std::nullopt) {
    o.notes.push_back(*std::move(note));
  }
  return o;
}

}  // namespace chunkplan::planner
