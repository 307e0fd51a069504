#include "server/planner/plan_search/plan_search.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "chunkplan/planner/activation_estimate.h"
#include "common/status_macros.h"
#include "server/planner/layout/chunk_placement.h"
#include "server/planner/layout/placement.h"
#include "server/planner/plan_search/plan_checks.h"
#include "server/planner/plan_search/plan_fractions.h"
#include "server/planner/plan_search/plan_nodes.h"
#include "server/planner/plan_search/plan_option.h"
#include "server/planner/plan_search/plan_order.h"
#include "server/planner/plan_search/verdict.h"

namespace chunkplan::planner {
namespace {

constexpr ChunkSizeFrom kSources[] = {ChunkSizeFrom::kColossalaiSearch,
                                      ChunkSizeFrom::kPeakRankBytes,
                                      ChunkSizeFrom::kPeakRankBytesWide};
constexpr uint32_t kDefaultMaxOptions = 10;
// The wide grid: 1024 Mi elements above the start, interval at most 128.
constexpr double kWideRangeM = 1024;
constexpr uint64_t kWideInterval = 128;

// The chunk sizes at `world_size`, in source order, leaving out those
// ColossalAI refuses and repeats of an earlier one's configs.
absl::StatusOr<std::vector<PlanChunks>> ChunkSizesAt(const PlanRequest& request,
                                                     uint32_t world_size,
                                                     LayoutCall layout) {
  std::vector<PlanChunks> kept;
  for (const ChunkSizeFrom from : kSources) {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        LayoutResult r, layout(ChunkSizeRequest(request, world_size, from)));
    if (!r.search.has_value()) {
      return absl::InternalError("Layout searched but returned no search");
    }
    std::vector<ChunkConfig> configs = std::move(r.search->configs);
    if (!ColossalaiAccepts(configs, world_size)) continue;
    if (std::any_of(kept.begin(), kept.end(), [&](const PlanChunks& k) {
          return k.configs == configs;
        })) {
      continue;
    }
    PlanChunks chunks;
    chunks.world_size = world_size;
    chunks.from = from;
    chunks.configs = std::move(configs);
    chunks.groups = std::move(r.groups);
    chunks.layout_padding = r.layout_padding;
    kept.push_back(std::move(chunks));
  }
  return kept;
}

// Evaluates the placements of `chunks` (docs/plan.md's table) onto `out`.
absl::Status AppendOptions(const PlanContext& context,
                           const GeminiSettings& fixed,
                           const PlanChunks& chunks, const StopCheck& stop,
                           std::vector<PlanOption>* out) {
  const uint64_t memory = context.cluster->device_memory_bytes;
  // The device check: the need leaves the margin free.
  const uint64_t budget = DeviceBudgetBytes(*context.cluster);
  const auto settings = [&](PlanPlacement p, double fraction) {
    return PlacementSettings(fixed, p, fraction, memory);
  };
  // Adds the option; returns whether it passes the device check.
  const auto add = [&](PlanPlacement p,
                       double fraction) -> absl::StatusOr<bool> {
    if (stop) CHUNKPLAN_RETURN_IF_ERROR(stop());
    CHUNKPLAN_ASSIGN_OR_RETURN(
        PlanOption o,
        EvaluateOption(context, chunks, p, settings(p, fraction)));
    out->push_back(std::move(o));
    return out->back().verdict.device_need_bytes <= budget;
  };
  // The smallest fraction of `p` that passes the device check, if any: one
  // placement per class of fractions PlaceOnDevices cannot tell apart.
  const FractionClasses classes(chunks.groups, fixed);
  const auto smallest = [&](PlanPlacement p, auto search) {
    std::vector<std::pair<WideBytes, bool>> known;
    return search([&](double x) -> absl::StatusOr<bool> {
      const WideBytes key = p == PlanPlacement::kPartialOptimizer
                                ? classes.OptimClass(x)
                                : classes.ParamClass(x);
      for (const auto& [k, passes] : known) {
        if (k == key) return passes;
      }
      if (stop) CHUNKPLAN_RETURN_IF_ERROR(stop());
      CHUNKPLAN_ASSIGN_OR_RETURN(
          const uint64_t need,
          DeviceNeedBytes(context, chunks, settings(p, x)));
      known.emplace_back(key, need <= budget);
      return need <= budget;
    });
  };
  CHUNKPLAN_ASSIGN_OR_RETURN(const bool nothing_moved_passes,
                             add(PlanPlacement::kNothingMoved, 0));
  if (!nothing_moved_passes) {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const std::optional<double> f,
        smallest(PlanPlacement::kPartialOptimizer,
                 [](FractionCheck c) { return SmallestOptimFraction(c); }));
    if (f.has_value()) {
      CHUNKPLAN_RETURN_IF_ERROR(
          add(PlanPlacement::kPartialOptimizer, *f).status());
    }
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(const bool full_passes,
                             add(PlanPlacement::kFullOptimizer, 1));
  if (!full_passes) {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const std::optional<double> g,
        smallest(PlanPlacement::kOptimizerAndParams,
                 [](FractionCheck c) { return SmallestParamFraction(c); }));
    if (g.has_value()) {
      CHUNKPLAN_RETURN_IF_ERROR(
          add(PlanPlacement::kOptimizerAndParams, *g).status());
    }
  }
  return add(PlanPlacement::kAuto, 0).status();
}

