#ifndef CHUNKPLAN_PLANNER_OBJECTIVE_H_
#define CHUNKPLAN_PLANNER_OBJECTIVE_H_

// What a candidate chunk size is scored by. Plain C++ with no dependency, so
// that the host+device measures (candidate/layout_measures.h) take it too.

namespace chunkplan::planner {

// Values equal chunkplan.v1's.
enum class Objective : int {
  kSeedWaste = 0,      // the seed's waste at the candidate C
  kLayoutPadding = 1,  // the layout's real padding at C' (C up to the lcm)
  kPeakRankBytes = 2,  // rank 0's device bytes at C' + the gathered buffer
};

// The chunkplan.v1 name of `objective`, e.g. "OBJECTIVE_SEED_WASTE";
// "OBJECTIVE_?" for a value outside the enum.
constexpr const char* ObjectiveName(Objective objective) {
  switch (objective) {
    case Objective::kSeedWaste:
      return "OBJECTIVE_SEED_WASTE";
    case Objective::kLayoutPadding:
      return "OBJECTIVE_LAYOUT_PADDING";
    case Objective::kPeakRankBytes:
      return "OBJECTIVE_PEAK_RANK_BYTES";
  }
  return "OBJECTIVE_?";
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_OBJECTIVE_H_
