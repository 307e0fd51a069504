#include "server/planner/layout/objective_problem.h"

#include <algorithm>

#include "server/planner/candidate/round_up.h"
#include "server/planner/layout/byte_model_of.h"
#include "server/planner/layout/chunk_placement.h"
#include "server/planner/layout/placement.h"
#include "server/planner/request/checked_math.h"
#include "server/planner/request/request_checks.h"

namespace chunkplan::planner {

uint64_t ObjectiveProblem::Rounded(uint64_t chunk) const {
  return RoundUp(chunk, degree_lcm);
}

LayoutArrays ObjectiveProblem::arrays() const {
  return {tensors.data(), begin.data(), degrees.data(), groups(), fixed, bytes};
}

LayoutValues ObjectiveProblem::At(uint64_t chunk) const {
  const uint64_t rounded = Rounded(chunk);
  LayoutValues v;
  MeasureLayout<uint64_t>(arrays(), &rounded, &v);
  return v;
}

absl::StatusOr<LayoutValues> ObjectiveProblem::Exact(uint64_t chunk) const {
  if (placed == nullptr) return At(chunk);
  using Wide = unsigned __int128;
  const uint64_t rounded = Rounded(chunk);
  std::vector<ChunkConfig> at = configs;
  for (ChunkConfig& c : at) {
    if (!c.keep_gathered) c.chunk_size = rounded;
  }
  LayoutValues v;
  const absl::StatusOr<std::vector<GroupLayout>> groups =
      PlaceChunks(placed->search, at, placed->frozen);
  if (!groups.ok()) {
    // PlaceChunks refuses only a group's padding beyond 2^64-1 elements.
    if (groups.status().code() != absl::StatusCode::kInvalidArgument) {
      return groups.status();
    }
    v.overflow = true;
    return v;
  }
  Wide padding = 0;
  uint64_t largest = 0;
  for (const GroupLayout& g : *groups) {
    padding += g.padding;
    if (g.config.keep_gathered) continue;
    for (const ChunkLayout& c : g.chunks) largest = std::max(largest, c.size);
  }
  absl::StatusOr<Wide> device =
      MostLoadedDeviceBytes(*groups, fixed.frozen_elements, placed->gemini);
  if (!device.ok()) return device.status();
  const Wide peak = *device + Wide{bytes.gathered} * largest;
  v.overflow = padding > UINT64_MAX || peak > UINT64_MAX;
  v.layout_padding = static_cast<uint64_t>(padding);
  v.peak_rank_bytes = static_cast<uint64_t>(peak);
  return v;
}

uint64_t ObjectiveProblem::LayoutWork(const CandidateGrid& grid) const {
  uint64_t work = 0;
  return CheckedMul(grid.count, std::max<uint64_t>(1, tensors.size()), &work)
             ? work
             : UINT64_MAX;
}

ObjectiveProblem BuildObjectiveProblem(const LayoutRequest& request,
                                       const SearchPlan& plan) {
  const SearchRequest& search = request.search;
  const auto placed = [&](size_t i) {
    return request.frozen.empty() || !request.frozen[i];
  };
  ObjectiveProblem p;
  p.degree_lcm = plan.degree_lcm;
  std::vector<PlacedTensor> group;
  for (const DegreeGroup& g : plan.groups) {
    group.clear();
    for (size_t i = 0; i < search.numels.size(); ++i) {
      if (DegreeOf(search, i) == g.dp_degree && placed(i)) {
        group.push_back(Placed(search.numels[i], g.dp_degree));
      }
    }
    if (g.keep_gathered) {
      // Kept whole in one chunk of the group's total, which holds every
      // placed tensor (the first opens it, the rest fit), held whole by
      // every rank.
      if (group.empty()) continue;
      uint64_t used = 0;
      for (const PlacedTensor& t : group) used += t.numel;
      p.fixed.gathered_elements += g.total;
      p.fixed.gathered_used += used;
      p.fixed.gathered_padding += g.total - used;
      continue;
    }
    p.tensors.insert(p.tensors.end(), group.begin(), group.end());
    p.begin.push_back(p.tensors.size());
    p.degrees.push_back(g.dp_degree);
  }
  // The search's config order: kept-gathered groups first. Only the
  // non-gathered ones are here, already in first-seen order.
  p.fixed.frozen_elements = FrozenElements(search, request.frozen);
  p.bytes = ByteModelOf(request.gemini);
  if (MovesBySize(request.gemini)) {
    p.placed = &request;
    p.configs = plan.Configs(0);
  }
  return p;
}

}  // namespace chunkplan::planner
