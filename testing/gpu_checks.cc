#include "testing/gpu_checks.h"

#include <random>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "server/planner/engines/cpu_plateau_engine.h"
#include "server/planner/engines/cuda_engine.h"
#include "testing/model_shapes.h"
#include "testing/test_problems.h"

namespace chunkplan::testing {
namespace {

using planner::SweepOutcome;
using planner::SweepProblem;

// The disagreements found so far, one line each.
class Findings {
 public:
  // Sweeps `p` with every engine and notes each answer that is not `want`.
  void Compare(absl::string_view what, std::span<const NamedEngine> engines,
               const SweepProblem& p, const SweepOutcome& want) {
    for (const NamedEngine& e : engines) {
      const absl::StatusOr<SweepOutcome> got = e.engine->Sweep(p, {});
      if (!got.ok()) {
        Note(what, e.name, got.status().ToString(), want);
      } else if (got->best_index != want.best_index ||
                 got->chunk_size != want.chunk_size ||
                 got->waste != want.waste) {
        Note(what, e.name,
             absl::StrCat("index ", got->best_index, " chunk ", got->chunk_size,
                          " waste ", got->waste),
             want);
      }
    }
  }

  // CPU_PLATEAU's answer to `p`, the expected one; its own failure is noted
  // (and returned).
  absl::StatusOr<SweepOutcome> Plateau(absl::string_view what,
                                       const SweepProblem& p) {
    absl::StatusOr<SweepOutcome> got = planner::CpuPlateauEngine().Sweep(p, {});
    if (!got.ok()) {
      absl::StrAppend(&text_, what, ": CPU_PLATEAU: ", got.status().ToString(),
                      "\n");
    }
    return got;
  }

  absl::Status Result() const {
    if (text_.empty()) return absl::OkStatus();
    return absl::InternalError(text_);
  }

 private:
  void Note(absl::string_view what, absl::string_view engine,
            absl::string_view got, const SweepOutcome& want) {
    absl::StrAppend(&text_, what, ": ", engine, " answered ", got,
                    "; want index ", want.best_index, " chunk ",
                    want.chunk_size, " waste ", want.waste, "\n");
  }

