// The engines: the shared next-fit function against the seed's definition
// worked by hand, the tie rule, and CPU_SWEEP and CPU_PLATEAU against each
// other on random problems (the oracle comparison is the differential test's).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/worker_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/planner/candidate/argmin.h"
#include "server/planner/candidate/next_fit.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cpu_sweep_engine.h"
#include "server/planner/engines/engine_choice.h"
#include "server/planner/engines/plateau_work.h"
#include "server/planner/engines/repeated_blocks.h"
#include "server/planner/request/checked_math.h"
#include "server/planner/request/search_plan.h"
#include "testing/test_problems.h"

namespace chunkplan::planner {
namespace {

TEST(NextFitWaste, SeedsUnusedBytes) {
  // _get_unused_byte([3, 4, 2, 5], 6): chunks [3] (3 left), [4, 2] (0),
  // [5] (1) -> 3 + 0 + 1 = 4.
  const uint64_t sizes[] = {3, 4, 2, 5};
  EXPECT_EQ(NextFitWaste(sizes, 4, 6), 4u);
  // Nothing placed: nothing wasted.
  EXPECT_EQ(NextFitWaste(sizes, 0, 6), 0u);
  // Zeros never open a chunk; a zero after a full chunk stays in it.
  const uint64_t zeros[] = {0, 0, 6, 0, 1};
  EXPECT_EQ(NextFitWaste(zeros, 5, 6), 5u);
  const uint64_t only_zeros[] = {0, 0};
  EXPECT_EQ(NextFitWaste(only_zeros, 2, 0), 0u);
}

TEST(ArgminPrecedes, TiesGoToTheSmallerCandidate) {
  EXPECT_TRUE(ArgminPrecedes(5, 9, 6, 1));
  EXPECT_FALSE(ArgminPrecedes(6, 1, 5, 9));
  EXPECT_TRUE(ArgminPrecedes(5, 3, 5, 4));
  EXPECT_FALSE(ArgminPrecedes(5, 4, 5, 3));
  EXPECT_FALSE(ArgminPrecedes(5, 4, 5, 4));
}

// The ranges of RandomProblem: 1 to `groups` groups of 0 to `sizes` - 1
// sizes, each 0 one time in zero_in or else 1 to max_size; an interval of 1
// to `interval`, 1 to `count` candidates.
struct ProblemRanges {
  int groups = 3;
  int sizes = 40;
  int zero_in = 4;
  uint64_t max_size = 5000;
  uint64_t interval = 64;
  uint64_t count = 3000;
};

// A random problem that honours SweepProblem's invariants.
SweepProblem RandomProblem(std::mt19937_64& rng, const ProblemRanges& r = {}) {
  SweepProblem p;
  const int groups = 1 + rng() % r.groups;
  uint64_t max_size = 0;
  for (int g = 0; g < groups; ++g) {
    const int n = rng() % r.sizes;
    for (int i = 0; i < n; ++i) {
      const uint64_t s = rng() % r.zero_in == 0 ? 0 : 1 + rng() % r.max_size;
      p.sizes.push_back(s);
      p.swept_total += s;
      max_size = std::max(max_size, s);
    }
    p.group_begin.push_back(p.sizes.size());
  }
  p.grid.interval = 1 + rng() % r.interval;
  CheckedRoundUp(max_size, p.grid.interval, &p.grid.start);  // sizes < 2^20
  p.grid.count = 1 + rng() % r.count;
  return p;
}

// The seed's loop, literally: first strict minimum.
SweepOutcome Reference(const SweepProblem& p) {
  SweepOutcome best{0, p.grid.At(0), UINT64_MAX};
  for (uint64_t i = 0; i < p.grid.count; ++i) {
    const uint64_t w = TotalWasteAt(p, p.grid.At(i));
    if (w < best.waste) best = {i, p.grid.At(i), w};
  }
  return best;
}

TEST(Engines, AgreeWithTheSeedsLoopOnRandomProblems) {
  std::mt19937_64 rng(20261202);
  common::WorkerPool pool(3);
  const CpuSweepEngine sweep(CpuSweepOptions{.max_work = UINT64_MAX}, &pool);
  const CpuPlateauEngine plateau;
  for (int round = 0; round < 400; ++round) {
    const SweepProblem p = RandomProblem(rng);
    const SweepOutcome want = Reference(p);
    for (const SweepEngine* e : {static_cast<const SweepEngine*>(&sweep),
                                 static_cast<const SweepEngine*>(&plateau)}) {
      // CPU_SWEEP's frontier needs the layout's problem: kBest alone.
      for (const Want asked : {Want::kBest, Want::kFrontier}) {
        if (asked == Want::kFrontier && e == &sweep) continue;
        const auto got =
            e->Run({&p, nullptr, Objective::kSeedWaste, asked}, {});
        ASSERT_TRUE(got.ok()) << got.status();
        EXPECT_EQ(got->best_index, want.best_index)
            << EngineName(e->kind()) << " round " << round;
        EXPECT_EQ(got->chunk_size, want.chunk_size);
        EXPECT_EQ(got->waste, want.waste);
      }
    }
  }
}

// On tiny problems, where a later candidate often ties with the answer
// (and the earlier one must win), the walk's answer is the seed's loop's.
TEST(CpuPlateauEngine, KeepsTheFirstOfTiedCandidates) {
  std::mt19937_64 rng(20261204);
  const CpuPlateauEngine plateau;
  int ties = 0;  // problems with a later candidate of the least waste
  for (int round = 0; round < 20000; ++round) {
    const SweepProblem p = RandomProblem(rng, {.groups = 2,
                                               .sizes = 6,
                                               .zero_in = 5,
                                               .max_size = 9,
                                               .interval = 4,
                                               .count = 24});
    const SweepOutcome want = Reference(p);
    const auto got = plateau.Sweep(p, {});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->best_index, want.best_index) << "round " << round;
    EXPECT_EQ(got->chunk_size, want.chunk_size);
    EXPECT_EQ(got->waste, want.waste);
    for (uint64_t i = want.best_index + 1; i < p.grid.count; ++i) {
      if (TotalWasteAt(p, p.grid.At(i)) == want.waste) {
        ++ties;
        break;
      }
    }
  }
  EXPECT_GT(ties, 500);
}

// One layer's sizes: 1 to max_parts parts, each 0 one time in zero_in or
// else 1-5000, repeated (a run) one time in run_in 1 to max_run times.
std::vector<uint64_t> LayerPattern(std::mt19937_64& rng, int max_parts,
                                   int zero_in, int run_in, int max_run) {
  std::vector<uint64_t> pattern;
  const int parts = 1 + rng() % max_parts;
  for (int k = 0; k < parts; ++k) {
    const uint64_t s = rng() % zero_in == 0 ? 0 : 1 + rng() % 5000;
    const int run = rng() % run_in == 0 ? 1 + rng() % max_run : 1;
    pattern.insert(pattern.end(), run, s);
  }
  return pattern;
}

// A problem shaped like a model: each group a layer pattern of sizes
// repeated, with runs of equal sizes (some of kLongRun and more, as a
// mixture-of-experts layer has) and zeros among them, so that the plateau
// engine takes its size-by-size walk, its run fill and its gallop; a grid
// that starts anywhere from the largest size up, so that chunks hold from
// one size to hundreds.
SweepProblem LayeredProblem(std::mt19937_64& rng) {
  SweepProblem p;
  const int groups = 1 + rng() % 3;
  uint64_t max_size = 0;
  for (int g = 0; g < groups; ++g) {
    const std::vector<uint64_t> pattern = LayerPattern(rng, 6, 8, 3, 60);
    const int layers = 1 + rng() % 12;
    for (int l = 0; l < layers; ++l) {
      for (uint64_t s : pattern) {
        p.sizes.push_back(s);
        p.swept_total += s;
        max_size = std::max(max_size, s);
      }
    }
    p.group_begin.push_back(p.sizes.size());
  }
  p.grid.interval = 1 + rng() % 64;
  const uint64_t scale = 1 + rng() % 100;
  const uint64_t start =
      std::max<uint64_t>(max_size, 1) * (rng() % 2 ? 1 : scale);
  CheckedRoundUp(start, p.grid.interval, &p.grid.start);  // sizes < 2^20
  p.grid.count = 1 + rng() % 3000;
  return p;
}

// The plateau engine's improvements on `p` are the seed's loop's, every
// strict improvement kept, in order; its answer is the last.
void ExpectTheSeedsWholeFrontier(const SweepProblem& p, int round) {
  std::vector<Improvement> want;
  uint64_t best = UINT64_MAX;
  for (uint64_t i = 0; i < p.grid.count; ++i) {
    const uint64_t w = TotalWasteAt(p, p.grid.At(i));
    if (w < best) {
      best = w;
      want.push_back({i, p.grid.At(i), w});
    }
  }
  const auto got = CpuPlateauEngine().Sweep(p, {});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->improvements.size(), want.size()) << "round " << round;
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got->improvements[k].index, want[k].index)
        << "round " << round << " improvement " << k;
    EXPECT_EQ(got->improvements[k].waste, want[k].waste);
  }
  EXPECT_EQ(got->best_index, want.back().index) << "round " << round;
  EXPECT_EQ(got->waste, want.back().waste);
}

