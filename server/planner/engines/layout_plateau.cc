#include "server/planner/engines/layout_plateau.h"

#include <algorithm>
#include <bit>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/planner/candidate/layout_measures.h"
#include "server/planner/candidate/round_up.h"
#include "server/planner/engines/cpu_sweep_frontier.h"
#include "server/planner/engines/frontier_merge.h"
#include "server/planner/request/checked_math.h"

namespace chunkplan::planner {
namespace {

using u128 = unsigned __int128;
constexpr uint64_t kNever = UINT64_MAX;
// Steps between two asks of the stop check: about a millisecond.
constexpr uint64_t kStepsPerStopCheck = uint64_t{1} << 20;

// One group's layout at a C', as far as a plateau keeps it (proofs:
// docs/layout-plateau.md).
struct GroupState {
  uint64_t normal_chunks = 0;  // chunks of size C'
  uint64_t normal_used = 0;    // their real elements
  uint64_t over_shards = 0;    // oversize chunks: sum of their shards
  uint64_t over_real = 0;      // ... of rank 0's real elements in them
};

// The layout's state at a C': constant on a plateau.
struct LayoutState {
  uint64_t normal_chunks = 0;  // over all groups
  uint64_t over_size = 0;      // sum of the oversize chunks' sizes
  uint64_t largest_over = 0;   // the largest oversize chunk (0: none)
  // The least C'' > C' where the placement can differ: a closed chunk-size
  // chunk would take the tensor that opened the next, or an oversize
  // tensor stops being oversize.
  uint64_t next_change = kNever;
  uint64_t next_breakpoint = kNever;  // the least oversize numel
  absl::InlinedVector<GroupState, 4> groups;
};

// Lays out a problem's groups at one C' and keeps what LayoutState needs.
class LayoutCounter {
 public:
  explicit LayoutCounter(const ObjectiveProblem& p) : p_(p) {}

  LayoutState At(uint64_t chunk) const {
    LayoutState s;
    s.groups.resize(p_.groups());
    for (uint64_t g = 0; g < p_.groups(); ++g) {
      const uint64_t first = p_.begin[g];
      const uint64_t end = p_.begin[g + 1];
      if (first != end) Group(first, end, p_.degrees[g], chunk, &s, g);
    }
    return s;
  }

 private:
  // Next-fit over tensors [first, end) of a group of `degree` at `chunk`,
  // as LaneWalk places them.
  void Group(uint64_t first, uint64_t end, uint32_t degree, uint64_t chunk,
             LayoutState* s, uint64_t g) const {
    GroupState& gs = s->groups[g];
    const PlacedTensor* t = p_.tensors.data();
    bool over = false;
    uint64_t size = 0, shard = 0, used = 0;
    const auto open = [&](const PlacedTensor& x) {
      over = x.numel > chunk;
      size = over ? x.oversize : chunk;
      shard = over ? x.oversize_shard : chunk / degree;
      used = x.numel;
      if (over) s->next_breakpoint = std::min(s->next_breakpoint, x.numel);
    };
    const auto close = [&](const PlacedTensor* next) {
      if (over) {
        s->over_size += size;
        s->largest_over = std::max(s->largest_over, size);
        gs.over_shards += shard;
        gs.over_real += std::min(used, shard);
        return;
      }
      ++gs.normal_chunks;
      ++s->normal_chunks;
      gs.normal_used += used;
      if (next != nullptr) {
        s->next_change = std::min(s->next_change, used + next->numel);
      }
    };
    open(t[first]);
    for (uint64_t i = first + 1; i < end; ++i) {
      if (t[i].numel <= size - used) {
        used += t[i].numel;
        continue;
      }
      close(&t[i]);
      open(t[i]);
    }
    close(nullptr);
    s->next_change = std::min(s->next_change, s->next_breakpoint);
  }