  std::string text_;
};

// Every engine's answer to `p` against its known best index, where the
// least waste is 0.
absl::Status HasKnownAnswer(absl::string_view what,
                            std::span<const NamedEngine> engines,
                            const SweepProblem& p, uint64_t best_index) {
  Findings findings;
  findings.Compare(what, engines, p,
                   SweepOutcome{best_index, p.grid.At(best_index), 0});
  return findings.Result();
}

}  // namespace

absl::Status AgreesOnRandomProblems(std::span<const NamedEngine> engines,
                                    uint64_t seed, int rounds) {
  Findings findings;
  std::mt19937_64 rng(seed);
  for (int round = 0; round < rounds; ++round) {
    const SweepProblem p =
        planner::problems::RandomSweepProblem(rng, 3000, 5000);
    const std::string what =
        absl::StrCat("random problem ", round, " (seed ", seed, ")");
    const absl::StatusOr<SweepOutcome> want = findings.Plateau(what, p);
    if (want.ok()) findings.Compare(what, engines, p, *want);
  }
  return findings.Result();
}

absl::Status AgreesOnOverAMillionCandidates(
    std::span<const NamedEngine> engines, uint64_t seed) {
  Findings findings;
  std::mt19937_64 rng(seed);
  SweepProblem p = planner::problems::RandomSweepProblem(rng, 400, 1);
  p.grid.count = 1'200'000;
  const std::string what = absl::StrCat("1.2M candidates (seed ", seed, ")");
  const absl::StatusOr<SweepOutcome> want = findings.Plateau(what, p);
  if (want.ok()) findings.Compare(what, engines, p, *want);
  return findings.Result();
}

absl::Status TiesGoToTheFirstCandidate(std::span<const NamedEngine> engines) {
  return HasKnownAnswer("tied problem", engines,
                        planner::problems::TiedProblem(),
                        planner::problems::kTiedProblemBestIndex);
}

absl::Status FindsIndicesBeyond32Bits(std::span<const NamedEngine> engines) {
  return HasKnownAnswer("beyond 2**31 candidates", engines,
                        planner::problems::BeyondInt32Problem(),
                        planner::problems::kBeyondInt32BestIndex);
}

absl::Status AsksTheStopCheckBetweenSlices(
    const planner::SweepEngine& one_grid_slices) {
  const SweepProblem p = planner::problems::TiedProblem();
  int calls = 0;
  const planner::StopCheck stop = [&calls]() -> absl::Status {
    return ++calls < 2 ? absl::OkStatus()
                       : absl::DeadlineExceededError("deadline passed");
  };
  const absl::StatusOr<SweepOutcome> got = one_grid_slices.Sweep(p, stop);
  if (got.status().code() != absl::StatusCode::kDeadlineExceeded ||
      calls != 2 || planner::IsCudaFailure(got.status())) {
    return absl::InternalError(absl::StrCat(
        "stop check between slices: answered ",
        got.ok() ? "OK" : got.status().ToString(), " after ", calls,
        " stop-check calls; want DEADLINE_EXCEEDED (not a CUDA failure) "
        "after 2"));
  }
  return absl::OkStatus();
}

absl::Status FrontiersAgreeWithCpuSweep(const planner::Planner& cuda,
                                        uint64_t seed, int rounds) {
  using planner::Engine;
  using planner::LayoutRequest;
  using planner::Objective;
  std::mt19937_64 rng(seed);
  std::vector<LayoutRequest> requests;
  for (int r = 0; r < rounds; ++r) {
    LayoutRequest q;
    const size_t n = 1 + rng() % 300;
    const uint32_t degrees[] = {1, 2, 4, 8};
    const int kinds = 1 + static_cast<int>(rng() % 3);
    for (size_t i = 0; i < n; ++i) {
      q.search.numels.push_back(rng() % 4 == 0 ? rng() % 100
                                               : 1 + rng() % (4 << 20));
      q.search.dp_degrees.push_back(degrees[rng() % kinds]);
      q.frozen.push_back(rng() % 10 == 0);
    }
    q.search.search_range_m = rng() % 2;
    q.search.min_chunk_size_m = 0;
    q.search.search_interval = 1 + rng() % 64;
    requests.push_back(std::move(q));
  }
  LayoutRequest llama;  // LLaMA-2 70B's parameter shapes, dp 8
  llama.search.numels = Llama2_70bNumels();
  llama.search.dp_degrees = {8};
  llama.search.search_range_m = 128;
  llama.search.search_interval = 128;
  requests.push_back(std::move(llama));

  std::string findings;
  int compared = 0;
  for (size_t k = 0; k < requests.size(); ++k) {
    for (const Objective objective :
         {Objective::kLayoutPadding, Objective::kPeakRankBytes}) {
      LayoutRequest q = requests[k];
      q.objective = objective;
      q.search.engine = Engine::kCpuSweep;
      const auto want = cuda.Frontier(q);
      q.search.engine = Engine::kCuda;
      const auto got = cuda.Frontier(q);
      const std::string what =
          absl::StrCat("request ", k, " (", q.search.numels.size(),
                       " parameters) objective ", static_cast<int>(objective));
      if (!want.ok() || !got.ok()) {
        if (want.status() != got.status()) {
          absl::StrAppend(&findings, what, ": CUDA ", got.status().ToString(),
                          ", CPU_SWEEP ", want.status().ToString(), "\n");
        }
        continue;
      }
      ++compared;
      if (got->engine != Engine::kCuda) {
        absl::StrAppend(&findings, what, ": answered by engine ",
                        static_cast<int>(got->engine), "\n");
      } else if (got->points != want->points) {
        absl::StrAppend(&findings, what, ": CUDA ", got->points.size(),
                        " points, CPU_SWEEP ", want->points.size(),
                        " (or a point differs)\n");
      }
    }
  }
  if (compared == 0) findings += "no frontier was compared\n";
  if (findings.empty()) return absl::OkStatus();
  return absl::InternalError(findings);
}

}  // namespace chunkplan::testing