TEST(CpuPlateauEngine, WalksRunsAndGallopsToTheSeedsWholeFrontier) {
  std::mt19937_64 rng(20261203);
  for (int round = 0; round < 600; ++round) {
    ExpectTheSeedsWholeFrontier(LayeredProblem(rng), round);
  }
}

// A problem shaped like a whole model, in one group or two: a few distinct
// sizes ahead (embeddings), many layers of one pattern (with runs and zeros
// at times) and a few behind (the head), over a grid from about one size a
// chunk to tens, so that the walk meets a cycle of blocks at once, late or
// never.
SweepProblem ModelProblem(std::mt19937_64& rng) {
  SweepProblem p;
  const int groups = 1 + rng() % 2;
  uint64_t max_size = 0;
  const auto add = [&p, &max_size](uint64_t s) {
    p.sizes.push_back(s);
    p.swept_total += s;
    max_size = std::max(max_size, s);
  };
  for (int g = 0; g < groups; ++g) {
    const int head = rng() % 4;
    for (int k = 0; k < head; ++k) add(100000 + rng() % 5000);
    const std::vector<uint64_t> pattern = LayerPattern(rng, 10, 10, 6, 40);
    const int layers = 4 + rng() % 60;
    for (int l = 0; l < layers; ++l) {
      for (uint64_t s : pattern) add(s);
    }
    const int tail = rng() % 4;
    for (int k = 0; k < tail; ++k) add(1 + rng() % 100000);
    p.group_begin.push_back(p.sizes.size());
  }
  p.grid.interval = 1 + rng() % 512;
  CheckedRoundUp(max_size, p.grid.interval, &p.grid.start);  // sizes < 2^20
  p.grid.count = 1 + rng() % 400;
  return p;
}

