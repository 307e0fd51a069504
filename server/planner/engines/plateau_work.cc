#include "server/planner/engines/plateau_work.h"

#include <algorithm>
#include <bit>

#include "server/planner/candidate/round_up.h"
#include "server/planner/request/checked_math.h"

namespace chunkplan::planner {
namespace {

// Next-fit's chunks for a group of sum S > 0 at chunk size C (every size <=
// C): two consecutive chunks hold more than C together (the second's first
// size did not fit in the first), so floor(k / 2) disjoint pairs hold more
// than floor(k / 2) C <= S; with q = ceil(S / C), floor(k / 2) < q, so k <=
// 2q - 1. And k >= q: no chunk holds more than C.
struct ChunkRange {
  uint64_t most = 0;   // at the first candidate
  uint64_t least = 0;  // at the last
};

ChunkRange Chunks(const SweepProblem& problem) {
  ChunkRange range;
  const uint64_t first = problem.grid.At(0);
  const uint64_t last = problem.grid.At(problem.grid.count - 1);
  for (size_t g = 0; g < problem.num_groups(); ++g) {
    uint64_t sum = problem.swept_total;  // one group: no pass over it
    if (problem.num_groups() > 1) {
      sum = 0;
      for (uint64_t s : problem.group(g)) sum += s;  // <= swept_total
    }
    if (sum == 0) continue;  // opens no chunk (and C may be 0 only then)
    // < 2 S / C + 1 <= 2 S + 1 chunks per group: no overflow (S < 2^63).
    range.most += 2 * CeilDiv(sum, first) - 1;
    range.least += CeilDiv(sum, last);
  }
  return range;
}

}  // namespace

PlateauWork BoundPlateauWork(const SweepProblem& problem) {
  PlateauWork work;
  const ChunkRange chunks = Chunks(problem);
  const uint64_t count = problem.grid.count;
  work.max_chunks = chunks.most;
  // Next-fit's count never grows with C, and each plateau the walk finds has
  // fewer chunks than the last (at least chunks.least, the count at the last
  // candidate being at least that): at most `found` plateaus, each at its
  // own candidate; and one more search that finds no drop.
  const uint64_t found =
      std::min(count, chunks.most - std::min(chunks.most, chunks.least));
  work.plateaus = found + 1;
  // A search that finds the plateau at f from lo gallops to a probe j* with
  // lo + 2^(j* - 1) - 1 < f (the probe before did not drop, and K never
  // grows), that is j* <= log2(f - lo + 1) + 1, then bisects lo, then a
  // range of at most 2^j* - 2: 2 j* + 2 evaluations, <= 2 log2(d) + 4 with
  // d = f - lo + 1. The searches' ranges [lo, f] are disjoint, so the d sum
  // to at most `count`, and the sum of log2(d) is at most found x
  // log2(count / found) (log2 is concave); rounded up, L below. The search
  // that finds no drop gallops to the last candidate: at most B + 1
  // probes, B = ceil(log2(count)). Plus the first evaluation.
  const uint64_t b = std::bit_width(count - 1);
  const uint64_t l =
      found == 0 ? 0 : std::bit_width((count + found - 1) / found - 1);
  uint64_t per_evaluation = 0;
  if (!CheckedMul(found, 2 * l + 4, &work.evaluations) ||
      !CheckedAdd(work.evaluations, b + 2, &work.evaluations) ||
      !CheckedAdd(problem.sizes.size(), work.max_chunks, &per_evaluation) ||
      !CheckedMul(work.evaluations, per_evaluation, &work.steps)) {
    work.steps = UINT64_MAX;
  }
  return work;
}

}  // namespace chunkplan::planner
