// CPU_PLATEAU's layout walk (engines/layout_plateau.h) against CPU_SWEEP's
// brute force (every candidate laid out): the whole frontier and the best,
// point for point, on fresh random problems built to sit on the walk's
// breakpoints: oversize tensors just above and below the candidates, several
// degrees whose lcm rounds runs of candidates to one C', kept-gathered and
// frozen totals, zero-size tensors, runs of equal sizes. A fresh seed each
// run, printed (CHUNKPLAN_PLATEAU_SEED replays one). The argument:
// docs/layout-plateau.md.

#include "server/planner/engines/layout_plateau.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "server/planner/layout/byte_model_of.h"
#include "server/planner/layout/objective_problem.h"
#include "server/planner/request/search_plan.h"
#include "testing/test_problems.h"

namespace chunkplan::planner {
namespace {

// The run's seed: CHUNKPLAN_PLATEAU_SEED, or a fresh one.
uint64_t RunSeed() {
  uint64_t seed = 0;
  const char* env = std::getenv("CHUNKPLAN_PLATEAU_SEED");
  if (env != nullptr && absl::SimpleAtoi(env, &seed)) return seed;
  return std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32);
}

// A random layout problem with its grid. Tensor sizes are drawn around a
// scale; a few "outliers" land inside the grid's span of C' (each one a
// breakpoint where a tensor stops being oversize), some exactly on a C'
// and one off it. Degrees from {1, 2, 3, 4, 6, 8}, so the lcm (up to 24)
// often exceeds the interval: runs of candidates share one C'.
struct RandomLayout {
  SweepProblem sweep;
  ObjectiveProblem layout;
};

RandomLayout MakeRandomLayout(std::mt19937_64& rng) {
  RandomLayout r;
  ObjectiveProblem& p = r.layout;
  const auto uniform = [&rng](uint64_t lo, uint64_t hi) {
    return lo + rng() % (hi - lo + 1);
  };
  constexpr uint32_t kDegrees[] = {1, 2, 3, 4, 6, 8};
  const uint64_t scale = uint64_t{1} << uniform(1, 16);
  CandidateGrid& grid = r.sweep.grid;
  grid.interval = uniform(0, 1) ? uniform(1, 8) : uniform(1, 40);
  grid.start = uniform(1, 2 * scale);
  grid.count = uniform(1, 2500);
  const uint64_t span = grid.interval * (grid.count - 1) + 1;
  const int groups = static_cast<int>(uniform(1, 3));
  for (int g = 0; g < groups; ++g) {
    const uint32_t degree = kDegrees[uniform(0, 5)];
    p.degrees.push_back(degree);
    p.degree_lcm = std::lcm(p.degree_lcm, uint64_t{degree});
  }
  for (int g = 0; g < groups; ++g) {
    const uint32_t degree = p.degrees[g];
    const uint64_t n = uniform(0, 6) == 0 ? 0 : uniform(1, 70);
    uint64_t last = 0;
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t numel = uniform(1, scale);
      const uint64_t kind = uniform(0, 19);
      if (kind < 3) numel = 0;
      if (kind >= 3 && kind < 6 && i > 0) numel = last;  // runs
      if (kind == 6) numel = uniform(1, degree + 2);     // fills slack
      if (kind == 7 || kind == 8) {
        // An outlier inside the span of candidates, on or near a C'.
        const uint64_t c = grid.start + uniform(0, span - 1);
        numel = c + p.degree_lcm - c % p.degree_lcm;
        if (kind == 8) numel = numel - uniform(0, 2) + uniform(0, 2);
      }
      if (kind == 9) numel = grid.start + span + uniform(0, scale);  // above
      last = numel;
      p.tensors.push_back(Placed(numel, degree));
    }
    p.begin.push_back(p.tensors.size());
  }
  if (uniform(0, 2) == 0) {  // kept-gathered groups
    p.fixed.gathered_used = uniform(0, 4 * scale);
    p.fixed.gathered_padding = uniform(0, 2);
    p.fixed.gathered_elements =
        p.fixed.gathered_used + p.fixed.gathered_padding;
  }
  if (uniform(0, 2) == 0) p.fixed.frozen_elements = uniform(0, 8 * scale);
  GeminiSettings gemini;
  gemini.master_weights = uniform(0, 1);
  gemini.gradient_accumulation = uniform(0, 1);
  gemini.pin_memory = uniform(0, 1);
  gemini.optimizer = uniform(0, 1) ? Optimizer::kAdam : Optimizer::kNone;
  p.bytes = ByteModelOf(gemini);
  if (uniform(0, 1) == 0) {
    // Any rates, odd ones too (the walk is exact for every byte model; with
    // even rates alone a bound one byte too strong would go unseen).
    p.bytes = {.param = uniform(0, 3),
               .master = uniform(0, 5),
               .grad = uniform(0, 3),
               .optimizer = uniform(0, 9),
               .frozen = uniform(0, 3),
               .gathered = uniform(0, 3),
               .pinned = 0};
  }
  return r;
}

