#ifndef CHUNKPLAN_PLANNER_PLAN_TYPES_H_
#define CHUNKPLAN_PLANNER_PLAN_TYPES_H_

// The Plan request and answer, as plain values. They mirror
// chunkplan.v1.PlanRequest / PlanResponse field for field; the service
// converts between the two. The search's rules: docs/plan.md.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "chunkplan/planner/activation_estimate.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/objective.h"
#include "chunkplan/planner/search_types.h"
#include "chunkplan/planner/verdict_types.h"

namespace chunkplan::planner {

// One tensor-parallel degree Plan may try: tp rank 0's numels under the
// family's ShardFormer policy (the service describes the model at each).
struct TpShards {
  uint32_t tp_size = 1;
  std::vector<uint64_t> numels;
  // What tp rank 0 runs at this degree (the activation estimate's split);
  // its tp_size 1 where the service did not describe the model at it (the
  // workload's own shape.tp is then kept).
  TensorParallelShape activations;
  // Set where this degree runs only on some meshes (sequence parallelism
  // that GeminiPlugin leaves without its group, docs/tensor-parallelism.md):
  // given the mesh's zero x extra_dp, a non-OK status refuses that mesh,
  // which is then skipped; where every mesh of the plan is skipped or
  // refused and one was refused, the first refusal answers. Empty: every
  // mesh runs.
  std::function<absl::Status(uint64_t zero_x_extra_dp)> mesh_check;
  // This degree's own frozen flags and operations, indexing `numels`
  // (the service describes the model at each degree; a policy may bind
  // one weight to another and list fewer parameters, OPT's tied head);
  // nullopt: the request's.
  std::optional<std::vector<bool>> frozen;
  std::optional<ModelOperations> operations;
};

struct PlanRequest {
  // numels and the search settings; dp_degrees is ignored.
  SearchRequest search;
  // The tp degrees to try, each with its numels (search.numels is then not
  // read); empty: tp 1 with search.numels. A degree above
  // cluster.gpus_per_node or not dividing a world size is skipped there.
  std::vector<TpShards> tp_shards;
  // The extra_dp degrees to try; empty: 1.
  std::vector<uint32_t> extra_dp_sizes;
  std::vector<bool> frozen;  // as LayoutRequest.frozen
  // Fixed choices; the placement fields are ignored.
  GeminiSettings gemini;
  // "fp16" or "bf16": only for the colossalai text (both are 2 bytes).
  std::string precision = "fp16";
  Cluster cluster;
  uint32_t max_options = 0;  // 0: 10
  std::optional<PlanWorkload> workload;
  // The described model's operations (the gathered-chunk rule).
  ModelOperations operations;
};

// Where an option's chunk size came from (docs/plan.md), in rank order.
enum class ChunkSizeFrom : int {
  kColossalaiSearch = 0,   // "colossalai_search"
  kPeakRankBytes = 1,      // "peak_rank_bytes"
  kPeakRankBytesWide = 2,  // "peak_rank_bytes_wide"
};

// Placement ranks of the order (docs/plan.md's table).
enum class PlanPlacement : int {
  kNothingMoved = 0,
  kPartialOptimizer = 1,
  kFullOptimizer = 2,
  kOptimizerAndParams = 3,
  kAuto = 4,
};

// One configuration: a world size, a chunk size and a placement.
struct PlanOption {
  uint32_t world_size = 0;  // zero x extra_dp x tp (gemini's sizes)
  uint32_t zero_size = 0;   // the degree the chunks spread over
  uint32_t nodes = 0;       // ceil(world_size / cluster.gpus_per_node)
  GeminiSettings gemini;    // with the placement and fractions chosen
  PlanPlacement placement = PlanPlacement::kNothingMoved;
  std::vector<ChunkConfig> configs;
  Objective objective = Objective::kSeedWaste;
  ChunkSizeFrom chunk_size_from = ChunkSizeFrom::kColossalaiSearch;
  RankMemory most_loaded_rank;        // worst case over the chunk order
  uint64_t gathered_chunk_bytes = 0;  // as LayoutResult's
  uint64_t gathered_chunks = 0;
  uint64_t layout_padding = 0;
  uint64_t activation_bytes = 0;
  uint64_t transient_bytes = 0;
  // The device need, host bytes per node, margin, fits, tight and why_not
  // (plan_search/verdict.h).
  Verdict verdict;
  std::string colossalai;
  std::vector<std::string> notes;
};

struct PlanResult {
  std::vector<PlanOption> options;  // ranked, at most max_options
  uint64_t options_considered = 0;
  uint64_t plan_nanos = 0;
};

// "colossalai_search", "peak_rank_bytes" or "peak_rank_bytes_wide".
const char* ChunkSizeFromName(ChunkSizeFrom from);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_PLAN_TYPES_H_
