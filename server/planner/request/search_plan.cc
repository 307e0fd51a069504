#include "server/planner/request/search_plan.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/planner/request/checked_math.h"
#include "server/planner/request/numpy_stats.h"
#include "server/planner/request/python_math.h"
#include "server/planner/request/request_checks.h"

namespace chunkplan::planner {
namespace {

// A degree group while the plan is built: its sizes in visit order and the
// index of its first parameter (for error messages).
struct GroupDraft {
  DegreeGroup group;
  std::vector<uint64_t> sizes;
  size_t first_index = 0;
};

// The seed's classify_params_by_dp_degree: groups in first-seen order,
// visit order inside each, with overflow-checked totals.
absl::StatusOr<std::vector<GroupDraft>> GroupByDegree(
    const SearchRequest& request, uint64_t* total) {
  std::vector<GroupDraft> drafts;
  absl::flat_hash_map<uint32_t, size_t> draft_of_degree;
  *total = 0;
  // Degrees come in runs (a layer's experts, then its attention): the map
  // is asked only where the degree changes.
  uint32_t last_degree = 0;  // no group has degree 0
  size_t last_draft = 0;
  for (size_t i = 0; i < request.numels.size(); ++i) {
    const uint32_t degree = DegreeOf(request, i);
    if (degree != last_degree) {
      const auto [slot, inserted] =
          draft_of_degree.try_emplace(degree, drafts.size());
      if (inserted) drafts.push_back(GroupDraft{{degree, 0, false}, {}, i});
      last_degree = degree;
      last_draft = slot->second;
    }
    GroupDraft* const it = &drafts[last_draft];
    const uint64_t numel = request.numels[i];
    if (!CheckedAdd(*total, numel, total) || *total > kMaxElements) {
      return absl::InvalidArgumentError(
          absl::StrCat("numels[", i, "]: the total of numels[0..", i,
                       "] exceeds 2^63-1 elements"));
    }
    it->group.total += numel;  // <= *total
    it->sizes.push_back(numel);
  }
  return drafts;
}

// np.lcm.reduce over the group degrees, checked.
absl::StatusOr<uint64_t> DegreeLcm(const std::vector<GroupDraft>& drafts) {
  uint64_t lcm = 1;
  for (const GroupDraft& d : drafts) {
    if (!CheckedLcm(lcm, d.group.dp_degree, &lcm) || lcm > kMaxElements) {
      return absl::InvalidArgumentError(
          absl::StrCat("dp_degrees[", d.first_index,
                       "]: the least common multiple of the "
                       "degrees up to ",
                       d.group.dp_degree, " exceeds 2^63-1"));
    }
  }
  return lcm;
}

// The seed's _filter_exlarge_params over the swept groups, in place.
void FilterExlarge(std::vector<GroupDraft*>& swept) {
  std::vector<uint64_t> all;
  for (const GroupDraft* d : swept) {
    all.insert(all.end(), d->sizes.begin(), d->sizes.end());
  }
  if (all.empty()) return;
  const double limit = NumpyExlargeLimit(all);
  for (GroupDraft* d : swept) {
    std::erase_if(d->sizes, [limit](uint64_t s) {
      return !WithinExlargeLimit(s, limit);
    });
  }
}

// The seed's start size and grid, with the overflow checks of the sweep;
// max_swept is the largest of sweep.sizes (0 when there are none).
absl::StatusOr<CandidateGrid> BuildGrid(const SweepProblem& sweep,
                                        uint64_t max_swept,
                                        uint64_t min_chunk_size,
                                        uint64_t search_range,
                                        uint64_t interval, uint64_t lcm) {
  const uint64_t max_size = std::max(min_chunk_size, max_swept);
  CandidateGrid grid;
  grid.interval = interval;
  grid.count = search_range / interval + 1;
  if (!CheckedMul(PythonCeilTrueDivide(max_size, interval), interval,
                  &grid.start)) {
    return absl::InvalidArgumentError(
        absl::StrCat("search_interval is ", interval,
                     ": the start size (a multiple of it "
                     ">= ",
                     max_size, ") exceeds 2^64-1"));
  }
  if (grid.start < max_swept) {
    return absl::InvalidArgumentError(
        absl::StrCat("search_interval is ", interval,
                     ": ColossalAI's float division puts "
                     "the start size at ",
                     grid.start, ", below the largest swept size ", max_swept,
                     " (quotients beyond 2^53 are out of range)"));
  }
  uint64_t last = 0;
  uint64_t last_rounded = 0;
  if (!CheckedMul(grid.count - 1, interval, &last) ||
      !CheckedAdd(grid.start, last, &last) ||
      !CheckedRoundUp(last, lcm, &last_rounded) ||
      last_rounded > kMaxElements) {
    return absl::InvalidArgumentError(absl::StrCat(
        "search_range_m: the largest candidate chunk size (start ", grid.start,
        " + range ", search_range, ", rounded up to a multiple of ", lcm,
        ") exceeds 2^63-1"));
  }
  // sum_g k_g(C) * C < 2 * S + G * C bounds every engine's arithmetic.
  uint64_t bound = 0;
  uint64_t groups_times_last = 0;
  if (!CheckedMul(sweep.num_groups(), last, &groups_times_last) ||
      !CheckedAdd(sweep.swept_total, sweep.swept_total, &bound) ||
      !CheckedAdd(bound, groups_times_last, &bound)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "search_range_m: padding sums at the largest candidate chunk size ",
        last, " could exceed 2^64-1"));
  }
  return grid;
}

