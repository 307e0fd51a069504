#ifndef CHUNKPLAN_TESTING_GPU_CHECKS_H_
#define CHUNKPLAN_TESTING_GPU_CHECKS_H_

// The GPU checks, written once: each compares sweep engines (the CUDA
// engine in its slicings, and CPU_SWEEP where the caller adds it) with
// CPU_PLATEAU or with a known answer. tests/planner/cuda_engine_test.cc runs
// them as gtests (skipped without a device) and bench/gpu_check.cc runs them
// on the GPU machine, which has no GoogleTest. Plain C++: the engines come
// in as SweepEngine pointers, so nothing here needs the CUDA runtime.

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "chunkplan/planner/planner.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::testing {

// An engine under test and the name messages give it.
struct NamedEngine {
  std::string name;
  const planner::SweepEngine* engine;  // not owned
};

// Each check below answers OK when every engine of `engines` gives the
// expected outcome, else INTERNAL listing every disagreement (the problem,
// the engine, its answer or error, and the expected one).

// `rounds` fresh random problems (up to 3000 sizes, 5000 candidates) drawn
// from `seed`, each against CPU_PLATEAU.
absl::Status AgreesOnRandomProblems(std::span<const NamedEngine> engines,
                                    uint64_t seed, int rounds);

// A random problem of 400 sizes over 1.2M candidates (more than one slice
// and more candidates than one grid of resident blocks), against
// CPU_PLATEAU.
absl::Status AgreesOnOverAMillionCandidates(
    std::span<const NamedEngine> engines, uint64_t seed);

// A grid whose least waste is reached by many candidates across blocks and
// slices: the first one must win (problems::TiedProblem).
absl::Status TiesGoToTheFirstCandidate(std::span<const NamedEngine> engines);

// A grid of 2**31 + 1007 candidates whose best index is beyond 32 bits
// (problems::BeyondInt32Problem). CPU_SWEEP takes minutes here: pass the
// CUDA engines (and CPU_PLATEAU) only.
absl::Status FindsIndicesBeyond32Bits(std::span<const NamedEngine> engines);

// `one_grid_slices`, an engine that sweeps in many slices (the CUDA engine
// with steps_per_slice 1), asked with a StopCheck that stops on its second
// call: DEADLINE_EXCEEDED after exactly two calls, not marked as a CUDA
// failure.
absl::Status AsksTheStopCheckBetweenSlices(
    const planner::SweepEngine& one_grid_slices);

// `rounds` fresh random LayoutRequests (1 to 3 degrees, frozen parameters,
// up to 300 parameters, up to 2^20 + 1 candidates) drawn from `seed`, and a
// LLaMA-2 70B-shaped one (723 parameters, 1,048,577 candidates): the
// frontier of each layout objective from `cuda` (a Planner whose CUDA engine
// is asked by name) equals the frontier of the same Planner's CPU_SWEEP.
absl::Status FrontiersAgreeWithCpuSweep(const planner::Planner& cuda,
                                        uint64_t seed, int rounds);

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTING_GPU_CHECKS_H_