TEST(CpuPlateauEngine, CountsRepeatedLayersToTheSeedsWholeFrontier) {
  std::mt19937_64 rng(20261204);
  int with_blocks = 0;
  for (int round = 0; round < 400; ++round) {
    const SweepProblem p = ModelProblem(rng);
    with_blocks += FindRepeatedBlocks(p.group(0)).length != 0;
    ExpectTheSeedsWholeFrontier(p, round);
  }
  // Most of them repeat (the test is of the multiplication, not the walk).
  EXPECT_GT(with_blocks, 300);
}

TEST(Engines, EmptyProblemTakesTheFirstCandidate) {
  SweepProblem p;
  p.group_begin = {0, 0};  // one group, emptied by the filter
  p.grid = {.start = 64, .interval = 8, .count = 100};
  for (const auto& e :
       {CpuSweepEngine().Sweep(p, {}), CpuPlateauEngine().Sweep(p, {})}) {
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->best_index, 0u);
    EXPECT_EQ(e->chunk_size, 64u);
    EXPECT_EQ(e->waste, 0u);
  }
}

TEST(CpuSweepEngine, RefusesWorkAboveItsLimit) {
  SweepProblem p;
  p.sizes = {10, 20, 30};
  p.group_begin = {0, 3};
  p.grid = {.start = 32, .interval = 1, .count = 1000};
  const auto got =
      CpuSweepEngine(CpuSweepOptions{.max_work = 2999}).Sweep(p, {});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(
      CpuSweepEngine(CpuSweepOptions{.max_work = 3000}).Sweep(p, {}).ok());
}

