#include "server/planner/engines/cpu_plateau_engine.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/planner/candidate/round_up.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/engines/layout_plateau.h"
#include "server/planner/engines/plateau_work.h"
#include "server/planner/engines/repeated_blocks.h"

namespace chunkplan::planner {
namespace {

constexpr uint64_t kNever = UINT64_MAX;
// Chunks counted (each one a galloping search, tens of nanoseconds) between
// two stop checks: about a millisecond, however large one evaluation is.
constexpr uint64_t kChunksPerStopCheck = uint64_t{1} << 15;

// Next-fit chunk counts at one chunk size.
struct Evaluation {
  uint64_t chunks = 0;       // K(C), summed over groups
  uint64_t next_change = 0;  // least C' > C where the partition can change
};

// The prefix sums of every group, back to back, one leading 0 per group.
class ChunkCounter {
 public:
  explicit ChunkCounter(const SweepProblem& problem) {
    // One allocation per vector (a search's fixed cost is a few of them).
    prefix_.reserve(problem.sizes.size() + problem.num_groups());
    groups_.reserve(problem.num_groups());
    for (size_t g = 0; g < problem.num_groups(); ++g) {
      const std::span<const uint64_t> sizes = problem.group(g);
      Group& group = groups_.emplace_back();
      group.prefix = prefix_.size();
      group.n = sizes.size();
      group.runs = runs_.size();
      uint64_t sum = 0;
      prefix_.push_back(0);
      for (uint64_t s : sizes) prefix_.push_back(sum += s);
      placing_groups_ += sum != 0;
      AddLongRuns(sizes);
      group.runs_end = runs_.size();
      // Galloping costs a few mispredicted branches per chunk, the walk a
      // few instructions per size (bench/: LLaMA-2 70B's 723 sizes in 322
      // chunks walk 3x faster than they gallop; BERT's 56 sizes a chunk
      // gallop far faster). The walk is taken while n * C <= 16 * (S + C)
      // ((S + C) / C is about the group's chunks), that is while C * (n -
      // 16) <= 16 * S: for every C when n <= 16.
      const uint64_t n = sizes.size();
      if (n <= kWalkSizesPerChunk) {
        group.walk_up_to = UINT64_MAX;
      } else {
        const unsigned __int128 bound =
            static_cast<unsigned __int128>(kWalkSizesPerChunk) * sum /
            (n - kWalkSizesPerChunk);
        group.walk_up_to =
            bound > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(bound);
      }
      // Only the walk uses the blocks: a group galloped at every candidate
      // (all of them above walk_up_to) is not looked at.
      if (group.walk_up_to >= problem.grid.start) {
        group.blocks = FindRepeatedBlocks(sizes);
      }
    }
  }

  // The groups with something to place: each opens a chunk at any size.
  uint64_t placing_groups() const { return placing_groups_; }

  Evaluation Evaluate(uint64_t chunk) const {
    Evaluation e{0, kNever};
    for (const Group& g : groups_) {
      const uint64_t* p = &prefix_[g.prefix];
      // (A chunk of 0 has only sizes of 0 to place: the walk skips them.)
      if (chunk <= g.walk_up_to) {
        WalkGroup(p, g.n, runs_.data() + g.runs, runs_.data() + g.runs_end,
                  g.blocks, chunk, &e);
      } else {
        CountGroup(p, g.n, chunk, &e);
      }
    }
    return e;
  }

 private:
  // The walk is chosen below this many sizes per estimated chunk.
  static constexpr uint64_t kWalkSizesPerChunk = 16;

  // Sizes of a run at least this long, all equal, are placed by FillRun.
  static constexpr size_t kLongRun = 16;

  // Sizes [begin, end) of a group, all equal to `size` (> 0).
  struct Run {
    size_t begin;
    size_t end;
    uint64_t size;
  };

