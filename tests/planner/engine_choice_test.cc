// AUTO's cost model: never CUDA for small sweeps or beyond CUDA's limit,
// never where the plateau engine has almost nothing to walk, CUDA where the
// plateau engine faces many plateaus of many chunks.
#include "server/planner/engines/engine_choice.h"

#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "server/planner/engines/cuda_engine.h"
#include "server/planner/request/search_plan.h"
#include "testing/test_problems.h"

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

// A problem with nothing to place, on a grid large enough to pass
// kCudaMinWork: the plateau engine has one evaluation to make, so the model
// must keep it on the CPU by its estimates, not by the work guard.
TEST(CudaCostModel, EmptyProblemIsCheap) {
  SweepProblem p;
  problems::AddGroup(p, {});
  p.grid = {.start = 64, .interval = 1, .count = kCudaMinWork};
  ASSERT_GE(p.SweepWork(), kCudaMinWork);
  const SweepCostEstimate e = EstimateSweepCosts(p);
  EXPECT_GE(e.plateau_seconds, 0);
  EXPECT_LT(e.plateau_seconds, e.cuda_seconds);
  EXPECT_FALSE(AutoPrefersCuda(p, kNoLimit));
}

// Finding 1 of the hardening issue: a plan whose start size is 0 (every
// size 0, min_chunk_size_m 0) divided by zero in the cost model, killing
// any CUDA-built binary with SIGFPE on a valid request.
TEST(CudaCostModel, IsTotalOverEveryValidPlan) {
  SearchRequest zero;
  zero.numels = {0};
  zero.search_interval = 1;
  zero.search_range_m = 1024;
  zero.min_chunk_size_m = 0;
  const absl::StatusOr<SearchPlan> plan = BuildSearchPlan(zero);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->sweep.grid.start, 0u);
  ASSERT_GE(plan->sweep.SweepWork(), kCudaMinWork);
  const SweepCostEstimate e = EstimateSweepCosts(plan->sweep);
  EXPECT_GE(e.plateau_seconds, 0);
  EXPECT_GE(e.cuda_seconds, 0);
  // It returns (no trap), and nothing to place stays on the CPU.
  EXPECT_FALSE(AutoPrefersCuda(plan->sweep, kNoLimit));

  // Nothing swept, one candidate, and 2^62 candidates.
  SweepProblem nothing;
  for (uint64_t count : {uint64_t{1}, uint64_t{1} << 62}) {
    nothing.grid = {.start = 0, .interval = 1, .count = count};
    const SweepCostEstimate n = EstimateSweepCosts(nothing);
    EXPECT_TRUE(n.plateau_seconds >= 0 && n.cuda_seconds >= 0) << count;
    EXPECT_LT(n.plateau_seconds, n.cuda_seconds) << count;
    EXPECT_FALSE(AutoPrefersCuda(nothing, kNoLimit)) << count;
  }
}

}  // namespace
}  // namespace chunkplan::planner