// Finding 2 of the hardening issue: with nothing swept, candidates x sizes
// was 0, so the limit let CPU_SWEEP walk up to 2^62 candidates.
TEST(CpuSweepEngine, CountsACandidateWithNothingToPlaceAsOneStep) {
  SweepProblem p;
  p.group_begin = {0};  // every group kept gathered: no group is swept
  p.grid = {.start = 32, .interval = 1, .count = uint64_t{1} << 62};
  EXPECT_EQ(p.SweepWork(), uint64_t{1} << 62);
  const auto got =
      CpuSweepEngine(CpuSweepOptions{.max_work = 1000}).Sweep(p, {});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted)
      << got.status();
  EXPECT_THAT(std::string(got.status().message()),
              ::testing::HasSubstr("--max_sweep_work"));
  p.grid.count = 1000;
  const auto small =
      CpuSweepEngine(CpuSweepOptions{.max_work = 1000}).Sweep(p, {});
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->best_index, 0u);
}

TEST(CpuSweepEngine, SharesOnePoolBetweenConcurrentSweeps) {
  // Four sweeps at once on a pool of two threads: each caller takes part,
  // so all finish and agree with the seed's loop.
  std::mt19937_64 rng(7);
  const SweepProblem p = RandomProblem(rng);
  const SweepOutcome want = Reference(p);
  common::WorkerPool pool(2);
  const CpuSweepEngine sweep(CpuSweepOptions{.max_work = UINT64_MAX}, &pool);
  std::vector<std::thread> callers;
  std::vector<absl::StatusOr<SweepOutcome>> got(4);
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] { got[t] = sweep.Sweep(p, {}); });
  }
  for (std::thread& c : callers) c.join();
  for (const auto& g : got) {
    ASSERT_TRUE(g.ok()) << g.status();
    EXPECT_EQ(g->best_index, want.best_index);
    EXPECT_EQ(g->waste, want.waste);
  }
}

TEST(Engines, EndWithTheStopChecksStatus) {
  SweepProblem p;
  for (int i = 0; i < 2000; ++i) p.sizes.push_back(1000 + i % 997);
  p.group_begin = {0, p.sizes.size()};
  for (uint64_t s : p.sizes) p.swept_total += s;
  p.grid = {.start = 2000, .interval = 1, .count = 200000};
  const StopCheck stop = [] {
    return absl::DeadlineExceededError("deadline passed");
  };
  const auto swept =
      CpuSweepEngine(CpuSweepOptions{.max_work = UINT64_MAX}).Sweep(p, stop);
  EXPECT_EQ(swept.status().code(), absl::StatusCode::kDeadlineExceeded);
  const auto jumped = CpuPlateauEngine().Sweep(p, stop);
  EXPECT_EQ(jumped.status().code(), absl::StatusCode::kDeadlineExceeded);
}

