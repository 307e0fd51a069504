#ifndef CHUNKPLAN_PLANNER_SEARCH_TYPES_H_
#define CHUNKPLAN_PLANNER_SEARCH_TYPES_H_

// The planner's request and answer, as plain values. They mirror
// chunkplan.v1.ChunkSearchRequest / ChunkSearchResponse field for field; the
// service converts between the two.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace chunkplan::planner {

// The engine that sweeps the candidates. Values equal chunkplan.v1.Engine's.
enum class Engine : int {
  kAuto = 0,
  kCpuSweep = 1,
  kCpuPlateau = 2,
  kCuda = 3,
};

// "AUTO", "CPU_SWEEP", "CPU_PLATEAU" or "CUDA"; "UNKNOWN" for other values.
absl::string_view EngineName(Engine engine);

// One search, as the seed's search_chunk_configuration takes it.
struct SearchRequest {
  // Parameter sizes in visit order.
  std::vector<uint64_t> numels;
  // Empty: all 1; one value: shared by all; else one per numel.
  std::vector<uint32_t> dp_degrees;
  // Units of 2**20 elements, rounded half to even (Python's round).
  double search_range_m = 0;
  uint64_t search_interval = 0;
  double min_chunk_size_m = 32;
  bool filter_exlarge_params = true;
  Engine engine = Engine::kAuto;
};

// The chunk configuration of one data-parallel degree.
struct ChunkConfig {
  uint32_t dp_degree = 0;
  uint64_t chunk_size = 0;
  bool keep_gathered = false;

  friend bool operator==(const ChunkConfig&, const ChunkConfig&) = default;
};

// The seed's answer plus what the service reports about the run.
struct SearchResult {
  // Kept-gathered degrees first, then the others, each in first-seen order.
  std::vector<ChunkConfig> configs;
  uint64_t total_param_size = 0;
  uint64_t min_chunk_waste = 0;
  // The engine that ran (never kAuto).
  Engine engine = Engine::kAuto;
  // Grid points in the sweep.
  uint64_t candidates = 0;
  // Wall time spent in the planner.
  uint64_t search_nanos = 0;
  // Empty, unless the engine first chosen failed on its device and `engine`
  // answered instead: then why (for the service's log).
  std::string fallback_reason;
};

// Asked between slices of an engine's work: OK to go on, or the status the
// search ends with (DEADLINE_EXCEEDED, CANCELLED). May be called from several
// threads at once. An empty function never stops.
using StopCheck = std::function<absl::Status()>;

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_SEARCH_TYPES_H_