  // Appends the group's maximal runs of kLongRun or more equal non-zero
  // sizes, in order. A run that long starting at i has sizes[i] ==
  // sizes[i + kLongRun - 1], rarely true elsewhere (a well-predicted test
  // per size); where it holds, the window is checked from its end down, and
  // a change between k and k + 1 inside it rules out every start up to k.
  void AddLongRuns(std::span<const uint64_t> sizes) {
    const size_t n = sizes.size();
    for (size_t i = 0; i + kLongRun <= n;) {
      if (sizes[i] != sizes[i + kLongRun - 1]) {
        ++i;
        continue;
      }
      size_t k = i + kLongRun - 1;
      while (k > i && sizes[k - 1] == sizes[i]) --k;
      if (k > i) {  // sizes[k - 1] != sizes[k]: no run starts before k
        i = k;
        continue;
      }
      size_t end = i + kLongRun;
      while (end < n && sizes[end] == sizes[i]) ++end;
      if (sizes[i] != 0) runs_.push_back({i, end, sizes[i]});
      i = end;
    }
  }

  // Next-fit over one group with prefix sums p[0..n], size by size, and
  // run by run over its long runs [run, run_end): the same chunks and the
  // same least change as CountGroup. A chunk with `left` room closes when a
  // size s > left arrives; its contents plus s, (chunk - left) + s, is a
  // chunk size at which it would have taken s. The branches follow the
  // model's layer pattern, which repeats, so they are predicted.
  //
  // At the start of each of the group's repeated blocks the walk notes the
  // room left and the chunks so far. Once the room equals the room c blocks
  // back (c <= kCycleBlocks), next-fit is in a cycle: each later c blocks
  // open the same chunks with the same changes, so whole cycles up to the
  // last block are counted by multiplication (their changes are already in
  // `least`) and the walk goes on after them.
  static void WalkGroup(const uint64_t* p, size_t n, const Run* run,
                        const Run* run_end, const RepeatedBlocks& blocks,
                        uint64_t chunk, Evaluation* e) {
    size_t i = 0;
    while (i < n && p[i + 1] == p[i]) ++i;  // zeros open no chunk
    if (i == n) return;
    uint64_t chunks = 1;
    uint64_t left = chunk - (p[i + 1] - p[i]);
    uint64_t least = e->next_change;
    CycleFinder cycle(blocks, ++i);
    for (;;) {
      while (run != run_end && run->end <= i) ++run;
      const size_t run_at = run == run_end ? n : std::max(i, run->begin);
      const size_t stop = std::min(run_at, cycle.boundary());
      for (; i < stop; ++i) {
        const uint64_t s = p[i + 1] - p[i];
        if (s > left) {
          least = std::min(least, (chunk - left) + s);
          ++chunks;
          left = chunk - s;
        } else {
          left -= s;
        }
      }
      if (i == cycle.boundary()) {
        cycle.AtBoundary(left, &i, &chunks);
        continue;
      }
      if (run == run_end) break;
      FillRun(run->size, run->end - i, chunk, &left, &chunks, &least);
      i = run->end;
      cycle.Resume(i);
    }
    e->chunks += chunks;
    e->next_change = least;
  }

  // The walk's view of one group's repeated blocks: where the next block
  // starts (kNoBoundary once there is none to note) and the room and chunks
  // at the last kCycleBlocks block starts.
  class CycleFinder {
   public:
    static constexpr size_t kNoBoundary = SIZE_MAX;

    // For a walk at size index i.
    CycleFinder(const RepeatedBlocks& blocks, size_t i)
        : blocks_(blocks),
          boundary_(blocks.length == 0 ? kNoBoundary : blocks.begin) {
      Resume(i);
    }

    size_t boundary() const { return boundary_; }

