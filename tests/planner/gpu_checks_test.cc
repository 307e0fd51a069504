// The GPU checks (testing/gpu_checks.h) themselves, on every machine: they
// pass for engines that answer as CPU_PLATEAU does (CPU_SWEEP, CPU_PLATEAU)
// and name the engine and problem for one that does not, so a device run
// that reports "agreed" has checked something.
#include "testing/gpu_checks.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cpu_sweep_engine.h"

namespace chunkplan::testing {
namespace {

using planner::SweepOutcome;
using planner::SweepProblem;
using ::testing::HasSubstr;

// CPU_PLATEAU's answer with the next grid index: wrong on every problem
// with more than one candidate.
class OffByOneEngine final : public planner::SweepEngine {
 public:
  planner::Engine kind() const override { return planner::Engine::kCpuSweep; }
  absl::StatusOr<SweepOutcome> Run(
      const planner::SweepTask& task,
      const planner::StopCheck& stop) const override {
    const SweepProblem& problem = *task.sweep;
    absl::StatusOr<SweepOutcome> got =
        planner::CpuPlateauEngine().Sweep(problem, stop);
    if (got.ok() && got->best_index + 1 < problem.grid.count) {
      ++got->best_index;
      got->chunk_size = problem.grid.At(got->best_index);
    }
    return got;
  }
};

// Answers DEADLINE_EXCEEDED on the first stop-check call.
class StopsAtOnceEngine final : public planner::SweepEngine {
 public:
  planner::Engine kind() const override { return planner::Engine::kCuda; }
  absl::StatusOr<SweepOutcome> Run(
      const planner::SweepTask&,
      const planner::StopCheck& stop) const override {
    if (absl::Status s = stop(); !s.ok()) return s;
    return SweepOutcome{};
  }
};

TEST(GpuChecks, PassForTheCpuEngines) {
  const planner::CpuSweepEngine sweep(
      planner::CpuSweepOptions{.max_work = UINT64_MAX});
  const planner::CpuPlateauEngine plateau;
  const std::vector<NamedEngine> both = {{"CPU_SWEEP", &sweep},
                                         {"CPU_PLATEAU", &plateau}};
  EXPECT_TRUE(AgreesOnRandomProblems(both, 1, 10).ok());
  EXPECT_TRUE(TiesGoToTheFirstCandidate(both).ok());
  const std::vector<NamedEngine> plateau_only = {{"CPU_PLATEAU", &plateau}};
  EXPECT_TRUE(AgreesOnOverAMillionCandidates(plateau_only, 2).ok());
  EXPECT_TRUE(FindsIndicesBeyond32Bits(plateau_only).ok());
}

TEST(GpuChecks, NameTheEngineThatDisagrees) {
  const OffByOneEngine wrong;
  const std::vector<NamedEngine> engines = {{"WRONG", &wrong}};
  for (const absl::Status& s : {AgreesOnRandomProblems(engines, 3, 5),
                                TiesGoToTheFirstCandidate(engines),
                                AgreesOnOverAMillionCandidates(engines, 4),
                                FindsIndicesBeyond32Bits(engines)}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
    EXPECT_THAT(std::string(s.message()), HasSubstr("WRONG answered index"));
  }
}

TEST(GpuChecks, StopCheckCheckWantsExactlyTwoCalls) {
  EXPECT_EQ(AsksTheStopCheckBetweenSlices(StopsAtOnceEngine()).code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace chunkplan::testing
