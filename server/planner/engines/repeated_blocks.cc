#include "server/planner/engines/repeated_blocks.h"

namespace chunkplan::planner {

RepeatedBlocks FindRepeatedBlocks(std::span<const uint64_t> sizes) {
  const size_t n = sizes.size();
  if (n < kMinRepeatedSizes) return {};
  // Every block length of a repetition through the middle size m is a
  // distance to a later copy of sizes[m]; the shortest is tried first.
  // kMinRepeatedBlocks blocks bound the length by n / kMinRepeatedBlocks.
  const size_t m = n / 2;
  const size_t max_length = n / kMinRepeatedBlocks;
  size_t spanned = 0;  // by the repetitions measured so far
  for (size_t length = 1; length <= max_length; ++length) {
    if (sizes[m + length] != sizes[m]) continue;
    // sizes[k] == sizes[k + length] for k in [first, last).
    size_t last = m;
    while (last + length < n && sizes[last] == sizes[last + length]) ++last;
    size_t first = m;
    while (first > 0 && sizes[first - 1] == sizes[first - 1 + length]) --first;
    const size_t span = last + length - first;
    const size_t count = span / length;
    if (2 * count * length >= n && count >= kMinRepeatedBlocks)
      return {first, length, count};
    spanned += span;
    if (spanned > kLookBudget * n) return {};
  }
  return {};
}

}  // namespace chunkplan::planner
