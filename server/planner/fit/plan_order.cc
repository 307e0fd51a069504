#include "server/planner/fit/plan_order.h"

#include <algorithm>
#include <tuple>

namespace chunkplan::planner {
namespace {

using Wide = unsigned __int128;

uint64_t Over(uint64_t need, uint64_t have) {
  return need > have ? need - have : 0;
}

// Device excess plus host excess (a host budget of 0 is not checked).
Wide TotalExcess(const Cluster& cluster, const PlanOption& o) {
  const Wide host =
      cluster.host_memory_bytes == 0
          ? 0
          : Over(o.host_bytes_per_node, cluster.host_memory_bytes);
  return Wide{Over(o.device_need_bytes, cluster.device_memory_bytes)} + host;
}

}  // namespace

void OrderOptions(const Cluster& cluster, std::vector<PlanOption>* options) {
  const auto key = [&cluster](const PlanOption& o) {
    // Fitting options ignore the excess (0), failing ones the need.
    return std::tuple(!o.fits, o.fits ? Wide{0} : TotalExcess(cluster, o),
                      o.world_size, static_cast<int>(o.placement),
                      o.fits ? o.device_need_bytes : 0,
                      static_cast<int>(o.chunk_size_from));
  };
  std::stable_sort(options->begin(), options->end(),
                   [&key](const PlanOption& a, const PlanOption& b) {
                     return key(a) < key(b);
                   });
}

}  // namespace chunkplan::planner
