#ifndef CHUNKPLAN_PLANNER_LAYOUT_TYPES_H_
#define CHUNKPLAN_PLANNER_LAYOUT_TYPES_H_

// The Layout request and answer, as plain values: what Gemini's
// ChunkManager allocates for a configuration, and what every rank holds.
// They mirror chunkplan.v1.LayoutRequest / LayoutResponse field for field;
// the service converts between the two.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "chunkplan/planner/objective.h"
#include "chunkplan/planner/search_types.h"
#include "chunkplan/planner/verdict_types.h"
#include "chunkplan/planner/workload_types.h"

namespace chunkplan::planner {

// The optimizer whose states a rank holds. Values equal chunkplan.v1's.
enum class Optimizer : int {
  kAdam = 0,  // two states per element
  kNone = 1,  // none
};

// GeminiPlugin's placement policy. Values equal chunkplan.v1's.
enum class Placement : int {
  kStatic = 0,  // fixed fractions (below)
  kAuto = 1,    // every non-gathered chunk's optimizer side on the host
};

// GeminiPlugin's settings that change what a rank holds; the defaults are
// GeminiPlugin's. fp16 and bf16 are both 2 bytes, so the precision does not
// appear here. The placement fields' rules are in docs/placement.md.
struct GeminiSettings {
  bool master_weights = true;
  bool gradient_accumulation = false;
  bool pin_memory = true;
  Optimizer optimizer = Optimizer::kAdam;
  Placement placement = Placement::kStatic;
  // Static only; unset means 1.0.
  std::optional<double> shard_param_frac;
  // Static only, in [0, 1].
  double offload_optim_frac = 0.0;
  double offload_param_frac = 0.0;
  // Auto only: the device's memory, to say whether warm-up moves chunks.
  std::optional<uint64_t> device_memory_bytes;
  // GeminiPlugin's mesh beside the zero group (docs/tensor-parallelism.md):
  // the world is zero x extra_dp_size x tp_size ranks. The numels are
  // already tp rank 0's shards; the chunks spread over the zero group (the
  // dp degree), so these change only the ranks a node holds and the
  // colossalai text.
  uint32_t tp_size = 1;
  uint32_t extra_dp_size = 1;
  bool sequence_parallelism = false;  // enable_sequence_parallelism
  // Chunks fetched ahead of the operation that needs them, from the second
  // iteration on (layout/gathered_chunks.h).
  uint32_t max_prefetch = 0;
};

// The model's operations, for the gathered-chunk rule
// (layout/gathered_chunks.h): what the service's model description gives.
struct ModelOperations {
  // Each operation of one forward pass, in order: the parameters it takes
  // (indices into numels). Empty: none known.
  std::vector<std::vector<uint64_t>> forward;
  // One per forward operation: the decoder layer it runs in, -1 outside
  // one; what gradient checkpointing re-runs (layout/gathered_chunks.h).
  std::vector<int64_t> layers;
  // The described model's model_type when its family has no operation
  // sequence (the answer then says it counted one chunk); empty otherwise.
  std::string unsequenced_model_type;
};

struct LayoutRequest {
  // The parameters, and the search that picks the configs.
  SearchRequest search;
  // Non-empty: one per degree present, used instead of searching, placed
  // in this order.
  std::vector<ChunkConfig> configs;
  // Empty: none frozen; else one per numel. Frozen parameters count in the
  // search but are never placed.
  std::vector<bool> frozen;
  GeminiSettings gemini;
  // Which candidate the search picks (kSeedWaste: the seed's answer).
  Objective objective = Objective::kSeedWaste;
  // Set: LayoutResult.activation_bytes is its estimate, and with
  // activation_checkpointing the gathered chunks replay each layer's re-run
  // (Layout only; Frontier refuses it).
  std::optional<PlanWorkload> workload;
  // Set: LayoutResult.verdict judges the layout against it (Layout only;
  // Frontier refuses it).
  std::optional<Cluster> cluster;
  // The described model's operations (Layout only).
  ModelOperations operations;
};

// One candidate of the frontier, with every measure whatever the objective.
struct FrontierPoint {
  uint64_t candidate = 0;   // index in the search's grid
  uint64_t chunk_size = 0;  // C': the candidate rounded up to the lcm
  uint64_t value = 0;       // the objective's measure (one of the three)
  uint64_t seed_waste = 0;  // at the candidate C itself
  uint64_t layout_padding = 0;
  uint64_t peak_rank_bytes = 0;