  const ObjectiveProblem& p_;
};

// The problem's constants the bounds use.
struct Constants {
  uint64_t placed_elements = 0;  // every non-gathered placed numel
};

Constants ConstantsOf(const ObjectiveProblem& p) {
  Constants c;
  for (const PlacedTensor& t : p.tensors) c.placed_elements += t.numel;
  return c;
}

// A lower bound of `objective` at every C' in [low, high] of a plateau whose
// state is `s` (exact at low for the padding): lower bounds of the
// non-gathered sums, valued by LayoutSums::Values (the byte model's one
// formula, non-decreasing in each sum). docs/layout-plateau.md. Requires
// MeasuresFit.
uint64_t LowerBound(Objective objective, const ObjectiveProblem& p,
                    const Constants& c, const LayoutState& s, uint64_t low,
                    uint64_t high) {
  LayoutSums sums;
  if (objective == Objective::kLayoutPadding) {
    sums.padding = s.normal_chunks * low + s.over_size - c.placed_elements;
    return ObjectiveValue(objective, 0, sums.Values(p.fixed, p.bytes));
  }
  for (uint64_t g = 0; g < p.groups(); ++g) {
    const GroupState& gs = s.groups[g];
    const uint32_t d = p.degrees[g];
    sums.held += gs.normal_chunks * (low / d) + gs.over_shards;
    // Rank 0's real elements in the chunk-size chunks: each chunk's
    // min(used, C'/d) is at least used/d and at least C'/d - (C' - used),
    // which falls as C' grows (taken at high).
    uint64_t normal_real = CeilDiv(gs.normal_used, d);
    const u128 shards = u128{gs.normal_chunks} * (high / d) + gs.normal_used;
    const u128 sizes = u128{gs.normal_chunks} * high;
    if (shards > sizes && shards - sizes > normal_real) {
      normal_real = static_cast<uint64_t>(shards - sizes);
    }
    sums.optimized += normal_real + gs.over_real;
  }
  sums.largest = std::max(s.normal_chunks > 0 ? low : 0, s.largest_over);
  return ObjectiveValue(objective, 0, sums.Values(p.fixed, p.bytes));
}

// Whether no candidate's measures can pass 2^64-1 (nor reach it, so that
// every value improves on the walk's starting `best`): at every C' each
// group opens at most one chunk per tensor, none above max(last C', the
// largest oversize), and a shard is at most its chunk; Values is
// non-decreasing in each sum.
bool MeasuresFit(const ObjectiveProblem& p, uint64_t last_rounded) {
  LayoutSums most;
  most.largest = last_rounded;
  for (const PlacedTensor& t : p.tensors) {
    most.largest = std::max(most.largest, t.oversize);
    most.optimized += t.numel;  // placed elements: below 2^63
  }
  const u128 sizes = u128{p.tensors.size()} * most.largest;
  if (sizes >= UINT64_MAX) return false;
  most.padding = most.held = static_cast<uint64_t>(sizes);
  const LayoutValues v = most.Values(p.fixed, p.bytes);
  return !v.overflow && v.layout_padding < UINT64_MAX &&
         v.peak_rank_bytes < UINT64_MAX;
}

// Layouts along the grid: the stop check between them, the steps counted
// against the limit.
class Walker {
 public:
  Walker(const SweepTask& task, uint64_t max_work, const StopCheck& stop)
      : task_(task),
        p_(*task.layout),
        grid_(task.sweep->grid),
        counter_(p_),
        constants_(ConstantsOf(p_)),
        per_layout_(p_.tensors.size() + 1),
        max_work_(max_work),
        stop_(stop),
        last_rounded_(p_.Rounded(grid_.At(grid_.count - 1))) {}

  const CandidateGrid& grid() const { return grid_; }
  Objective objective() const { return task_.objective; }
  LayoutWalkTally& tally() { return tally_; }
  uint64_t Rounded(uint64_t index) const { return p_.Rounded(grid_.At(index)); }

  // The state at candidate `index`.
  absl::Status StateAt(uint64_t index, LayoutState* out) {
    CHUNKPLAN_RETURN_IF_ERROR(Step());
    ++tally_.search_evaluations;
    *out = counter_.At(Rounded(index));
    return absl::OkStatus();
  }

  // The objective's value at candidate `index`, as CPU_SWEEP measures it.
  absl::StatusOr<uint64_t> ValueAt(uint64_t index) {
    CHUNKPLAN_RETURN_IF_ERROR(Step());
    ++tally_.value_evaluations;
    const LayoutValues v = p_.At(grid_.At(index));
    return ObjectiveValue(task_.objective, 0, v);
  }

  // The first index whose C' is >= `rounded`, or grid.count.
  uint64_t FirstIndexReaching(uint64_t rounded) const {
    if (rounded > last_rounded_) return grid_.count;
    const uint64_t r = RoundUp(rounded, p_.degree_lcm);
    return grid_.FirstIndexAtLeast(r - p_.degree_lcm + 1);
  }

