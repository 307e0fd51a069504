// The planner end to end on ColossalAI's own test case, and engine choice.
#include "chunkplan/planner/planner.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cuda_engine.h"
#include "server/planner/engines/device_health.h"
#include "testing/model_shapes.h"

namespace chunkplan::planner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

SearchRequest ColossalAiGpt2Case(uint32_t dp_degree) {
  SearchRequest r;
  r.numels = testing::Gpt2TestNumels();
  r.dp_degrees = {dp_degree};
  r.search_range_m = 1;
  r.search_interval = 128;
  r.min_chunk_size_m = 0;
  r.filter_exlarge_params = true;
  return r;
}

// ColossalAI's test_search: chunk size 527872 at dp 1 and dp 4.
TEST(Planner, ColossalAiGpt2CaseOnEveryCpuEngine) {
  const Planner planner;
  for (uint32_t dp : {1u, 4u}) {
    for (Engine engine :
         {Engine::kAuto, Engine::kCpuSweep, Engine::kCpuPlateau}) {
      SearchRequest r = ColossalAiGpt2Case(dp);
      r.engine = engine;
      const auto result = planner.Search(r);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_THAT(result->configs, ElementsAre(ChunkConfig{
                                       dp, testing::kGpt2TestChunkSize, false}))
          << "dp " << dp << " engine " << EngineName(engine);
      EXPECT_EQ(result->total_param_size, 6960896u);  // 50258*128 + 527872
      EXPECT_NE(result->engine, Engine::kAuto);
      EXPECT_EQ(result->candidates,
                8193u);  // range(131072, 131072 + 2**20 + 1, 128)
    }
  }
}

TEST(Planner, AutoRunsThePlateauEngine) {
  const auto result = Planner().Search(ColossalAiGpt2Case(1));
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->engine, Engine::kCpuPlateau);
}

TEST(Planner, CudaIsAFailedPreconditionWithoutAUsableEngine) {
#ifdef CHUNKPLAN_HAVE_CUDA_ENGINE
  if (CudaEngine::Device().ok()) GTEST_SKIP() << "a CUDA device is present";
#endif
  SearchRequest r = ColossalAiGpt2Case(1);
  r.engine = Engine::kCuda;
  const auto result = Planner().Search(r);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("CUDA"));
}

