// AUTO's cost model: never CUDA for small sweeps or beyond CUDA's limit,
// never where the plateau engine has almost nothing to walk, CUDA where the
// plateau engine faces many plateaus of many chunks.
#include "server/planner/cuda_cost_model.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "server/planner/cuda_engine.h"
#include "tests/planner/cuda_test_problems.h"

namespace chunkplan::planner {
namespace {

constexpr uint64_t kNoLimit = UINT64_MAX;

// `n` random sizes in [1, 4096] swept at interval 1 over `count` candidates.
SweepProblem ManyPlateaus(uint64_t n, uint64_t count) {
  std::mt19937_64 rng(5);
  SweepProblem p;
  std::vector<uint64_t> sizes(n);
  for (uint64_t& s : sizes) s = 1 + rng() % 4096;
  problems::AddGroup(p, sizes);
  p.grid = {.start = 4096, .interval = 1, .count = count};
  return p;
}

TEST(CudaCostModel, SmallSweepsStayOnTheCpu) {
  const SweepProblem p = ManyPlateaus(1000, 1000);
  ASSERT_LT(p.SweepWork(), kCudaMinWork);
  EXPECT_FALSE(AutoPrefersCuda(p, kNoLimit));
}

TEST(CudaCostModel, ManyPlateausOfManyChunksGoToCuda) {
  const SweepProblem p = ManyPlateaus(20000, 1'000'000);
  const SweepCostEstimate e = EstimateSweepCosts(p);
  EXPECT_LT(e.cuda_seconds, e.plateau_seconds);
  EXPECT_TRUE(AutoPrefersCuda(p, kNoLimit));
  // ... unless the sweep exceeds CUDA's own limit.
  EXPECT_FALSE(AutoPrefersCuda(p, p.SweepWork() - 1));
  EXPECT_TRUE(AutoPrefersCuda(p, p.SweepWork()));
}

TEST(CudaCostModel, FewPlateausStayOnTheCpuHoweverLargeTheGrid) {
  // 2**31 candidates, but two sizes: at most one plateau change.
  const SweepProblem p = problems::BeyondInt32Problem();
  ASSERT_GE(p.SweepWork(), kCudaMinWork);
  EXPECT_FALSE(AutoPrefersCuda(p, kNoLimit));
}

TEST(CudaCostModel, EstimatesGrowWithTheGrid) {
  const SweepCostEstimate small =
      EstimateSweepCosts(ManyPlateaus(5000, 100'000));
  const SweepCostEstimate large =
      EstimateSweepCosts(ManyPlateaus(5000, 1'000'000));
  EXPECT_LT(small.cuda_seconds, large.cuda_seconds);
  EXPECT_LE(small.plateau_seconds, large.plateau_seconds);
  EXPECT_GT(small.plateau_seconds, 0);
}

TEST(CudaCostModel, EmptyProblemIsCheap) {
  SweepProblem p;
  problems::AddGroup(p, {});
  p.grid = {.start = 64, .interval = 1, .count = 1000};
  const SweepCostEstimate e = EstimateSweepCosts(p);
  EXPECT_GE(e.plateau_seconds, 0);
  EXPECT_FALSE(AutoPrefersCuda(p, kNoLimit));
}

}  // namespace
}  // namespace chunkplan::planner
