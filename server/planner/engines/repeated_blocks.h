#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_REPEATED_BLOCKS_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_REPEATED_BLOCKS_H_

// A model's parameters are mostly one layer's sizes over and over. Next-fit
// carries only the room left in the open chunk from one size to the next,
// so once that room is the same at the start of two blocks of equal sizes,
// every later block repeats the same chunks: CPU_PLATEAU's walk counts the
// rest of the blocks by multiplication (cpu_plateau_engine.cc).

#include <cstddef>
#include <cstdint>
#include <span>

namespace chunkplan::planner {

// Blocks [begin + j * length, begin + (j + 1) * length), j < count, of a
// sequence of sizes, all equal element by element. length == 0: none found.
struct RepeatedBlocks {
  size_t begin = 0;
  size_t length = 0;
  size_t count = 0;
};

// The repetition through the middle size of `sizes` (m = n / 2: sizes[k]
// == sizes[k + length] for every k from its first index through m) whose
// whole blocks, at least kMinRepeatedBlocks of them, hold at least half of
// the sizes, with the shortest block that does; its blocks run from the
// first to the last index of the repetition. Else length 0. Sequences
// shorter than kMinRepeatedSizes have none (walking them is cheaper than
// looking). Block lengths are tried shortest first, and the look gives up
// (length 0) once the repetitions it measured without success span more
// than kLookBudget * n sizes in all: O(n) work, whatever the sizes.
inline constexpr size_t kMinRepeatedSizes = 64;
inline constexpr size_t kMinRepeatedBlocks = 4;
inline constexpr size_t kLookBudget = 4;
RepeatedBlocks FindRepeatedBlocks(std::span<const uint64_t> sizes);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_REPEATED_BLOCKS_H_
