#include "server/planner/request/seed_waste.h"

#include "server/planner/candidate/next_fit.h"

namespace chunkplan::planner {

uint64_t TotalWasteAt(const SweepProblem& problem, uint64_t chunk) {
  uint64_t waste = 0;
  for (size_t g = 0; g < problem.num_groups(); ++g) {
    const auto sizes = problem.group(g);
    waste += NextFitWaste(sizes.data(), sizes.size(), chunk);
  }
  return waste;
}

}  // namespace chunkplan::planner