// The workload's estimate at one tp degree, and the note where it is not
// split by tp.
struct TpActivationNeed {
  ActivationNeed need;
  std::optional<std::string> note;
};

// `workload` at `tp`: its shape split as the service described tp rank 0
// (tp.activations), or as sent where the service did not describe it at
// this degree. Errors: PlanActivationNeed's.
absl::StatusOr<TpActivationNeed> ActivationNeedAtTp(
    const std::optional<PlanWorkload>& workload, const TpShards& tp) {
  if (!workload.has_value()) return TpActivationNeed{};
  PlanWorkload at = *workload;
  if (tp.activations.tp_size == tp.tp_size) at.shape.tp = tp.activations;
  TpActivationNeed out;
  CHUNKPLAN_ASSIGN_OR_RETURN(out.need, PlanActivationNeed(at));
  out.note = TpActivationNote(at.shape, tp.tp_size);
  return out;
}

}  // namespace

const char* ChunkSizeFromName(ChunkSizeFrom from) {
  switch (from) {
    case ChunkSizeFrom::kColossalaiSearch:
      return "colossalai_search";
    case ChunkSizeFrom::kPeakRankBytes:
      return "peak_rank_bytes";
    case ChunkSizeFrom::kPeakRankBytesWide:
      return "peak_rank_bytes_wide";
  }
  return "unknown";
}

LayoutRequest ChunkSizeRequest(const PlanRequest& request, uint32_t world_size,
                               ChunkSizeFrom from) {
  LayoutRequest l;
  l.search = request.search;
  l.search.dp_degrees = {world_size};
  l.frozen = request.frozen;
  l.gemini =
      PlacementSettings(request.gemini, PlanPlacement::kNothingMoved, 0, 0);
  l.objective = from == ChunkSizeFrom::kColossalaiSearch
                    ? Objective::kSeedWaste
                    : Objective::kPeakRankBytes;
  if (from == ChunkSizeFrom::kPeakRankBytesWide) {
    l.search.search_range_m = kWideRangeM;
    l.search.search_interval =
        std::min(kWideInterval, request.search.search_interval);
  }
  return l;
}

bool ColossalaiAccepts(const std::vector<ChunkConfig>& configs,
                       uint32_t world_size) {
  return std::all_of(configs.begin(), configs.end(), [&](const ChunkConfig& c) {
    return c.keep_gathered || c.chunk_size % world_size == 0;
  });
}

