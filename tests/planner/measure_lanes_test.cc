// The layout measures' lanes (candidate/layout_measures.h): the CPU's vector
// pass (layout/measure_lanes.cc) and the scalar walk the CUDA kernel runs
// give, lane by lane, what a plain next-fit written here with exact 128-bit
// sums gives, overflow included, on random problems that mix small tensors,
// oversize ones, empty ones and sums beyond 2^64.

#include "server/planner/layout/measure_lanes.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "server/planner/candidate/layout_measures.h"

namespace chunkplan::planner {
namespace {

using u128 = unsigned __int128;

struct Problem {
  std::vector<PlacedTensor> tensors;
  std::vector<uint64_t> begin = {0};
  std::vector<uint32_t> degrees;
  std::vector<std::vector<uint64_t>> numels;  // per group
  FixedTotals fixed;
  ByteModel bytes;

  LayoutArrays arrays() const {
    return {tensors.data(), begin.data(), degrees.data(),
            degrees.size(), fixed,        bytes};
  }
};

// The objectives by the rules, branch by branch, in 128 bits.
LayoutValues Reference(const Problem& p, uint64_t chunk) {
  u128 padding = p.fixed.gathered_padding;
  u128 held = p.fixed.gathered_elements;
  u128 optimized = p.fixed.gathered_used;
  u128 largest = 0;
  for (size_t g = 0; g < p.degrees.size(); ++g) {
    const uint64_t d = p.degrees[g];
    bool open = false;
    u128 size = 0, used = 0;
    const auto close = [&] {
      padding += size - used;
      held += size / d;
      optimized += used < size / d ? used : size / d;
      if (size > largest) largest = size;
    };
    for (const uint64_t n : p.numels[g]) {
      if (open && n <= size - used) {
        used += n;
        continue;
      }
      if (open) close();
      size = n <= chunk ? u128{chunk} : (u128{n} + d - 1) / d * d;
      used = n;
      open = true;
    }
    if (open) close();
  }
  const ByteModel& b = p.bytes;
  // Kept-gathered chunks at the full rates; the others without what the
  // placement keeps on the host (host_side, host_optimizer).
  const u128 gathered = p.fixed.gathered_elements;
  const u128 gathered_used = p.fixed.gathered_used;
  const u128 peak =
      gathered * (b.param + b.master + b.grad) +
      (held - gathered) * (b.param + b.master + b.grad - b.host_side) +
      gathered_used * b.optimizer +
      (optimized - gathered_used) * (b.optimizer - b.host_optimizer) +
      u128{p.fixed.frozen_elements} * b.frozen + largest * b.gathered;
  LayoutValues v;
  v.overflow = padding > UINT64_MAX || peak > UINT64_MAX;
  v.layout_padding = static_cast<uint64_t>(padding);
  v.peak_rank_bytes = static_cast<uint64_t>(peak);
  return v;
}

Problem RandomProblem(std::mt19937_64& rng, bool huge) {
  Problem p;
  const uint32_t degree_choices[] = {1, 2, 3, 4, 8};
  const int groups = 1 + static_cast<int>(rng() % 3);
  for (int g = 0; g < groups; ++g) {
    const uint32_t d = degree_choices[rng() % 5];
    p.degrees.push_back(d);
    std::vector<uint64_t> numels(rng() % 12);  // some groups empty
    for (uint64_t& n : numels) {
      switch (rng() % 4) {
        case 0:
          n = rng() % 4;
          break;  // empty and tiny tensors
        case 1:
          n = rng() % 2000;
          break;
        case 2:
          n = 500 + rng() % 5000;
          break;  // oversize at small chunks
        default:
          n = huge ? (uint64_t{1} << 62) + rng() % 1000 : rng() % 300;
      }
      p.tensors.push_back(Placed(n, d));
    }
    p.begin.push_back(p.tensors.size());
    p.numels.push_back(std::move(numels));
  }
  if (rng() % 2) {
    p.fixed.gathered_elements = rng() % 1000 + 10;
    p.fixed.gathered_used = p.fixed.gathered_elements - 5;
    p.fixed.gathered_padding = 5;
  }
  p.fixed.frozen_elements = rng() % 100;
  // Without master weights, Adam; or with master weights, separate
  // gradients and Adam (layout/byte_model_of.h's cases).
  p.bytes = rng() % 2 ? ByteModel{.param = 2,
                                  .master = 0,
                                  .grad = 2,
                                  .optimizer = 4,
                                  .frozen = 2,
                                  .gathered = 2,
                                  .pinned = 0}
                      : ByteModel{.param = 2,
                                  .master = 4,
                                  .grad = 2,
                                  .optimizer = 8,
                                  .frozen = 2,
                                  .gathered = 2,
                                  .pinned = 8};
  if (rng() % 3 == 0) {
    // Auto placement or offload_optim_frac 1 (layout/byte_model_of.h).
    p.bytes.host_side = p.bytes.master + p.bytes.grad;
    p.bytes.host_optimizer = p.bytes.optimizer;
  }
  return p;
}

void ExpectSame(const LayoutValues& got, const LayoutValues& want,
                const char* who, uint64_t chunk) {
  EXPECT_EQ(got.overflow, want.overflow) << who << " at " << chunk;
  if (got.overflow || want.overflow) return;
  EXPECT_EQ(got.layout_padding, want.layout_padding) << who << " at " << chunk;
  EXPECT_EQ(got.peak_rank_bytes, want.peak_rank_bytes)
      << who << " at " << chunk;
}

TEST(MeasureLanes, EveryLaneIsThePlainNextFit) {
  std::mt19937_64 rng(20261203);
  int overflowed = 0, fitted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const Problem p = RandomProblem(rng, /*huge=*/trial % 3 == 0);
    // Chunk sizes are multiples of every degree (of 24 = lcm(1, 2, 3, 4, 8)).
    uint64_t rounded[kMeasureLanes];
    for (uint64_t& c : rounded) {
      c = 24 * (1 + (rng() % 3 ? rng() % 300 : rng() % (uint64_t{1} << 58)));
    }
    LayoutValues lanes[kMeasureLanes];
    MeasureLanes(p.arrays(), rounded, lanes);
    for (int l = 0; l < kMeasureLanes; ++l) {
      const LayoutValues want = Reference(p, rounded[l]);
      LayoutValues scalar;
      MeasureLayout<uint64_t>(p.arrays(), &rounded[l], &scalar);
      ExpectSame(lanes[l], want, "MeasureLanes", rounded[l]);
      ExpectSame(scalar, want, "MeasureLayout<uint64_t>", rounded[l]);
      (want.overflow ? overflowed : fitted) += 1;
    }
  }
  // Both outcomes were exercised, in lanes next to each other.
  EXPECT_GT(overflowed, 100);
  EXPECT_GT(fitted, 10000);
}

}  // namespace
}  // namespace chunkplan::planner