// The walk's own tally on `p` never passes the parts of BoundPlateauWork (the
// steps are evaluations x (sizes + chunks) by the walk's construction). Returns
// the largest share of a part reached, so that callers can ask the bound to be
// nearly reached.
double ExpectWithinTheWorkBound(const SweepProblem& p,
                                const std::string& what) {
  const PlateauWork bound = BoundPlateauWork(p);
  PlateauWalkTally tally;
  const auto got = WalkPlateaus(p, {}, &tally);
  EXPECT_TRUE(got.ok()) << got.status();
  EXPECT_LE(tally.evaluations, bound.evaluations) << what;
  EXPECT_LE(tally.max_chunks, bound.max_chunks) << what;
  EXPECT_LE(tally.searches, bound.plateaus) << what;
  return std::max(static_cast<double>(tally.max_chunks) /
                      std::max<uint64_t>(1, bound.max_chunks),
                  static_cast<double>(tally.searches) / bound.plateaus);
}

TEST(PlateauWork, BoundsTheWalkOnRandomAndModelShapedProblems) {
  std::mt19937_64 rng(20261205);
  double reached = 0;
  for (int round = 0; round < 300; ++round) {
    const std::string at = "round " + std::to_string(round);
    reached = std::max(
        reached, ExpectWithinTheWorkBound(RandomProblem(rng), "random " + at));
    ExpectWithinTheWorkBound(LayeredProblem(rng), "layered " + at);
    ExpectWithinTheWorkBound(ModelProblem(rng), "model " + at);
    // Tiny grids walked to their end: the count may drop at every candidate.
    reached = std::max(
        reached, ExpectWithinTheWorkBound(RandomProblem(rng, {.groups = 2,
                                                              .sizes = 8,
                                                              .zero_in = 5,
                                                              .max_size = 16,
                                                              .interval = 2,
                                                              .count = 40}),
                                          "tiny " + at));
  }
  // Some problem reaches a part of the bound exactly: it is no looser than
  // it must be there.
  EXPECT_EQ(reached, 1.0);
  const absl::StatusOr<SearchPlan> llama =
      BuildSearchPlan(problems::Llama2_70bLikeRequest());
  ASSERT_TRUE(llama.ok()) << llama.status();
  ExpectWithinTheWorkBound(llama->sweep, "LLaMA-2-70B-like");
}

// Next-fit's worst case: sizes just over half a chunk open one chunk each,
// 2 ceil(S / C) - 1 of them.
TEST(PlateauWork, ChunksReachTwiceTheSumOverTheChunkSize) {
  SweepProblem p;
  problems::AddGroup(p, std::vector<uint64_t>(9, 51));
  p.grid = {.start = 100, .interval = 1, .count = 1};
  // S = 459, ceil(459 / 100) = 5: at most 9 chunks, and next-fit opens 9.
  EXPECT_EQ(BoundPlateauWork(p).max_chunks, 9u);
  PlateauWalkTally tally;
  ASSERT_TRUE(WalkPlateaus(p, {}, &tally).ok());
  EXPECT_EQ(tally.max_chunks, 9u);
}

// The bound's parts worked by hand from plateau_work.cc's proof, on 9 sizes
// of 51 over candidates 100 to 1099: 9 chunks at most, ceil(459 / 1099) = 1
// at least, so 8 plateaus to find plus one search that finds none; L =
// ceil(log2(ceil(1000 / 8))) = 7, B = ceil(log2(1000)) = 10; evaluations 8
// x (2 x 7 + 4) + 10 + 2 = 156, each of at most 9 sizes + 9 chunks.
TEST(PlateauWork, PartsOfAWorkedExample) {
  SweepProblem p;
  problems::AddGroup(p, std::vector<uint64_t>(9, 51));
  p.grid = {.start = 100, .interval = 1, .count = 1000};
  const PlateauWork work = BoundPlateauWork(p);
  EXPECT_EQ(work.max_chunks, 9u);
  EXPECT_EQ(work.plateaus, 9u);
  EXPECT_EQ(work.evaluations, 156u);
  EXPECT_EQ(work.steps, 156u * 18);
}

