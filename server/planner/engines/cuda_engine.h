#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CUDA_ENGINE_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CUDA_ENGINE_H_

// CUDA: one GPU thread per candidate chunk size. Plain C++ types only: this
// header never includes the CUDA runtime, and builds without it. The
// definitions live in cuda_engine.cu and cuda_status.cu, which are compiled
// only where CMake found nvcc (CHUNKPLAN_HAVE_CUDA_ENGINE), with the
// interface's Run in cuda_engine.cc; IsCudaFailure is usable everywhere.

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/engine_options.h"
#include "server/planner/candidate/layout_measures.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::planner {

// The GPU the engine runs on (device 0).
struct CudaDeviceInfo {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  int clock_khz = 0;               // peak SM clock
  int resident_blocks = 0;         // sweep kernel blocks resident at once
  int threads_per_block = 0;       // the sweep kernel's block size
  int layout_resident_blocks = 0;  // the layout kernel's, at once
  bool memory_pools = false;       // cudaMallocAsync available
};

// One slice of a layout sweep as the device measured it.
struct LayoutSlice {
  uint64_t first = 0;                // the slice's first candidate
  std::span<const uint64_t> values;  // the objective at first, first + 1, ...
  std::optional<uint64_t> overflow_at;  // its lowest candidate with a measure
                                        // beyond 2^64-1, if any
};
using LayoutSliceSink = std::function<absl::Status(const LayoutSlice&)>;

class CudaEngine final : public SweepEngine {
 public:
  explicit CudaEngine(CudaEngineOptions options = {});

  Engine kind() const override { return Engine::kCuda; }

  // The device, probed once per process on first call (thread-safe): the
  // CUDA runtime is initialised then, not before. Errors:
  // FAILED_PRECONDITION "CUDA engine: no usable device: ..." with the CUDA
  // error's name and text (no driver, no device, no kernel image for it).
  static absl::StatusOr<CudaDeviceInfo> Device();

  // Device().status().
  absl::Status Usable() const override;

  // The seed's best candidate (kBest), or a layout objective's best or
  // frontier; the seed's frontier is refused (EngineServes). The seed's
  // waste: one upload of the sizes and group offsets per call, the grid
  // swept in slices of at most options.steps_per_slice steps. A layout
  // objective: one thread per candidate running MeasureLayout<uint64_t>
  // (the arithmetic the CPU tests run), the values brought back in slices of
  // about options.steps_per_slice steps (candidates x placed tensors) and
  // merged on the host. `stop` is asked before each slice. Errors, in this
  // order: RESOURCE_EXHAUSTED beyond options.max_work steps;
  // FAILED_PRECONDITION without a usable device (see Device); a CUDA call
  // that fails mid-sweep gives a status IsCudaFailure recognises (with
  // kCudaContextLostPayload when the context did not survive it,
  // device_health.h); `stop`'s status when it stops the sweep.
  absl::StatusOr<SweepOutcome> Run(const SweepTask& task,
                                   const StopCheck& stop) const override;

 private:
  // The seed's best candidate of `problem` (cuda_engine.cu).
  absl::StatusOr<SweepOutcome> SeedBest(const SweepProblem& problem,
                                        const StopCheck& stop) const;

  // `objective` (a layout objective) at every candidate of `grid`,
  // candidate i laid out by `arrays` at grid.At(i) rounded up to
  // `degree_lcm`, handed to `sink` slice by slice in grid order; an error
  // from `sink` ends the sweep with it (cuda_engine.cu).
  absl::Status MeasureLayouts(const LayoutArrays& arrays,
                              const CandidateGrid& grid, uint64_t degree_lcm,
                              Objective objective, const StopCheck& stop,
                              const LayoutSliceSink& sink) const;

  // MeasureLayouts, without the check of the context after a failure.
  absl::Status MeasureOnDevice(const LayoutArrays& arrays,
                               const CandidateGrid& grid, uint64_t degree_lcm,
                               Objective objective, const StopCheck& stop,
                               const LayoutSliceSink& sink) const;

  // SeedBest, without the check of the context after a failure.
  absl::StatusOr<SweepOutcome> SweepOnDevice(const SweepProblem& problem,
                                             const StopCheck& stop) const;

  CudaEngineOptions options_;
};

// The payload CudaStatus puts on every status made from a CUDA error; its
// value is the error's name.
inline constexpr absl::string_view kCudaErrorPayload =
    "type.chunkplan/cuda_error";

// True when `status` came from a failing CUDA call (so another engine can
// answer instead); false for OK, for the engine's limits and for a stop.
inline bool IsCudaFailure(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kCudaErrorPayload).has_value();
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CUDA_ENGINE_H_
