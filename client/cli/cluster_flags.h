#ifndef CHUNKPLAN_CLIENT_CLI_CLUSTER_FLAGS_H_
#define CHUNKPLAN_CLIENT_CLI_CLUSTER_FLAGS_H_

// The cluster a command line describes (chunkplan.v1.Cluster), for `plan`
// and `layout`: each flag given replaces the request file's field.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/v1/chunk_search.pb.h"

namespace chunkplan::cli {

// What the flags set; each set field replaces the request file's.
struct ClusterFlags {
  std::optional<uint64_t> device_memory_bytes;  // --device-memory or --gpu
  std::optional<uint64_t> host_memory_bytes;
  std::optional<uint32_t> gpus_per_node;
  std::optional<std::vector<uint32_t>> world_sizes;  // plan only
  // plan only: whole_nodes with this max_nodes, world_sizes cleared.
  std::optional<uint32_t> max_nodes;
  std::optional<uint64_t> reserve_bytes;
  std::optional<double> margin;

  // Whether any field is set.
  bool Any() const;
};

// "0.05" or "5%": the share of device memory a configuration must leave
// free, as Cluster.margin takes it (the server checks the range).
// Errors: INVALID_ARGUMENT naming --margin for text that is neither.
absl::StatusOr<double> ParseMargin(absl::string_view text);

// The fields `flags` sets into `cluster` (world_sizes replaced whole; with
// max_nodes, whole_nodes set and world_sizes cleared).
void ApplyClusterFlags(const ClusterFlags& flags, v1::Cluster* cluster);

}  // namespace chunkplan::cli

#endif  // CHUNKPLAN_CLIENT_CLI_CLUSTER_FLAGS_H_
