#ifndef CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_PLANS_H_
#define CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_PLANS_H_

// Fresh random Plan requests for the differential test: a few parameters of
// random magnitudes (zeros, equal sizes, a group small enough to be kept
// gathered), grids of at most a few thousand candidates, random fixed Gemini
// choices (and placement fields, which Plan ignores), frozen parameters, and
// a cluster whose budgets straddle the request's needs so that every
// placement of docs/plan.md's table appears; world sizes from 1 to 12 (6 and
// 12 often), or whole nodes (1 to 3 of 1 to 8 GPUs). Some requests carry
// one fault that a check refuses.

#include <cstdint>
#include <random>

#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::testing {

// The one fault a generated Plan request carries, if any.
enum class PlanFault {
  kNone,
  kDeviceMemory,    // cluster.device_memory_bytes 0
  kGpusPerNode,     // cluster.gpus_per_node 0
  kNoWorldSizes,    // cluster.world_sizes empty
  kZeroWorldSize,   // an entry 0
  kRepeatedSize,    // an entry repeated
  kFrozenLength,    // frozen neither empty nor one per numel
  kSearchInterval,  // search.search_interval 0
  kMargin,          // cluster.margin outside [0, 1)
  kMaxNodes,        // max_nodes without whole_nodes, or 0 or 65 with it
};
inline constexpr int kNumPlanFaults = 10;

// Deterministic for a seed.
class PlanGenerator {
 public:
  explicit PlanGenerator(uint64_t seed) : rng_(seed) {}

  // The next request: valid, or with probability `fault_chance` one fault.
  v1::PlanRequest Next(double fault_chance, PlanFault* fault);

 private:
  uint64_t Uniform(uint64_t lo, uint64_t hi);  // inclusive
  bool Chance(double p);
  uint64_t LogUniform(uint64_t lo, uint64_t hi);
  void SetSearch(v1::ChunkSearchRequest* s);
  void SetGemini(v1::GeminiSettings* g);
  void SetCluster(uint64_t total, v1::Cluster* c);
  void Break(PlanFault fault, v1::PlanRequest* r);

  std::mt19937_64 rng_;
};

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTS_DIFFERENTIAL_RANDOM_PLANS_H_