    // The walk is at boundary() with `left` room and *chunks so far: notes
    // them, or, on a cycle, moves *i and *chunks past its whole repeats.
    void AtBoundary(uint64_t left, size_t* i, uint64_t* chunks) {
      const size_t c_max = std::min(noted_, kCycleBlocks);
      for (size_t c = 1; c <= c_max; ++c) {
        const Note& back = notes_[(block_ - c) % kCycleBlocks];
        if (back.left != left) continue;
        const size_t cycles = (blocks_.count - block_) / c;
        *i += cycles * c * blocks_.length;
        *chunks += cycles * (*chunks - back.chunks);
        boundary_ = kNoBoundary;
        return;
      }
      notes_[block_ % kCycleBlocks] = {left, *chunks};
      ++noted_;
      Advance(block_ + 1);
    }

    // The walk jumped to index i (a run filled). If that passed the next
    // block start, the walk goes on to the first one at or after i, with
    // nothing noted (the notes must be of consecutive blocks).
    void Resume(size_t i) {
      if (i <= boundary_) return;  // also once there is none
      noted_ = 0;
      Advance((i - blocks_.begin + blocks_.length - 1) / blocks_.length);
    }

   private:
    struct Note {
      uint64_t left;
      uint64_t chunks;
    };
    static constexpr size_t kCycleBlocks = 4;

    void Advance(size_t block) {
      block_ = block;
      boundary_ = block > blocks_.count
                      ? kNoBoundary
                      : blocks_.begin + block * blocks_.length;
    }

    const RepeatedBlocks& blocks_;
    size_t boundary_ = 0;  // the start of block block_, or kNoBoundary
    size_t block_ = 0;
    size_t noted_ = 0;  // consecutive blocks noted, up to block_
    Note notes_[kCycleBlocks];
  };

  // Places m sizes s (0 < s <= chunk) after a chunk with `left` room, as m
  // steps of WalkGroup would, in a few divisions: those that fit; then one
  // opens a chunk, which takes per - 1 more (per = chunk / s); every later
  // chunk closes full (per sizes) and its change is (per + 1) * s.
  static void FillRun(uint64_t s, uint64_t m, uint64_t chunk, uint64_t* left,
                      uint64_t* chunks, uint64_t* least) {
    const uint64_t fit = std::min(m, *left / s);
    *left -= fit * s;
    m -= fit;
    if (m == 0) return;
    *least = std::min(*least, (chunk - *left) + s);
    ++*chunks;
    *left = chunk - s;
    --m;
    const uint64_t per = chunk / s;
    const uint64_t more = std::min(m, per - 1);
    *left -= more * s;
    m -= more;
    if (m == 0) return;
    *least = std::min(*least, (per + 1) * s);
    const uint64_t opened = (m + per - 1) / per;
    *chunks += opened;
    *left = chunk - (m - (opened - 1) * per) * s;
  }

  // Next-fit over one group with prefix sums p[0..n]: each chunk takes the
  // longest run from `pos` whose sum is <= chunk (zeros included), found by
  // galloping then bisecting; a new one opens while anything non-zero is left.
  static void CountGroup(const uint64_t* p, size_t n, uint64_t chunk,
                         Evaluation* e) {
    size_t pos = 0;
    while (p[pos] < p[n]) {
      const uint64_t limit = p[pos] + chunk;
      size_t lo = pos + 1;  // p[lo] <= limit: no size exceeds chunk
      size_t step = 1;
      while (lo + step <= n && p[lo + step] <= limit) {
        lo += step;
        step *= 2;
      }
      const size_t hi = std::min(lo + step, n + 1);
      const size_t end = std::upper_bound(p + lo, p + hi, limit) - p - 1;
      ++e->chunks;
      if (end < n)
        e->next_change = std::min(e->next_change, p[end + 1] - p[pos]);
      pos = end;
    }
  }