// Sum, sum of squares and largest of a request's numels. 128 bits cannot
// overflow for any vector of 64-bit values; the sum of squares may wrap, and
// ExlargeLimitBand uses it only where it cannot.
struct NumelMoments {
  unsigned __int128 sum = 0;
  unsigned __int128 sum_of_squares = 0;
  uint64_t largest = 0;
};

NumelMoments MomentsOf(const std::vector<uint64_t>& numels) {
  NumelMoments m;
  for (uint64_t numel : numels) {
    m.sum += numel;
    m.sum_of_squares += static_cast<unsigned __int128>(numel) * numel;
    m.largest = std::max(m.largest, numel);
  }
  return m;
}

// Writes into `sweep` the sizes of `numels` that `keep` keeps, in order,
// and their total; returns the largest kept (0 when none is). Written
// through a pointer, a slot per size, the count advanced by the decision.
template <typename Keep>
uint64_t KeepSizes(const std::vector<uint64_t>& numels, Keep keep,
                   SweepProblem* sweep) {
  sweep->sizes.resize(numels.size());
  uint64_t* out = sweep->sizes.data();
  size_t kept = 0;
  uint64_t swept_total = 0;
  uint64_t max_swept = 0;
  for (uint64_t s : numels) {
    const bool k = keep(s);
    out[kept] = s;
    kept += k;
    swept_total += k ? s : 0;  // <= the numels' total
    max_swept = k && s > max_swept ? s : max_swept;
  }
  sweep->sizes.resize(kept);
  sweep->swept_total = swept_total;
  return max_swept;
}

// The seed's _filter_exlarge_params over one group's `numels` (the filter
// on, or off when `filter` is false) into `sweep`; returns the largest
// swept size. The band of ExlargeLimitBand decides every size in one pass;
// a size inside it (rare) sends the whole filter to numpy's own arithmetic.
uint64_t FilterOneGroup(const std::vector<uint64_t>& numels, bool filter,
                        const NumelMoments& m, uint64_t total,
                        SweepProblem* sweep) {
  const ExlargeBand band =
      filter
          ? ExlargeLimitBand(numels.size(), m.sum, m.sum_of_squares, m.largest)
          : ExlargeBand{true, std::numeric_limits<double>::infinity(),
                        std::numeric_limits<double>::infinity()};
  if (band.known && static_cast<double>(m.largest) <= band.below) {
    // The filter keeps every size (or is off): no pass to decide.
    sweep->sizes = numels;
    sweep->swept_total = total;
    return m.largest;
  }
  bool in_band = !band.known;
  uint64_t max_swept = 0;
  if (!in_band) {
    max_swept = KeepSizes(
        numels,
        [&band, &in_band](uint64_t s) {
          const double v = static_cast<double>(s);
          in_band |= v > band.below && v <= band.above;
          return v <= band.below;
        },
        sweep);
  }
  if (in_band) {
    const double limit = NumpyExlargeLimit(numels);
    max_swept = KeepSizes(
        numels, [limit](uint64_t s) { return WithinExlargeLimit(s, limit); },
        sweep);
  }
  return max_swept;
}