// The walk's and CPU_SWEEP's answers to one task are equal point for point;
// beyond task.max_points both hold more (the answer is refused), whichever
// points they kept.
void ExpectSameAnswer(const SweepTask& task, const std::string& what) {
  const absl::StatusOr<SweepOutcome> want =
      CpuSweepEngine().Run(task, StopCheck());
  const absl::StatusOr<SweepOutcome> got =
      CpuPlateauEngine().Run(task, StopCheck());
  ASSERT_TRUE(want.ok()) << what << want.status();
  ASSERT_TRUE(got.ok()) << what << got.status();
  if (want->improvements.size() > task.max_points) {
    EXPECT_GT(got->improvements.size(), task.max_points) << what;
    return;
  }
  ASSERT_EQ(got->improvements.size(), want->improvements.size()) << what;
  for (size_t k = 0; k < want->improvements.size(); ++k) {
    ASSERT_EQ(got->improvements[k].index, want->improvements[k].index)
        << what << " point " << k;
    ASSERT_EQ(got->improvements[k].waste, want->improvements[k].waste)
        << what << " point " << k;
    ASSERT_EQ(got->improvements[k].chunk_size,
              want->improvements[k].chunk_size);
  }
  EXPECT_EQ(got->best_index, want->best_index) << what;
  EXPECT_EQ(got->chunk_size, want->chunk_size) << what;
  EXPECT_EQ(got->waste, want->waste) << what;
}

TEST(LayoutPlateau, EqualsTheSweepOnFreshRandomProblems) {
  const uint64_t seed = RunSeed();
  std::cout << "CHUNKPLAN_PLATEAU_SEED=" << seed << "\n";
  std::mt19937_64 rng(seed);
  int breakpoints = 0, lcm_runs = 0, gathered = 0, several = 0;
  constexpr int kRounds = 400;
  for (int round = 0; round < kRounds; ++round) {
    const RandomLayout r = MakeRandomLayout(rng);
    const uint64_t first = r.layout.Rounded(r.sweep.grid.At(0));
    const uint64_t last =
        r.layout.Rounded(r.sweep.grid.At(r.sweep.grid.count - 1));
    breakpoints += std::any_of(r.layout.tensors.begin(), r.layout.tensors.end(),
                               [&](const PlacedTensor& t) {
                                 return t.numel > first && t.numel <= last;
                               });
    lcm_runs += r.layout.degree_lcm > r.sweep.grid.interval;
    gathered += r.layout.fixed.gathered_elements > 0;
    several += r.layout.groups() > 1;
    for (const Objective o :
         {Objective::kLayoutPadding, Objective::kPeakRankBytes}) {
      for (const Want w : {Want::kBest, Want::kFrontier}) {
        const SweepTask task{&r.sweep, &r.layout, o, w};
        ExpectSameAnswer(task, "seed " + std::to_string(seed) + " round " +
                                   std::to_string(round) + " objective " +
                                   std::to_string(static_cast<int>(o)) + ": ");
        if (HasFatalFailure()) return;
      }
    }
  }
  // The run reached the breakpoints it is for.
  EXPECT_GT(breakpoints, kRounds / 5);
  EXPECT_GT(lcm_runs, kRounds / 5);
  EXPECT_GT(gathered, kRounds / 5);
  EXPECT_GT(several, kRounds / 5);
}

// The plateau key of candidate C' by the rules (chunk_placement.h), apart
// from the engine: each group's count of chunks of size C', and which
// tensors are oversize (numel > C').
std::vector<uint64_t> PlateauKey(const ObjectiveProblem& p, uint64_t c) {
  std::vector<uint64_t> key;
  for (uint64_t g = 0; g < p.groups(); ++g) {
    uint64_t normal = 0, size = 0, used = 0;
    for (uint64_t i = p.begin[g]; i < p.begin[g + 1]; ++i) {
      const PlacedTensor& t = p.tensors[i];
      key.push_back(t.numel > c);
      if (i != p.begin[g] && used + t.numel <= size) {
        used += t.numel;
        continue;
      }
      size = t.numel > c ? t.oversize : c;
      used = t.numel;
      normal += size == c;
    }
    key.push_back(normal);
  }
  return key;
}