  // The first index after `index` (in state `s`) whose placement may differ.
  uint64_t NextCandidate(uint64_t index, const LayoutState& s) const {
    return std::max(index + 1, FirstIndexReaching(s.next_change));
  }

  // The objective's lower bound on candidates [from, to) of one plateau in
  // state `s`.
  uint64_t Bound(const LayoutState& s, uint64_t from, uint64_t to) const {
    return LowerBound(task_.objective, p_, constants_, s, Rounded(from),
                      Rounded(to - 1));
  }

 private:
  // Counts one layout's steps; asks the stop check now and then.
  absl::Status Step() {
    tally_.steps += per_layout_;
    if (tally_.steps > max_work_) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "CPU_PLATEAU: the layout walk over ", grid_.count,
          " candidates passed this engine's limit of ", max_work_,
          " steps (--max_plateau_work); a coarser search_interval or a "
          "narrower search_range_m shortens it"));
    }
    if (stop_ && tally_.steps >= next_check_) {
      CHUNKPLAN_RETURN_IF_ERROR(stop_());
      next_check_ = tally_.steps + kStepsPerStopCheck;
    }
    return absl::OkStatus();
  }

  const SweepTask& task_;
  const ObjectiveProblem& p_;
  CandidateGrid grid_;
  LayoutCounter counter_;
  Constants constants_;
  uint64_t per_layout_;
  uint64_t max_work_;
  const StopCheck& stop_;
  uint64_t last_rounded_;
  uint64_t next_check_ = 0;
  LayoutWalkTally tally_;
};

// The end of the plateau that starts at `start` in state `s`: the first
// index after it whose state differs (grid.count at the end). Its chunk-size
// chunks only fall until the oversize set changes (at `stretch_end`), so a
// gallop then a bisection finds where they first fall. *end_state is the
// state there when it was laid out (*has_end_state).
absl::StatusOr<uint64_t> PlateauEnd(Walker& w, uint64_t start,
                                    const LayoutState& s,
                                    LayoutState* end_state,
                                    bool* has_end_state) {
  uint64_t hi = w.FirstIndexReaching(s.next_breakpoint);
  *has_end_state = false;
  if (s.normal_chunks == 0) return hi;
  uint64_t lo = w.NextCandidate(start, s);
  LayoutState e;
  for (uint64_t step = 1; lo < hi; step *= 2) {
    const uint64_t probe = std::min(hi - 1, lo + step - 1);
    CHUNKPLAN_RETURN_IF_ERROR(w.StateAt(probe, &e));
    if (e.normal_chunks < s.normal_chunks) {
      hi = probe;
      *end_state = e;
      *has_end_state = true;
      break;
    }
    lo = w.NextCandidate(probe, e);
  }
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    CHUNKPLAN_RETURN_IF_ERROR(w.StateAt(mid, &e));
    if (e.normal_chunks < s.normal_chunks) {
      hi = mid;
      *end_state = e;
      *has_end_state = true;
    } else {
      lo = w.NextCandidate(mid, e);
    }
  }
  return hi;
}

// Candidates [start, end) of one plateau, the first in state `s`, offered
// in order where the bound cannot rule them out. False once `merge` is full.
absl::StatusOr<bool> WalkPlateau(Walker& w, uint64_t start, uint64_t end,
                                 LayoutState s, FrontierMerge& merge,
                                 uint64_t* best) {
  for (uint64_t at = start;;) {
    if (w.Bound(s, at, end) >= *best) return true;
    CHUNKPLAN_ASSIGN_OR_RETURN(const uint64_t value, w.ValueAt(at));
    if (value < *best) {
      *best = value;
      if (!merge.Offer(at, w.grid().At(at), value)) return false;
    }
    // The padding's bound is its value, and rises along the plateau.
    if (w.objective() == Objective::kLayoutPadding) return true;
    at = w.NextCandidate(at, s);
    if (at >= end) return true;
    CHUNKPLAN_RETURN_IF_ERROR(w.StateAt(at, &s));
  }
}