absl::StatusOr<PlanResult> PlanSearch(const PlanRequest& request,
                                      LayoutCall layout,
                                      const StopCheck& stop) {
  CHUNKPLAN_RETURN_IF_ERROR(CheckCluster(request.cluster));
  PlanContext context;
  context.cluster = &request.cluster;
  context.precision = &request.precision;
  context.has_workload = request.workload.has_value();
  context.num_params = request.search.numels.size();
  context.frozen = &request.frozen;
  context.operations = &request.operations;
  context.recomputed_layers =
      RecomputedLayers(request.operations, request.workload);
  // The workload's own estimate first: its refusals come before any
  // layout's (each tp degree's split follows its layouts).
  CHUNKPLAN_RETURN_IF_ERROR(PlanActivationNeed(request.workload).status());
  // The mesh (docs/tensor-parallelism.md): each tp degree with its shards,
  // each extra_dp degree; the chunks spread over zero = world / (tp x
  // extra_dp), tp within a node.
  std::vector<TpShards> tp_shards = request.tp_shards;
  if (tp_shards.empty()) {
    TpShards whole;
    whole.numels = request.search.numels;
    tp_shards.push_back(std::move(whole));
  }
  std::vector<uint32_t> extra_dp_sizes = request.extra_dp_sizes;
  if (extra_dp_sizes.empty()) extra_dp_sizes.push_back(1);
  // Every Layout first: each refusal of the search part or frozen comes
  // before any option's sums.
  std::vector<PlanChunks> sizes;
  std::vector<PlanContext> contexts;  // each of sizes' tp degree's
  absl::Status refused;   // the first mesh a degree's mesh_check refused
  bool laid_out = false;  // some mesh ran its Layouts
  for (const TpShards& tp : tp_shards) {
    if (tp.tp_size > request.cluster.gpus_per_node) continue;
    PlanRequest shards = request;
    shards.search.numels = tp.numels;
    shards.gemini.tp_size = tp.tp_size;
    // The degree's own parameter list: its frozen flags and operations.
    PlanContext at_tp = context;
    at_tp.num_params = tp.numels.size();
    if (tp.frozen.has_value()) {
      shards.frozen = *tp.frozen;
      at_tp.frozen = &*tp.frozen;
    }
    if (tp.operations.has_value()) {
      at_tp.operations = &*tp.operations;
      at_tp.recomputed_layers =
          RecomputedLayers(*tp.operations, request.workload);
    }
    std::optional<uint64_t> frozen;  // once a Layout has checked frozen
    for (const uint32_t w : PlanWorldSizes(request.cluster)) {
      for (const uint32_t extra_dp : extra_dp_sizes) {
        const uint64_t rest = uint64_t{tp.tp_size} * extra_dp;
        if (rest == 0 || w % rest != 0) continue;
        const uint32_t zero = static_cast<uint32_t>(w / rest);
        if (tp.mesh_check) {
          absl::Status s = tp.mesh_check(uint64_t{zero} * extra_dp);
          if (!s.ok()) {
            if (refused.ok()) refused = std::move(s);
            continue;
          }
        }
        laid_out = true;
        CHUNKPLAN_ASSIGN_OR_RETURN(std::vector<PlanChunks> at,
                                   ChunkSizesAt(shards, zero, layout));
        if (!frozen.has_value()) {
          frozen = FrozenElements(shards.search, shards.frozen);
        }
        CHUNKPLAN_ASSIGN_OR_RETURN(const TpActivationNeed activations,
                                   ActivationNeedAtTp(request.workload, tp));
        for (PlanChunks& chunks : at) {
          chunks.activation_bytes = activations.need.activation_bytes;
          chunks.transient_bytes = activations.need.transient_bytes;
          chunks.activation_note = activations.note;
          chunks.tp_size = tp.tp_size;
          chunks.extra_dp_size = extra_dp;
          chunks.frozen_elements = *frozen;
          sizes.push_back(std::move(chunks));
          contexts.push_back(at_tp);
        }
      }
    }
  }
  if (!laid_out && !refused.ok()) return refused;
  std::vector<PlanOption> options;
  for (size_t i = 0; i < sizes.size(); ++i) {
    CHUNKPLAN_RETURN_IF_ERROR(
        AppendOptions(contexts[i], request.gemini, sizes[i], stop, &options));
  }
  OrderOptions(&options);
  PlanResult result;
  result.options_considered = options.size();
  const uint32_t keep =
      request.max_options == 0 ? kDefaultMaxOptions : request.max_options;
  if (options.size() > keep) options.resize(keep);
  result.options = std::move(options);
  return result;
}

}  // namespace chunkplan::planner
