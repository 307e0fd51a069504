#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_OPTION_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_OPTION_H_

// One Plan option's figures and verdict (docs/plan.md, "Every option's
// figures"): a chunk layout re-placed under one placement's settings.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/plan_types.h"
#include "server/planner/layout/gathered_chunks.h"

namespace chunkplan::planner {

// What every option of one request shares.
struct PlanContext {
  const Cluster* cluster = nullptr;
  const std::string* precision = nullptr;  // "fp16" or "bf16"
  bool has_workload = false;
  // The parameters' count and frozen flags, and the model's operations
  // (null: none frozen, no operations).
  size_t num_params = 0;
  const std::vector<bool>* frozen = nullptr;
  const ModelOperations* operations = nullptr;
  // What gradient checkpointing re-runs (RecomputedLayers; empty: none).
  std::span<const int64_t> recomputed_layers;
};

// One chunk size at one mesh, laid out once over the zero group.
struct PlanChunks {
  uint32_t world_size = 0;  // the zero degree (the configs' dp_degree)
  ChunkSizeFrom from = ChunkSizeFrom::kColossalaiSearch;
  std::vector<ChunkConfig> configs;
  std::vector<GroupLayout> groups;
  uint64_t layout_padding = 0;
  // The rest of the mesh: the whole world is world_size x tp x extra_dp.
  uint32_t tp_size = 1;
  uint32_t extra_dp_size = 1;
  uint64_t frozen_elements = 0;  // of this tp degree's shards
  // The workload's estimate at this tp degree (0 without a workload) and
  // the note where it is not split by tp (TpActivationNote).
  uint64_t activation_bytes = 0;
  uint64_t transient_bytes = 0;
  std::optional<std::string> activation_note;
};

// The settings of `placement`: the fixed choices of `fixed` (precision,
// master weights, gradient accumulation, pin memory, optimizer) with the
// placement fields of docs/plan.md's table; `fraction` is f for
// kPartialOptimizer and g for kOptimizerAndParams (else unused).
GeminiSettings PlacementSettings(const GeminiSettings& fixed,
                                 PlanPlacement placement, double fraction,
                                 uint64_t device_memory_bytes);

// The gathered-chunk peak of `chunks` under `settings`
// (layout/gathered_chunks.h; no operations where context has none).
// Errors: GatheredChunkPeak's.
absl::StatusOr<GatheredPeak> GatheredOf(const PlanContext& context,
                                        const PlanChunks& chunks,
                                        const GeminiSettings& settings);

// device_need_bytes of `chunks` under `settings`. Errors: PlaceOnDevices';
// INVALID_ARGUMENT naming device_need_bytes when the sum exceeds 2^64-1.
absl::StatusOr<uint64_t> DeviceNeedBytes(const PlanContext& context,
                                         const PlanChunks& chunks,
                                         const GeminiSettings& settings);

// The whole option: figures, fits, why_not, colossalai text and notes.
// Errors: those of DeviceNeedBytes; INVALID_ARGUMENT naming
// host_bytes_per_node when it exceeds 2^64-1.
absl::StatusOr<PlanOption> EvaluateOption(const PlanContext& context,
                                          const PlanChunks& chunks,
                                          PlanPlacement placement,
                                          const GeminiSettings& settings);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_OPTION_H_