// Finding 6 of the hostile-traffic issue: 100,000 sizes at interval 1 from
// a start of 1000 ran for seconds to hours. The limit refuses it before any
// evaluation; a limit at the bound admits it.
TEST(CpuPlateauEngine, RefusesWorkAboveItsLimit) {
  std::mt19937_64 rng(11);
  std::vector<uint64_t> sizes(100000);
  for (uint64_t& s : sizes) s = 1 + rng() % 1000;
  SweepProblem p;
  problems::AddGroup(p, sizes);
  p.grid = {.start = 1000, .interval = 1, .count = 200 << 20};
  const PlateauWork work = BoundPlateauWork(p);
  EXPECT_GT(work.steps, kDefaultMaxPlateauWork);
  const auto got = CpuPlateauEngine().Sweep(p, {});
  EXPECT_EQ(got.status().code(), absl::StatusCode::kResourceExhausted)
      << got.status();
  EXPECT_THAT(std::string(got.status().message()),
              ::testing::HasSubstr("--max_plateau_work"));
  // At the bound it runs (here until the stop check ends it).
  int checks = 0;
  const StopCheck stop = [&checks] {
    return ++checks < 3 ? absl::OkStatus()
                        : absl::DeadlineExceededError("enough");
  };
  EXPECT_EQ(CpuPlateauEngine(work.steps).Sweep(p, stop).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(CpuPlateauEngine(work.steps - 1).Sweep(p, stop).status().code(),
            absl::StatusCode::kResourceExhausted);
}

// The default admits the stress sweep (LLaMA-2 70B, 8,388,609 candidates).
TEST(CpuPlateauEngine, DefaultLimitAdmitsTheStressSweep) {
  const absl::StatusOr<SearchPlan> plan =
      BuildSearchPlan(problems::Llama2_70bLikeRequest());
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_LT(BoundPlateauWork(plan->sweep).steps, kDefaultMaxPlateauWork / 16);
  EXPECT_TRUE(CpuPlateauEngine().Sweep(plan->sweep, {}).ok());
}

// What each engine serves, said in one place whether or not the engine is
// built in (the messages are the ones clients see).
TEST(EngineServes, RefusesWhatAnEngineHasNoMethodFor) {
  for (const Engine e :
       {Engine::kAuto, Engine::kCpuSweep, Engine::kCpuPlateau, Engine::kCuda}) {
    EXPECT_TRUE(EngineServes(e, Objective::kSeedWaste, Want::kBest).ok());
  }
  for (const Objective o :
       {Objective::kLayoutPadding, Objective::kPeakRankBytes}) {
    for (const Want w : {Want::kBest, Want::kFrontier}) {
      EXPECT_TRUE(EngineServes(Engine::kAuto, o, w).ok());
      EXPECT_TRUE(EngineServes(Engine::kCpuSweep, o, w).ok());
      EXPECT_TRUE(EngineServes(Engine::kCuda, o, w).ok());
      EXPECT_TRUE(EngineServes(Engine::kCpuPlateau, o, w).ok());
    }
  }
  const absl::Status cuda =
      EngineServes(Engine::kCuda, Objective::kSeedWaste, Want::kFrontier);
  EXPECT_THAT(
      std::string(cuda.message()),
      ::testing::HasSubstr("search.engine: CUDA serves the layout objectives"));
  for (const Objective o : {Objective::kSeedWaste, Objective::kLayoutPadding,
                            Objective::kPeakRankBytes}) {
    EXPECT_EQ(CpuEngineFor(SweepTask{nullptr, nullptr, o, Want::kFrontier}),
              Engine::kCpuPlateau);
  }
}

// The peak objective under a placement that moves chunks by their size
// (ObjectiveProblem::placed): CPU_SWEEP alone lays out and places every
// candidate, AUTO picks it without asking the device, and the other engines
// are refused naming the field; the other objectives under that placement
// are served as before.
TEST(EngineServes, ThePlacedPeakIsCpuSweepsAlone) {
  int asked = 0;
  const auto usable = [&asked] {
    ++asked;
    return true;
  };
  const LayoutRequest request;  // only its address is read here
  ObjectiveProblem layout = problems::ManyBreakpointsLayout();
  layout.placed = &request;
  SweepProblem sweep;
  // Large enough that AUTO would take CUDA for an objective it serves.
  sweep.grid = {.start = 1, .interval = 1, .count = uint64_t{1} << 20};
  SweepTask task{&sweep, &layout, Objective::kPeakRankBytes, Want::kFrontier};
  ASSERT_TRUE(task.placed_peak());
  EXPECT_TRUE(EngineServes(Engine::kAuto, task).ok());
  EXPECT_TRUE(EngineServes(Engine::kCpuSweep, task).ok());
  for (const Engine e : {Engine::kCpuPlateau, Engine::kCuda}) {
    const absl::Status refused = EngineServes(e, task);
    EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(refused.message()),
                ::testing::StartsWith("search.engine: "));
    EXPECT_THAT(std::string(refused.message()),
                ::testing::HasSubstr("CPU_SWEEP"));
  }
  EXPECT_EQ(CpuEngineFor(task), Engine::kCpuSweep);
  EXPECT_EQ(PickEngine(Engine::kAuto, task, UINT64_MAX, usable),
            Engine::kCpuSweep);
  EXPECT_EQ(asked, 0);
  // The same problem's padding: CUDA serves it and AUTO asks the device.
  task.objective = Objective::kLayoutPadding;
  EXPECT_FALSE(task.placed_peak());
  EXPECT_TRUE(EngineServes(Engine::kCpuPlateau, task).ok());
  EXPECT_EQ(CpuEngineFor(task), Engine::kCpuPlateau);
  EXPECT_EQ(PickEngine(Engine::kAuto, task, UINT64_MAX, usable), Engine::kCuda);
  EXPECT_EQ(asked, 1);
}