  // One group's view of the shared arrays, and how it is counted.
  struct Group {
    size_t prefix = 0;  // its prefix sums: prefix_[prefix .. prefix + n]
    size_t n = 0;       // its sizes
    size_t runs = 0;    // its long runs: runs_[runs, runs_end)
    size_t runs_end = 0;
    RepeatedBlocks blocks;
    uint64_t walk_up_to = 0;  // the walk counts chunk sizes up to this
  };

  std::vector<uint64_t> prefix_;
  std::vector<Run> runs_;  // every group's long runs, back to back
  uint64_t placing_groups_ = 0;
  // Inline for up to 3 groups: no allocation for the common requests.
  absl::InlinedVector<Group, 3> groups_;
};

// Evaluations along the grid, with the stop check between them, tallied.
class GridWalker {
 public:
  GridWalker(const SweepProblem& problem, const StopCheck& stop)
      : counter_(problem),
        grid_(problem.grid),
        index_finder_(problem.grid),
        stop_(stop) {}

  const ChunkCounter& counter() const { return counter_; }
  const CandidateGrid& grid() const { return grid_; }
  const PlateauWalkTally& tally() const { return tally_; }

  // Counts one search for a new plateau (tests hold it to the bound).
  void StartSearch() { ++tally_.searches; }

  // The stop check runs before the first evaluation and then whenever
  // kChunksPerStopCheck chunks (plus one per evaluation) have been counted.
  absl::Status EvaluateAt(uint64_t index, Evaluation* out) {
    if (stop_ && unchecked_chunks_ >= next_check_) {
      if (absl::Status s = stop_(); !s.ok()) return s;
      next_check_ = unchecked_chunks_ + kChunksPerStopCheck;
    }
    *out = counter_.Evaluate(grid_.At(index));
    unchecked_chunks_ += out->chunks + 1;
    ++tally_.evaluations;
    tally_.max_chunks = std::max(tally_.max_chunks, out->chunks);
    return absl::OkStatus();
  }

  // The first index after `index` (evaluated as `e`) where the partition can
  // change, or grid.count.
  uint64_t NextCandidate(uint64_t index, const Evaluation& e) const {
    if (e.next_change == kNever) return grid_.count;
    return std::max(index + 1, index_finder_.FirstIndexAtLeast(e.next_change));
  }

  // The first index >= lo (or grid.count) whose candidate might have less
  // waste than `best`, or one where the look stopped (after kMaxBands
  // steps): no candidate skipped can. At C, K(C) >= q = ceil(S / C), so the
  // waste K(C) * C - S >= q * C - S, and q stays while C < ceil(S / (q -
  // 1)): where q * C - S >= best, the whole band of q up to there is
  // skipped; with q == 1 the waste only grows with C, so nothing after can
  // improve. (What cannot beat the best so far is no strict improvement:
  // the frontier stays whole.) S is `total`.
  uint64_t FirstThatCanImprove(uint64_t total, uint64_t best,
                               uint64_t lo) const {
    constexpr int kMaxBands = 64;
    for (int band = 0; band < kMaxBands && lo < grid_.count; ++band) {
      const uint64_t chunk = grid_.At(lo);
      const uint64_t q = CeilDiv(total, chunk);
      if (q * chunk - total < best) return lo;  // q * chunk < total + chunk
      if (q <= 1) return grid_.count;
      lo = index_finder_.FirstIndexAtLeast(CeilDiv(total, q - 1));
    }
    return lo;
  }

  // grid.FirstIndexAtLeast(value), without its division.
  uint64_t FirstIndexAtLeast(uint64_t value) const {
    return index_finder_.FirstIndexAtLeast(value);
  }