// The plan of a request with one degree for every parameter (dp_degrees
// of 0 or 1 entries), written straight into `plan` without the per-group
// drafts: the computation of the general path below for its one group.
// False, with `plan` unspecified, where any check of the general path
// could fail; that path then runs and gives the error.
bool BuildOneDegreePlan(const SearchRequest& request, SearchPlan* plan) {
  const std::vector<uint64_t>& numels = request.numels;
  const uint32_t degree =
      request.dp_degrees.empty() ? 1 : request.dp_degrees[0];
  if (numels.empty() || degree == 0 || request.search_interval == 0) {
    return false;
  }
  const absl::StatusOr<uint64_t> search_range =
      RoundedMebiElements(request.search_range_m, "search_range_m");
  const absl::StatusOr<uint64_t> min_chunk_size =
      RoundedMebiElements(request.min_chunk_size_m, "min_chunk_size_m");
  if (!search_range.ok() || !min_chunk_size.ok()) return false;
  const NumelMoments moments = MomentsOf(numels);
  // Every numel <= total, so each is within range too.
  if (moments.sum > kMaxElements) return false;
  const uint64_t total = static_cast<uint64_t>(moments.sum);
  plan->total_param_size = total;
  plan->degree_lcm = degree;
  const bool gathered = total < *min_chunk_size;
  plan->groups.assign(1, DegreeGroup{degree, total, gathered});
  SweepProblem& sweep = plan->sweep;
  uint64_t max_swept = 0;
  if (!gathered) {
    max_swept = FilterOneGroup(numels, request.filter_exlarge_params, moments,
                               total, &sweep);
    sweep.group_begin = {0, sweep.sizes.size()};
  }
  absl::StatusOr<CandidateGrid> grid =
      BuildGrid(sweep, max_swept, *min_chunk_size, *search_range,
                request.search_interval, plan->degree_lcm);
  if (!grid.ok()) return false;
  sweep.grid = *grid;
  return true;
}

}  // namespace

uint64_t SweepProblem::SweepWork() const {
  uint64_t work = 0;
  const uint64_t per_candidate = std::max<uint64_t>(1, sizes.size());
  if (!CheckedMul(grid.count, per_candidate, &work)) return UINT64_MAX;
  return work;
}

uint64_t SweepWorkBound(const SearchRequest& request) {
  const absl::StatusOr<uint64_t> range =
      RoundedMebiElements(request.search_range_m, "search_range_m");
  if (!range.ok() || request.search_interval == 0) return UINT64_MAX;
  const uint64_t candidates = *range / request.search_interval + 1;
  uint64_t work = 0;
  if (!CheckedMul(candidates, std::max<uint64_t>(1, request.numels.size()),
                  &work)) {
    return UINT64_MAX;
  }
  return work;
}

std::vector<ChunkConfig> SearchPlan::Configs(uint64_t chunk_size) const {
  std::vector<ChunkConfig> configs;
  configs.reserve(groups.size());
  for (const DegreeGroup& g : groups) {
    if (g.keep_gathered) configs.push_back({g.dp_degree, g.total, true});
  }
  for (const DegreeGroup& g : groups) {
    if (!g.keep_gathered) configs.push_back({g.dp_degree, chunk_size, false});
  }
  return configs;
}

absl::StatusOr<SearchPlan> BuildSearchPlan(const SearchRequest& request) {
  if (request.dp_degrees.size() <= 1) {
    SearchPlan plan;
    if (BuildOneDegreePlan(request, &plan)) return plan;
  }
  CHUNKPLAN_RETURN_IF_ERROR(CheckShape(request));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const uint64_t search_range,
      RoundedMebiElements(request.search_range_m, "search_range_m"));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const uint64_t min_chunk_size,
      RoundedMebiElements(request.min_chunk_size_m, "min_chunk_size_m"));

  SearchPlan plan;
  CHUNKPLAN_ASSIGN_OR_RETURN(std::vector<GroupDraft> drafts,
                             GroupByDegree(request, &plan.total_param_size));
  CHUNKPLAN_ASSIGN_OR_RETURN(plan.degree_lcm, DegreeLcm(drafts));

  std::vector<GroupDraft*> swept;
  for (GroupDraft& d : drafts) {
    d.group.keep_gathered = d.group.total < min_chunk_size;
    if (!d.group.keep_gathered) swept.push_back(&d);
    plan.groups.push_back(d.group);
  }
  if (request.filter_exlarge_params) FilterExlarge(swept);

  SweepProblem& sweep = plan.sweep;
  for (const GroupDraft* d : swept) {
    sweep.sizes.insert(sweep.sizes.end(), d->sizes.begin(), d->sizes.end());
    sweep.group_begin.push_back(sweep.sizes.size());
    for (uint64_t s : d->sizes) sweep.swept_total += s;  // <= total
  }
  const uint64_t max_swept =
      sweep.sizes.empty()
          ? 0
          : *std::max_element(sweep.sizes.begin(), sweep.sizes.end());
  CHUNKPLAN_ASSIGN_OR_RETURN(
      sweep.grid, BuildGrid(sweep, max_swept, min_chunk_size, search_range,
                            request.search_interval, plan.degree_lcm));
  return plan;
}

}  // namespace chunkplan::planner