// The bound at each candidate over the rest of its plateau is at most the
// least value there, and equals the value where it is exact (the padding
// always; the peak with every degree 1). A bound one unit too strong fails
// this where it is tight.
TEST(LayoutPlateau, BoundsHoldAndAreTightWhereExact) {
  const uint64_t seed = RunSeed();
  std::cout << "CHUNKPLAN_PLATEAU_SEED=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 150; ++round) {
    const RandomLayout r = MakeRandomLayout(rng);
    const ObjectiveProblem& p = r.layout;
    const CandidateGrid& grid = r.sweep.grid;
    const bool unit_degrees = std::all_of(p.degrees.begin(), p.degrees.end(),
                                          [](uint32_t d) { return d == 1; });
    std::vector<LayoutValues> values(grid.count);
    std::vector<std::vector<uint64_t>> keys(grid.count);
    for (uint64_t i = 0; i < grid.count; ++i) {
      values[i] = p.At(grid.At(i));
      keys[i] = PlateauKey(p, p.Rounded(grid.At(i)));
    }
    for (const Objective o :
         {Objective::kLayoutPadding, Objective::kPeakRankBytes}) {
      const SweepTask task{&r.sweep, &p, o, Want::kFrontier};
      // From the end: the plateau's end and its least value from i on.
      uint64_t end = grid.count;
      uint64_t least = UINT64_MAX;
      for (uint64_t i = grid.count; i-- > 0;) {
        if (i + 1 < grid.count && keys[i] != keys[i + 1]) {
          end = i + 1;
          least = UINT64_MAX;
        }
        const uint64_t value = ObjectiveValue(o, 0, values[i]);
        least = std::min(least, value);
        const uint64_t bound = LayoutLowerBound(task, i, end);
        ASSERT_LE(bound, least)
            << "seed " << seed << " round " << round << " objective "
            << ObjectiveName(o) << " candidate " << i;
        if (o == Objective::kLayoutPadding || unit_degrees) {
          ASSERT_EQ(bound, value)
              << "seed " << seed << " round " << round << " objective "
              << ObjectiveName(o) << " candidate " << i;
        }
      }
    }
  }
}

// A frontier held to max_points: the sweep's when it is that short, else
// longer than max_points, as the sweep's.
TEST(LayoutPlateau, KeepsTheFirstPointsOfALongFrontier) {
  const uint64_t seed = RunSeed();
  std::cout << "CHUNKPLAN_PLATEAU_SEED=" << seed << "\n";
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 150; ++round) {
    const RandomLayout r = MakeRandomLayout(rng);
    for (const Objective o :
         {Objective::kLayoutPadding, Objective::kPeakRankBytes}) {
      const SweepTask task{&r.sweep, &r.layout, o, Want::kFrontier, 2};
      ExpectSameAnswer(task, "seed " + std::to_string(seed) + " round " +
                                 std::to_string(round) + ": ");
      if (HasFatalFailure()) return;
    }
  }
}

// LLaMA-2 70B's layout over the stress grid (8,388,609 candidates): within
// the default limit, its plateau search within the bound, and far below
// CPU_SWEEP's work.
TEST(LayoutPlateau, TheStressGridIsWithinTheDefaultLimit) {
  LayoutRequest request;
  request.search = problems::Llama2_70bLikeRequest();
  request.search.dp_degrees = {8};
  const absl::StatusOr<SearchPlan> plan = BuildSearchPlan(request.search);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const ObjectiveProblem layout = BuildObjectiveProblem(request, *plan);
  for (const Objective o :
       {Objective::kLayoutPadding, Objective::kPeakRankBytes}) {
    const SweepTask task{&plan->sweep, &layout, o, Want::kFrontier};
    const LayoutPlateauWork bound = BoundLayoutPlateauWork(task);
    EXPECT_LT(bound.steps, kDefaultMaxPlateauWork);
    LayoutWalkTally tally;
    const absl::StatusOr<SweepOutcome> got =
        WalkLayoutPlateaus(task, kDefaultMaxPlateauWork, StopCheck(), &tally);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_FALSE(tally.swept);
    EXPECT_LE(tally.search_evaluations, bound.evaluations);
    EXPECT_LT(tally.steps, layout.LayoutWork(plan->sweep.grid) / 100);
    std::cout << ObjectiveName(o) << ": " << tally.search_evaluations
              << " search layouts, " << tally.value_evaluations
              << " valued, bound " << bound.evaluations << "\n";
  }
}

// Beyond --max_plateau_work: refused before the walk where its bound is
// above the limit, and stopped where the layouts it counts pass it.
TEST(LayoutPlateau, RefusesWorkAboveItsLimit) {
  ObjectiveProblem layout = problems::ManyBreakpointsLayout();
  SweepProblem sweep;
  sweep.grid = {.start = 1, .interval = 1, .count = uint64_t{1} << 20};
  const SweepTask task{&sweep, &layout, Objective::kPeakRankBytes,
                       Want::kFrontier};
  const LayoutPlateauWork bound = BoundLayoutPlateauWork(task);
  const absl::StatusOr<SweepOutcome> refused =
      CpuPlateauEngine(bound.steps - 1).Run(task, StopCheck());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("--max_plateau_work"),
            std::string::npos);
  const absl::StatusOr<SweepOutcome> stopped =
      WalkLayoutPlateaus(task, 100 * 1025, StopCheck(), nullptr);
  EXPECT_EQ(stopped.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(stopped.status().message().find("--max_plateau_work"),
            std::string::npos);
}

}  // namespace
}  // namespace chunkplan::planner
