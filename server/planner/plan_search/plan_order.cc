#include "server/planner/plan_search/plan_order.h"

#include <algorithm>
#include <cstdint>
#include <tuple>

namespace chunkplan::planner {
namespace {

// 0 fits, 1 tight, 2 does not fit.
int ClassOf(const Verdict& v) {
  if (v.fits) return 0;
  return v.tight ? 1 : 2;
}

}  // namespace

void OrderOptions(std::vector<PlanOption>* options) {
  const auto key = [](const PlanOption& o) {
    const Verdict& v = o.verdict;
    const int c = ClassOf(v);
    // Within the device (fits, tight) the excesses are 0 and the need
    // orders; beyond it the excesses order and the need is left out.
    const bool within = c < 2;
    const uint64_t none = 0;
    return std::tuple(c, within ? none : v.device_excess_bytes,
                      within ? none : v.host_excess_bytes, o.world_size,
                      static_cast<int>(o.placement),
                      within ? v.device_need_bytes : uint64_t{0},
                      static_cast<int>(o.chunk_size_from));
  };
  std::stable_sort(options->begin(), options->end(),
                   [&key](const PlanOption& a, const PlanOption& b) {
                     return key(a) < key(b);
                   });
}

}  // namespace chunkplan::planner
