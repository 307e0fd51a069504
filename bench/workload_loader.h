#ifndef CHUNKPLAN_BENCH_WORKLOAD_LOADER_H_
#define CHUNKPLAN_BENCH_WORKLOAD_LOADER_H_

// The benchmark workloads (bench/workloads/*.json): chunkplan.v1
// ChunkSearchRequests in protobuf's JSON form, read into planner requests
// with what the benchmarks report about each.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::bench {

struct Workload {
  std::string name;                // the file name without ".json"
  planner::SearchRequest request;  // engine left as the file gives it
  uint64_t params = 0;             // numels in the request
  uint64_t candidates = 0;         // grid points of the sweep
  uint64_t swept_params = 0;       // sizes swept after the filter
  uint64_t sweep_work = 0;         // candidates x swept_params
  std::string wire;                // the request serialized, as sent
};

// Every *.json file directly in `dir`, in name order, each parsed, converted
// and planned (BuildSearchPlan) once.
// Errors: NOT_FOUND when `dir` holds no .json file or cannot be listed; a
// file's read, JSON or planning error, its message prefixed with the path.
absl::StatusOr<std::vector<Workload>> LoadWorkloads(absl::string_view dir);

}  // namespace chunkplan::bench

#endif  // CHUNKPLAN_BENCH_WORKLOAD_LOADER_H_
