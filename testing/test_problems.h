#ifndef CHUNKPLAN_TESTING_TEST_PROBLEMS_H_
#define CHUNKPLAN_TESTING_TEST_PROBLEMS_H_

// Problems that the CUDA engine is checked on, shared by the GPU unit tests
// (cuda_engine_test.cc) and the GPU machine's check program
// (bench/gpu_check.cc, which has no GoogleTest). Each honours SweepProblem's
// invariants: every size <= grid.start and no 64-bit overflow.

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "chunkplan/planner/search_types.h"
#include "server/planner/layout/objective_problem.h"
#include "server/planner/request/search_plan.h"
#include "testing/model_shapes.h"

namespace chunkplan::planner::problems {

// Appends one group of sizes to `p`.
inline void AddGroup(SweepProblem& p, const std::vector<uint64_t>& sizes) {
  for (uint64_t s : sizes) {
    p.sizes.push_back(s);
    p.swept_total += s;
  }
  p.group_begin.push_back(p.sizes.size());
}

// A fresh random problem: 1 to 4 groups (an empty one now and then), up to
// `max_sizes` sizes in all (zeros and repeats among them), so groups end
// inside and at the edges of the kernel's 1024-size tiles; up to
// `max_candidates` candidates at a random interval from the smallest start.
inline SweepProblem RandomSweepProblem(std::mt19937_64& rng, uint64_t max_sizes,
                                       uint64_t max_candidates) {
  SweepProblem p;
  const int groups = 1 + static_cast<int>(rng() % 4);
  const uint64_t scale = uint64_t{1} << (4 + rng() % 20);
  uint64_t largest = 0;
  for (int g = 0; g < groups; ++g) {
    const uint64_t n = rng() % 6 == 0 ? 0 : rng() % (max_sizes / groups + 1);
    std::vector<uint64_t> sizes;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t s = rng() % 5 == 0 ? 0 : 1 + rng() % scale;
      sizes.push_back(rng() % 7 == 0 && !sizes.empty() ? sizes.back() : s);
      largest = std::max(largest, sizes.back());
    }
    AddGroup(p, sizes);
  }
  p.grid.interval = 1 + rng() % 97;
  p.grid.start = std::max<uint64_t>(
      1, (largest + p.grid.interval - 1) / p.grid.interval * p.grid.interval);
  p.grid.count = 1 + rng() % max_candidates;
  return p;
}

// Many candidates tie at the least waste: 720 sizes of 1024 pack with no
// padding exactly at 1024 * m for every divisor m of 720. From start 7169 at
// interval 1 the first of them is 8192 (m = 8), index 1023; 9216, 10240, ...
// tie with it, in other blocks and other slices.
inline SweepProblem TiedProblem() {
  SweepProblem p;
  AddGroup(p, std::vector<uint64_t>(720, 1024));
  p.grid = {.start = 7169, .interval = 1, .count = 2'000'000};
  return p;
}
inline constexpr uint64_t kTiedProblemBestIndex = 1023;

// Beyond 32-bit indices: sizes x and x - 1 (x = 2**31 + 8) take two chunks
// below C = 2x - 1 (padding 2C - 2x + 1 >= 1) and pack into one with no
// padding at 2x - 1. From start x at interval 1 that is index x - 1, past
// 2**31; the grid runs a little beyond it.
inline constexpr uint64_t kBeyondInt32BestIndex = (uint64_t{1} << 31) + 7;
inline SweepProblem BeyondInt32Problem() {
  const uint64_t x = kBeyondInt32BestIndex + 1;
  SweepProblem p;
  AddGroup(p, {x, x - 1});
  p.grid = {.start = x, .interval = 1, .count = kBeyondInt32BestIndex + 1000};
  return p;
}

// LLaMA-2 70B's 723 parameters (testing/model_shapes.h), searched as
// GeminiPlugin would with a 1024 MiB range at interval 128: 8,388,609
// candidates.
inline SearchRequest Llama2_70bLikeRequest() {
  SearchRequest r;
  r.numels = ::chunkplan::testing::Llama2_70bNumels();
  r.search_range_m = 1024;
  r.search_interval = 128;
  r.min_chunk_size_m = 32;
  r.filter_exlarge_params = true;
  return r;
}

// A layout whose plateau walk has a long bound: one group of degree 1 with
// 1024 distinct sizes 1000, 2000, ..., 1,024,000, each a breakpoint inside
// a grid from 1 at interval 1 of up to 2^20 candidates.
inline ObjectiveProblem ManyBreakpointsLayout() {
  ObjectiveProblem layout;
  for (uint64_t i = 0; i < 1024; ++i) {
    layout.tensors.push_back(Placed(1000 * (i + 1), 1));
  }
  layout.begin.push_back(layout.tensors.size());
  layout.degrees.push_back(1);
  return layout;
}

}  // namespace chunkplan::planner::problems

#endif  // CHUNKPLAN_TESTING_TEST_PROBLEMS_H_