 private:
  ChunkCounter counter_;
  CandidateGrid grid_;
  GridIndexFinder index_finder_;
  const StopCheck& stop_;
  uint64_t unchecked_chunks_ = 0;  // chunks counted so far, plus evaluations
  uint64_t next_check_ = 0;        // the count at which to check next
  PlateauWalkTally tally_;
};

// The first grid point of the plateau after the current one: its index
// (grid.count when K keeps to the end) and evaluation, and the last index
// known to share that K (same_end) with its evaluation: the walk goes on
// after it.
struct Drop {
  uint64_t index = 0;
  Evaluation at;
  uint64_t same_end = 0;
  Evaluation at_same_end;
};

// Where the walk looks next for a K below current.chunks, from lo: lo, or
// past the candidates that keep the plateau's K or cannot have a waste
// below `beat`; grid.count when none is left. No chunk holds more than C,
// so K(C) >= sum of ceil(S_g / C) >= ceil(S / C): K cannot drop once it
// counts one chunk per placing group, nor anywhere below the first
// candidate >= ceil(S / (K - 1)).
uint64_t NextLook(const GridWalker& walker, uint64_t total,
                  const Evaluation& current, uint64_t beat, uint64_t lo) {
  const CandidateGrid& grid = walker.grid();
  if (lo >= grid.count) return grid.count;
  if (current.chunks <= walker.counter().placing_groups()) return grid.count;
  const uint64_t fewer = current.chunks - 1;
  if (static_cast<unsigned __int128>(grid.At(lo)) * fewer < total) {
    lo = walker.FirstIndexAtLeast(CeilDiv(total, fewer));
  }
  return walker.FirstThatCanImprove(total, beat, lo);
}

// Gallops from *lo (< grid.count) for an index whose K is below `chunks`,
// probing lo, lo + 1, lo + 3, ...: drop->index is the first probe that
// drops (grid.count if none does), *lo the least index not known to keep K.
absl::Status Gallop(GridWalker& walker, uint64_t chunks, uint64_t* lo,
                    Drop* drop) {
  const uint64_t count = walker.grid().count;
  drop->index = count;
  for (uint64_t step = 1; *lo < count; step *= 2) {
    const uint64_t probe = std::min(count - 1, *lo + step - 1);
    Evaluation e;
    CHUNKPLAN_RETURN_IF_ERROR(walker.EvaluateAt(probe, &e));
    if (e.chunks < chunks) {
      drop->index = probe;
      drop->at = e;
      break;
    }
    *lo = walker.NextCandidate(probe, e);
  }
  drop->same_end = drop->index;
  drop->at_same_end = drop->at;
  return absl::OkStatus();
}

// Bisects [lo, drop->index] for the first index whose K is below `chunks`:
// drop->index drops, everything below lo does not. lo, the next point where
// the partition changes at all, is probed first: there K most often drops
// (a chunk takes in the size that opened the next one).
absl::Status Bisect(GridWalker& walker, uint64_t chunks, uint64_t lo,
                    Drop* drop) {
  for (bool first = true; lo < drop->index; first = false) {
    const uint64_t mid = first ? lo : lo + (drop->index - lo) / 2;
    Evaluation e;
    CHUNKPLAN_RETURN_IF_ERROR(walker.EvaluateAt(mid, &e));
    if (e.chunks < chunks) {
      if (e.chunks != drop->at.chunks) {
        drop->same_end = mid;
        drop->at_same_end = e;
      }
      drop->index = mid;
      drop->at = e;
    } else {
      lo = walker.NextCandidate(mid, e);
    }
  }
  return absl::OkStatus();
}

// The plateau walk: every strict improvement is recorded and nothing that
// could be one is skipped. K is constant on [plateau, lo); each round finds
// the first index >= lo where it drops.
absl::StatusOr<SweepOutcome> Walk(const SweepProblem& problem,
                                  const StopCheck& stop,
                                  PlateauWalkTally* tally) {
  GridWalker walker(problem, stop);
  const CandidateGrid& grid = walker.grid();
  const uint64_t total = problem.swept_total;

  Evaluation current;
  CHUNKPLAN_RETURN_IF_ERROR(walker.EvaluateAt(0, &current));
  SweepOutcome best{0, grid.At(0), current.chunks * grid.At(0) - total, {}};
  best.improvements.reserve(16);  // most frontiers have fewer points
  best.improvements.push_back({0, best.chunk_size, best.waste});
  uint64_t lo = walker.NextCandidate(0, current);
  while (best.waste > 0) {
    lo = NextLook(walker, total, current, best.waste, lo);
    if (lo >= grid.count) break;
    walker.StartSearch();
    Drop drop;
    CHUNKPLAN_RETURN_IF_ERROR(Gallop(walker, current.chunks, &lo, &drop));
    if (drop.index == grid.count) break;  // K keeps to the end of the grid
    CHUNKPLAN_RETURN_IF_ERROR(Bisect(walker, current.chunks, lo, &drop));
    // drop.index is the first grid point of a new plateau.
    current = drop.at;
    const uint64_t chunk = grid.At(drop.index);
    const uint64_t waste = current.chunks * chunk - total;
    if (waste < best.waste) {
      best.best_index = drop.index;
      best.chunk_size = chunk;
      best.waste = waste;
      best.improvements.push_back({drop.index, chunk, waste});
    }
    lo = walker.NextCandidate(drop.same_end, drop.at_same_end);
  }
  if (tally != nullptr) *tally = walker.tally();
  return best;
}

// RESOURCE_EXHAUSTED where the bound of the walk's work exceeds max_work.
absl::Status CheckWork(const SweepProblem& problem, uint64_t max_work) {
  const PlateauWork work = BoundPlateauWork(problem);
  if (work.steps <= max_work) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "CPU_PLATEAU: the walk over ", problem.grid.count,
      " candidates may take ", work.evaluations, " evaluations of up to ",
      problem.sizes.size() + work.max_chunks, " sizes and chunks each (",
      work.steps == UINT64_MAX ? std::string("over 2^64")
                               : absl::StrCat(work.steps),
      " steps), above this engine's limit of ", max_work,
      " (--max_plateau_work); a coarser search_interval or a larger "
      "min_chunk_size_m shortens it"));
}

