// ENGINE_CUDA. On a machine with a usable device: the same answers as
// CPU_PLATEAU on fresh random problems, on grids of over a million and over
// 2**31 candidates, ties to the first candidate across blocks and slices,
// the stop check between slices. Without one (every development and CI
// machine): FAILED_PRECONDITION with the CUDA error, and AUTO still answers.
// Built only where CMake found nvcc.
#include "server/planner/engines/cuda_engine.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "chunkplan/planner/planner.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/request/search_plan.h"
#include "testing/gpu_checks.h"
#include "testing/test_problems.h"

namespace chunkplan::planner {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

// The GPU comparisons: skipped where no device is usable.
class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto device = CudaEngine::Device(); !device.ok()) {
      GTEST_SKIP() << "no usable CUDA device: " << device.status().message();
    }
  }
};

// Default slices, and slices of one resident grid (many launches, merged).
const CudaEngine& DefaultSlices() {
  static const CudaEngine* const e = new CudaEngine();
  return *e;
}
const CudaEngine& OneGridSlices() {
  static const CudaEngine* const e =
      new CudaEngine(CudaEngineOptions{.steps_per_slice = 1});
  return *e;
}

// Both slicings, as testing/gpu_checks.h takes them.
std::vector<testing::NamedEngine> BothSlicings() {
  return {{"CUDA", &DefaultSlices()},
          {"CUDA(one grid per slice)", &OneGridSlices()}};
}

// The checks of testing/gpu_checks.h, which bench/gpu_check runs too.
TEST_F(CudaDeviceTest, AgreesWithPlateauOnFreshRandomProblems) {
  const absl::Status s = testing::AgreesOnRandomProblems(
      BothSlicings(), std::random_device()(), 200);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(CudaDeviceTest, LayoutFrontiersAgreeWithCpuSweepInBothSlicings) {
  for (const uint64_t steps : {uint64_t{1} << 32, uint64_t{1}}) {
    const Planner planner(
        PlannerOptions{.cuda = CudaEngineOptions{.steps_per_slice = steps}});
    const absl::Status s = testing::FrontiersAgreeWithCpuSweep(
        planner, std::random_device()(), 100);
    EXPECT_TRUE(s.ok()) << s;
  }
}

TEST_F(CudaDeviceTest, AgreesWithPlateauOnOverAMillionCandidates) {
  const absl::Status s = testing::AgreesOnOverAMillionCandidates(
      BothSlicings(), std::random_device()());
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(CudaDeviceTest, TiesGoToTheFirstCandidateAcrossBlocksAndSlices) {
  const absl::Status s = testing::TiesGoToTheFirstCandidate(BothSlicings());
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(CudaDeviceTest, IndicesBeyond32Bits) {
  // The default slices, and all 2**31 + 1007 candidates in one launch.
  const CudaEngine one_launch(CudaEngineOptions{.steps_per_slice = UINT64_MAX});
  const std::vector<testing::NamedEngine> engines = {
      {"CUDA", &DefaultSlices()}, {"CUDA(one launch)", &one_launch}};
  const absl::Status s = testing::FindsIndicesBeyond32Bits(engines);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(CudaDeviceTest, AsksTheStopCheckBetweenSlices) {
  const absl::Status s =
      testing::AsksTheStopCheckBetweenSlices(OneGridSlices());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(CudaEngine, RefusesWorkAboveItsLimit) {
  // Checked before the device: the same answer on every machine.
  SweepProblem p;
  problems::AddGroup(p, {10, 20, 30});
  p.grid = {.start = 32, .interval = 1, .count = 1000};
  const auto got = CudaEngine(CudaEngineOptions{.max_work = 2999}).Sweep(p, {});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(IsCudaFailure(got.status()));
}

// 4000 random sizes in [1, 4096], interval 1, a 0.5 MiB range: 524,289
// candidates, about 2000 chunks and as many plateaus. AUTO prefers CUDA, and
// the plateau engine still answers in a fraction of a second.
SearchRequest AutoPrefersCudaRequest() {
  std::mt19937_64 rng(11);
  SearchRequest r;
  for (int i = 0; i < 4000; ++i) r.numels.push_back(1 + rng() % 4096);
  r.search_range_m = 0.5;
  r.search_interval = 1;
  r.min_chunk_size_m = 0;
  r.filter_exlarge_params = false;
  return r;
}

TEST(CudaEngine, AutoAnswersOnEveryMachineAndCudaOnlyWithADevice) {
  SearchRequest r = AutoPrefersCudaRequest();
  const auto plan = BuildSearchPlan(r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(AutoPrefersCuda(plan->sweep, CudaEngineOptions().max_work));
  const Planner planner;
  r.engine = Engine::kCpuPlateau;
  const auto plateau = planner.Search(r);
  ASSERT_TRUE(plateau.ok()) << plateau.status();
  r.engine = Engine::kAuto;
  const auto automatic = planner.Search(r);
  ASSERT_TRUE(automatic.ok()) << automatic.status();
  EXPECT_EQ(automatic->configs, plateau->configs);
  EXPECT_EQ(automatic->min_chunk_waste, plateau->min_chunk_waste);
  EXPECT_TRUE(automatic->fallback_reason.empty()) << automatic->fallback_reason;
  r.engine = Engine::kCuda;
  const auto cuda = planner.Search(r);

  if (CudaEngine::Device().ok()) {
    EXPECT_EQ(automatic->engine, Engine::kCuda);
    ASSERT_TRUE(cuda.ok()) << cuda.status();
    EXPECT_EQ(cuda->engine, Engine::kCuda);
    EXPECT_EQ(cuda->configs, plateau->configs);
    EXPECT_EQ(cuda->min_chunk_waste, plateau->min_chunk_waste);
    return;
  }
  // No device: AUTO fell to the plateau engine, CUDA by name is refused
  // with the runtime's own error, and is not listed as available.
  EXPECT_EQ(automatic->engine, Engine::kCpuPlateau);
  EXPECT_EQ(cuda.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(cuda.status().message()),
              ContainsRegex("^CUDA engine: no usable device: cudaGetDeviceCount"
                            "(: cudaError[A-Za-z]+ \\(.+\\)| found none)$"));
  EXPECT_THAT(planner.AvailableEngines(),
              ::testing::Not(::testing::Contains(Engine::kCuda)));
  // The engine itself answers the same.
  const auto direct = CudaEngine().Sweep(plan->sweep, {});
  EXPECT_EQ(direct.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(direct.status().message()),
              HasSubstr("no usable device"));
}

TEST(IsCudaFailure, OnlyStatusesMadeFromCudaErrors) {
  EXPECT_FALSE(IsCudaFailure(absl::OkStatus()));
  EXPECT_FALSE(IsCudaFailure(absl::DeadlineExceededError("deadline")));
  EXPECT_FALSE(IsCudaFailure(absl::InternalError("CUDA engine: no payload")));
  absl::Status marked = absl::InternalError("x");
  marked.SetPayload(kCudaErrorPayload, absl::Cord("cudaErrorLaunchFailure"));
  EXPECT_TRUE(IsCudaFailure(marked));
}

}  // namespace
}  // namespace chunkplan::planner