absl::StatusOr<SweepOutcome> Walk(Walker& w, const SweepTask& task) {
  FrontierMerge merge(task.keep());
  uint64_t best = kNever;
  LayoutState s;
  CHUNKPLAN_RETURN_IF_ERROR(w.StateAt(0, &s));
  for (uint64_t start = 0; start < w.grid().count && best > 0;) {
    LayoutState next;
    bool has_next = false;
    CHUNKPLAN_ASSIGN_OR_RETURN(const uint64_t end,
                               PlateauEnd(w, start, s, &next, &has_next));
    CHUNKPLAN_ASSIGN_OR_RETURN(const bool more,
                               WalkPlateau(w, start, end, s, merge, &best));
    if (!more || end >= w.grid().count) break;
    start = end;
    if (has_next) {
      s = std::move(next);
    } else {
      CHUNKPLAN_RETURN_IF_ERROR(w.StateAt(start, &s));
    }
  }
  return merge.Take();
}

// Candidates x (placed tensors + 1), saturated.
uint64_t SweepSteps(const SweepTask& task) {
  uint64_t steps = 0;
  return CheckedMul(task.sweep->grid.count, task.layout->tensors.size() + 1,
                    &steps)
             ? steps
             : UINT64_MAX;
}

}  // namespace

LayoutPlateauWork BoundLayoutPlateauWork(const SweepTask& task) {
  const ObjectiveProblem& p = *task.layout;
  const CandidateGrid& grid = task.sweep->grid;
  const uint64_t first = p.Rounded(grid.At(0));
  const uint64_t last = p.Rounded(grid.At(grid.count - 1));
  const LayoutCounter counter(p);
  const LayoutState at_first = counter.At(first);
  LayoutPlateauWork work;
  if (at_first.next_breakpoint > last) {
    // One stretch: the chunk-size chunks only fall, each plateau below the
    // last (docs/layout-plateau.md).
    work.plateaus = at_first.normal_chunks - counter.At(last).normal_chunks + 1;
  } else {
    // Each stretch between two oversize numels: at most one plateau per
    // count of chunk-size chunks, 0 to the tensors.
    absl::InlinedVector<uint64_t, 16> inside;
    for (const PlacedTensor& t : p.tensors) {
      if (t.numel > first && t.numel <= last) inside.push_back(t.numel);
    }
    std::sort(inside.begin(), inside.end());
    const uint64_t stretches =
        std::unique(inside.begin(), inside.end()) - inside.begin() + 1;
    work.plateaus = stretches * (p.tensors.size() + 1);
  }
  work.plateaus = std::min(work.plateaus, grid.count);
  // Per plateau: its first layout, a gallop of at most B + 1 probes and a
  // bisection of at most B + 1, B = bit_width(count).
  const uint64_t b = std::bit_width(grid.count);
  if (!CheckedMul(work.plateaus, 2 * b + 3, &work.evaluations) ||
      !CheckedMul(work.evaluations, p.tensors.size() + 1, &work.steps)) {
    work.steps = UINT64_MAX;
  }
  return work;
}

uint64_t LayoutLowerBound(const SweepTask& task, uint64_t from, uint64_t to) {
  const ObjectiveProblem& p = *task.layout;
  const CandidateGrid& grid = task.sweep->grid;
  const LayoutState s = LayoutCounter(p).At(p.Rounded(grid.At(from)));
  return LowerBound(task.objective, p, ConstantsOf(p), s,
                    p.Rounded(grid.At(from)), p.Rounded(grid.At(to - 1)));
}

absl::StatusOr<SweepOutcome> WalkLayoutPlateaus(const SweepTask& task,
                                                uint64_t max_work,
                                                const StopCheck& stop,
                                                LayoutWalkTally* tally) {
  const CandidateGrid& grid = task.sweep->grid;
  const uint64_t last = task.layout->Rounded(grid.At(grid.count - 1));
  if (!MeasuresFit(*task.layout, last)) {
    // Some candidate may pass 2^64-1: value them all, in order, so that the
    // lowest is named.
    if (tally != nullptr) *tally = {0, grid.count, SweepSteps(task), true};
    if (SweepSteps(task) > max_work) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "CPU_PLATEAU: measures this large are valued at every candidate: ",
          grid.count, " candidates x ", task.layout->tensors.size() + 1,
          " steps, above this engine's limit of ", max_work,
          " (--max_plateau_work)"));
    }
    return SweepFrontier(task, stop, nullptr);
  }
  Walker walker(task, max_work, stop);
  absl::StatusOr<SweepOutcome> out = Walk(walker, task);
  if (tally != nullptr) *tally = walker.tally();
  return out;
}

}  // namespace chunkplan::planner