// RESOURCE_EXHAUSTED where the bound of a layout walk's plateau search
// exceeds max_work (its exact evaluations are counted as it runs).
absl::Status CheckLayoutWork(const SweepTask& task, uint64_t max_work) {
  const LayoutPlateauWork work = BoundLayoutPlateauWork(task);
  if (work.steps <= max_work) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "CPU_PLATEAU: the layout walk over ", task.sweep->grid.count,
      " candidates may find ", work.plateaus, " plateaus in ", work.evaluations,
      " layouts of ", task.layout->tensors.size(), " parameters (",
      work.steps == UINT64_MAX ? std::string("over 2^64")
                               : absl::StrCat(work.steps),
      " steps), above this engine's limit of ", max_work,
      " (--max_plateau_work); a coarser search_interval or a larger "
      "min_chunk_size_m shortens it"));
}

}  // namespace

absl::StatusOr<SweepOutcome> WalkPlateaus(const SweepProblem& problem,
                                          const StopCheck& stop,
                                          PlateauWalkTally* tally) {
  return Walk(problem, stop, tally);
}

CpuPlateauEngine::CpuPlateauEngine(uint64_t max_work) : max_work_(max_work) {}

absl::StatusOr<SweepOutcome> CpuPlateauEngine::Run(
    const SweepTask& task, const StopCheck& stop) const {
  CHUNKPLAN_RETURN_IF_ERROR(EngineServes(kind(), task));
  if (task.objective != Objective::kSeedWaste) {
    CHUNKPLAN_RETURN_IF_ERROR(CheckLayoutWork(task, max_work_));
    return WalkLayoutPlateaus(task, max_work_, stop, nullptr);
  }
  CHUNKPLAN_RETURN_IF_ERROR(CheckWork(*task.sweep, max_work_));
  return Walk(*task.sweep, stop, nullptr);
}

}  // namespace chunkplan::planner
