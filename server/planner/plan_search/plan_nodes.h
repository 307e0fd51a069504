#ifndef CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_NODES_H_
#define CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_NODES_H_

// Plan's answer in nodes (docs/plan.md, "Whole nodes"): the world sizes a
// cluster asks for and the nodes an option occupies.

#include <cstdint>
#include <vector>

#include "chunkplan/planner/verdict_types.h"

namespace chunkplan::planner {

// The world sizes Plan searches for `cluster` (checked by CheckCluster):
// with whole_nodes, gpus_per_node x n for n = 1 to max_nodes, ascending;
// else world_sizes as given.
std::vector<uint32_t> PlanWorldSizes(const Cluster& cluster);

// ceil(world_size / gpus_per_node): the nodes `world_size` ranks occupy,
// gpus_per_node of them a node (>= 1).
uint32_t NodesOf(uint32_t world_size, uint32_t gpus_per_node);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_PLAN_SEARCH_PLAN_NODES_H_