// AUTO's pick: CUDA only for a task it serves, worth a launch and within
// its limit, and the device is asked last; a named engine is taken as named.
TEST(PickEngine, AsksTheDeviceOnlyForATaskWorthIt) {
  int asked = 0;
  const auto usable = [&asked] {
    ++asked;
    return true;
  };
  // A layout objective: candidates x placed parameters against kCudaMinWork,
  // then CUDA's estimate against CPU_PLATEAU's. 1024 distinct sizes inside
  // the grid's span (each a breakpoint of the walk) make its bound long.
  ObjectiveProblem layout = problems::ManyBreakpointsLayout();
  SweepProblem sweep;
  sweep.grid = {.start = 1, .interval = 1, .count = (uint64_t{1} << 20) - 1};
  SweepTask task{&sweep, &layout, Objective::kPeakRankBytes, Want::kFrontier};
  EXPECT_EQ(PickEngine(Engine::kAuto, task, UINT64_MAX, usable),
            Engine::kCpuPlateau);
  EXPECT_EQ(asked, 0);  // below kCudaMinWork: the device is not touched
  sweep.grid.count = uint64_t{1} << 20;
  EXPECT_EQ(PickEngine(Engine::kAuto, task, UINT64_MAX, usable), Engine::kCuda);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(PickEngine(Engine::kAuto, task, kCudaMinWork - 1, usable),
            Engine::kCpuPlateau);  // beyond --max_cuda_work
  EXPECT_EQ(PickEngine(Engine::kAuto, task, UINT64_MAX, [] { return false; }),
            Engine::kCpuPlateau);
  // One breakpoint-free stretch: the walk's bound is short, CPU_PLATEAU
  // is kept without asking the device.
  for (PlacedTensor& t : layout.tensors) t = Placed(0, 1);
  EXPECT_EQ(PickEngine(Engine::kAuto, task, UINT64_MAX, usable),
            Engine::kCpuPlateau);
  EXPECT_EQ(asked, 1);
  // The seed's frontier: CUDA does not serve it, however large.
  task.objective = Objective::kSeedWaste;
  EXPECT_EQ(PickEngine(Engine::kAuto, task, UINT64_MAX, usable),
            Engine::kCpuPlateau);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(PickEngine(Engine::kCpuSweep, task, UINT64_MAX, usable),
            Engine::kCpuSweep);
}

}  // namespace
}  // namespace chunkplan::planner