TEST(Planner, InvalidInputBeforeEngineChoice) {
  SearchRequest r = ColossalAiGpt2Case(1);
  r.engine = Engine::kCuda;
  r.search_interval = 0;
  EXPECT_EQ(Planner().Search(r).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Planner, SweepLimitIsConfigurable) {
  PlannerOptions options;
  options.cpu_sweep.max_work = 1000;
  SearchRequest r = ColossalAiGpt2Case(1);
  r.engine = Engine::kCpuSweep;
  EXPECT_EQ(Planner(options).Search(r).status().code(),
            absl::StatusCode::kResourceExhausted);
  r.engine = Engine::kCpuPlateau;
  EXPECT_TRUE(Planner(options).Search(r).ok());
}

TEST(Planner, GatheredConfigsComeFirst) {
  // Degree 2 is swept, degree 3 (seen later) is small enough to stay
  // gathered: the seed's dict lists 3 first.
  SearchRequest r;
  r.numels = {4096, 8192, 10, 4096};
  r.dp_degrees = {2, 2, 3, 2};
  r.search_range_m = 0;
  r.search_interval = 1024;
  r.min_chunk_size_m = 1000.0 / 1048576;  // 1000 elements
  r.filter_exlarge_params = false;
  const auto result = Planner().Search(r);
  ASSERT_TRUE(result.ok()) << result.status();
  // start = 8192, one candidate; lcm(2, 3) = 6 -> 8196.
  EXPECT_THAT(result->configs, ElementsAre(ChunkConfig{3, 10, true},
                                           ChunkConfig{2, 8196, false}));
  // next-fit at 8192: [4096] [8192] [4096] -> 4096 + 0 + 4096.
  EXPECT_EQ(result->min_chunk_waste, 8192u);
}

// --version's engine list, without a Planner: the same words as a fresh
// Planner's, the CPU engines first.
TEST(Planner, DescribesTheBuiltInEnginesWithoutAPlanner) {
  const std::string built_in = DescribeBuiltInEngines();
  EXPECT_EQ(built_in, Planner().DescribeEngines());
  EXPECT_THAT(built_in, ::testing::StartsWith("CPU_SWEEP CPU_PLATEAU"));
}

// A CUDA engine whose device fails every sweep with the given CUDA error,
// counting its sweeps.
class FailingDeviceEngine final : public SweepEngine {
 public:
  explicit FailingDeviceEngine(std::string error, int* sweeps)
      : error_(std::move(error)), sweeps_(sweeps) {}
  Engine kind() const override { return Engine::kCuda; }
  absl::StatusOr<SweepOutcome> Run(const SweepTask&,
                                   const StopCheck&) const override {
    ++*sweeps_;
    absl::Status failed =
        absl::InternalError(absl::StrCat("CUDA engine: SweepSlice: ", error_));
    failed.SetPayload(kCudaErrorPayload, absl::Cord(error_));
    return failed;
  }

 private:
  std::string error_;
  int* sweeps_;
};

Planner PlannerWithFailingDevice(const std::string& error, int* sweeps) {
  std::vector<std::unique_ptr<SweepEngine>> engines;
  engines.push_back(std::make_unique<CpuPlateauEngine>());
  engines.push_back(std::make_unique<FailingDeviceEngine>(error, sweeps));
  return Planner(PlannerOptions{}, std::move(engines));
}

// Finding 5 of the hardening issue: after a sticky CUDA error, every later
// request retried the device, failed and fell back.
TEST(Planner, StickyDeviceFailureMakesTheDeviceUnusable) {
  int sweeps = 0;
  const Planner planner =
      PlannerWithFailingDevice("cudaErrorIllegalAddress", &sweeps);
  SearchRequest r = ColossalAiGpt2Case(1);
  r.engine = Engine::kCuda;
  const auto first = planner.Search(r);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->engine, Engine::kCpuPlateau);
  EXPECT_THAT(first->fallback_reason, HasSubstr("cudaErrorIllegalAddress"));
  EXPECT_EQ(sweeps, 1);

  const auto second = planner.Search(r);
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("device unusable since a sticky failure"));
  EXPECT_EQ(sweeps, 1);  // not tried again
  EXPECT_THAT(planner.AvailableEngines(), ElementsAre(Engine::kCpuPlateau));
  EXPECT_THAT(
      planner.DescribeEngines(),
      HasSubstr(
          "CUDA (not usable here: device unusable since a sticky failure"));
  const std::vector<EngineState> states = planner.EngineStates();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[1].engine, Engine::kCuda);
  EXPECT_EQ(states[1].usable.code(), absl::StatusCode::kFailedPrecondition);
}

TEST(Planner, PassingDeviceFailureLeavesTheDeviceUsable) {
  int sweeps = 0;
  const Planner planner =
      PlannerWithFailingDevice("cudaErrorMemoryAllocation", &sweeps);
  SearchRequest r = ColossalAiGpt2Case(1);
  r.engine = Engine::kCuda;
  for (int i = 0; i < 2; ++i) {
    const auto got = planner.Search(r);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->engine, Engine::kCpuPlateau);
  }
  EXPECT_EQ(sweeps, 2);
  EXPECT_THAT(planner.AvailableEngines(),
              ElementsAre(Engine::kCpuPlateau, Engine::kCuda));
}

TEST(DeviceHealth, KnowsStickyErrorsByNameAndByALostContext) {
  auto cuda = [](const char* name) {
    absl::Status s = absl::InternalError(name);
    s.SetPayload(kCudaErrorPayload, absl::Cord(name));
    return s;
  };
  EXPECT_TRUE(IsStickyCudaFailure(cuda("cudaErrorLaunchFailure")));
  EXPECT_TRUE(IsStickyCudaFailure(cuda("cudaErrorAssert")));
  EXPECT_FALSE(IsStickyCudaFailure(cuda("cudaErrorMemoryAllocation")));
  EXPECT_FALSE(IsStickyCudaFailure(absl::DeadlineExceededError("stop")));
  absl::Status lost = cuda("cudaErrorInvalidValue");
  lost.SetPayload(kCudaContextLostPayload, absl::Cord("lost"));
  EXPECT_TRUE(IsStickyCudaFailure(lost));
  DeviceHealth health;
  EXPECT_TRUE(health.Usable().ok());
  health.RecordFailure(cuda("cudaErrorMemoryAllocation"));
  EXPECT_TRUE(health.Usable().ok());
  health.RecordFailure(cuda("cudaErrorIllegalAddress"));
  EXPECT_EQ(health.Usable().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace chunkplan::planner