  friend bool operator==(const FrontierPoint&, const FrontierPoint&) = default;
};

// Every candidate whose value is a new strict minimum, in grid order: the
// Pareto front of (chunk size, value). The last point is the best.
struct FrontierResult {
  std::vector<FrontierPoint> points;
  Engine engine = Engine::kCpuSweep;
  uint64_t candidates = 0;
  uint64_t search_nanos = 0;
};

// One chunk as ChunkManager allocates it.
struct ChunkLayout {
  uint64_t size = 0;         // elements allocated
  uint64_t used = 0;         // elements of real tensors
  uint64_t first_param = 0;  // index in numels of its first tensor
  uint64_t num_params = 0;   // tensors it holds

  friend bool operator==(const ChunkLayout&, const ChunkLayout&) = default;
};

// The chunks of one dp-degree group, in allocation order.
struct GroupLayout {
  ChunkConfig config;
  std::vector<ChunkLayout> chunks;
  uint64_t padding = 0;  // sum of size - used
};

// The bytes one rank holds, by part.
struct RankMemory {
  uint64_t param_bytes = 0;
  uint64_t master_bytes = 0;
  uint64_t grad_bytes = 0;
  uint64_t optimizer_bytes = 0;
  uint64_t frozen_bytes = 0;
  uint64_t device_bytes = 0;  // the sum of the five above
  uint64_t pinned_host_bytes = 0;
  // Master shards, optimizer states and fp16 shards that the placement
  // keeps on the host, beyond the pinned copies.
  uint64_t offloaded_host_bytes = 0;
  uint64_t host_bytes = 0;  // pinned_host_bytes + offloaded_host_bytes

  friend bool operator==(const RankMemory&, const RankMemory&) = default;
};

// What the placement policy does with the chunks (docs/placement.md).
struct PlacementOutcome {
  // Chunks whose master shard and optimizer states are on the host: the
  // least and the most over every chunk order.
  uint64_t offloaded_chunks = 0;
  uint64_t offloaded_chunks_max = 0;
  // Offloaded fp16 chunk bytes (the fewest chunks' order) over all
  // non-gathered fp16 chunk bytes; 0 when there are none.
  double effective_offload_optim_frac = 0.0;
  uint64_t gathered_at_run_time = 0;    // chunks kept whole on the device
  uint64_t param_offloaded_chunks = 0;  // chunks whose fp16 shard is on host
  std::vector<std::string> notes;

  friend bool operator==(const PlacementOutcome&,
                         const PlacementOutcome&) = default;
};

struct LayoutResult {
  // Set when the search ran (no configs were given).
  std::optional<SearchResult> search;
  // In the search's config order, or the given configs' order.
  std::vector<GroupLayout> groups;
  uint64_t layout_padding = 0;  // sum of the groups' padding
  // Rank 0 of every group under the chunk order that loads its device
  // most, and the same rank under the order that loads it least.
  RankMemory most_loaded_rank;
  RankMemory most_loaded_rank_least;
  // Rank P - 1 of every group under the order that loads its device least.
  RankMemory least_loaded_rank;
  PlacementOutcome placement;
  // The peak of the chunks gathered while the model computes, in bytes
  // beyond most_loaded_rank's, and how many chunk buffers are held there
  // (layout/gathered_chunks.h).
  uint64_t gathered_chunk_bytes = 0;
  uint64_t gathered_chunks = 0;
  // The activation ESTIMATE for the request's workload per rank (0 without
  // one); not counted in most_loaded_rank.
  uint64_t activation_bytes = 0;
  // Backward's largest transient above it (ESTIMATE; 0 without one).
  uint64_t transient_bytes = 0;
  // With the request's cluster: the verdict on the most loaded rank (world
  // size: the largest dp degree).
  std::optional<Verdict> verdict;
  // Wall time spent in the planner, the search included.
  uint64_t layout_nanos = 0;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_LAYOUT_TYPES_H_
