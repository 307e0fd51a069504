#include "server/planner/plan_search/plan_nodes.h"

namespace chunkplan::planner {

std::vector<uint32_t> PlanWorldSizes(const Cluster& cluster) {
  if (!cluster.whole_nodes) return cluster.world_sizes;
  std::vector<uint32_t> sizes;
  sizes.reserve(cluster.max_nodes);
  for (uint32_t n = 1; n <= cluster.max_nodes; ++n) {
    sizes.push_back(n * cluster.gpus_per_node);
  }
  return sizes;
}

uint32_t NodesOf(uint32_t world_size, uint32_t gpus_per_node) {
  return world_size / gpus_per_node + (world_size % gpus_per_node != 0);
}

}  // namespace chunkplan::planner
