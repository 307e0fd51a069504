#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/planner/candidate/argmin.h"
#include "server/planner/candidate/tiled_waste.h"
#include "server/planner/engines/cuda_engine.h"
#include "server/planner/engines/cuda_status.h"
#include "server/planner/engines/device_health.h"

namespace chunkplan::planner {
namespace {

// A power of two (the tree reduction halves it) and a multiple of the warp.
constexpr uint32_t kThreadsPerBlock = 256;
// Sizes staged in shared memory at a time: 8 KiB per block.
constexpr uint32_t kTileSizes = 1024;

// The block's preferred pair of every thread's `mine`, returned to all
// threads. Every thread of the block must call it.
__device__ WasteIndex BlockArgmin(WasteIndex mine, WasteIndex* slots) {
  slots[threadIdx.x] = mine;
  __syncthreads();
  for (uint32_t half = kThreadsPerBlock / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) TreeLevel(slots, threadIdx.x, half);
    __syncthreads();
  }
  return slots[0];
}

// Sweeps grid indices [begin, end): thread t of the launch takes candidates
// begin + t, begin + t + stride, ... (stride = all threads of the launch), so
// any number of candidates fits one launch. The block stages the sizes tile
// by tile in shared memory; each thread carries its candidate's next-fit
// state across tiles. Block b writes its preferred pair to block_best[b].
__global__ void __launch_bounds__(kThreadsPerBlock)
    SweepSlice(const uint64_t* sizes, const uint64_t* group_begin,
               uint64_t num_groups, CandidateGrid grid, uint64_t begin,
               uint64_t end, WasteIndex* block_best) {
  __shared__ uint64_t tile[kTileSizes];
  __shared__ WasteIndex slots[kThreadsPerBlock];
  const uint64_t n = group_begin[num_groups];
  const uint64_t stride = uint64_t{gridDim.x} * kThreadsPerBlock;
  WasteIndex best = NoCandidate();
  // `base` is the same for the whole block, so all its threads meet the
  // barriers below the same number of times.
  for (uint64_t base = begin + uint64_t{blockIdx.x} * kThreadsPerBlock;
       base < end; base += stride) {
    const uint64_t index = base + threadIdx.x;
    const bool active = index < end;
    // An idle thread walks a valid candidate (`begin`) and drops the result.
    TiledWaste walk(group_begin, grid.At(active ? index : begin));
    for (uint64_t first = 0; first < n; first += kTileSizes) {
      const uint32_t len = n - first < kTileSizes
                               ? static_cast<uint32_t>(n - first)
                               : kTileSizes;
      __syncthreads();  // every thread is done with the previous tile
      for (uint32_t j = threadIdx.x; j < len; j += kThreadsPerBlock) {
        tile[j] = sizes[first + j];
      }
      __syncthreads();
      walk.Feed(tile, first, len);
    }
    if (active) KeepPreferred(&best, WasteIndex{walk.Waste(), index});
  }
  const WasteIndex block = BlockArgmin(best, slots);
  if (threadIdx.x == 0) block_best[blockIdx.x] = block;
}

// Folds block_best[0..blocks) into *best. One block.
__global__ void __launch_bounds__(kThreadsPerBlock)
    MergeBlocks(const WasteIndex* block_best, uint32_t blocks,
                WasteIndex* best) {
  __shared__ WasteIndex slots[kThreadsPerBlock];
  WasteIndex mine = NoCandidate();
  for (uint32_t b = threadIdx.x; b < blocks; b += kThreadsPerBlock) {
    KeepPreferred(&mine, block_best[b]);
  }
  const WasteIndex block = BlockArgmin(mine, slots);
  if (threadIdx.x == 0) KeepPreferred(best, block);
}

// FAILED_PRECONDITION "CUDA engine: no usable device: <call>: <error>".
absl::Status NoUsableDevice(cudaError_t error, const char* call) {
  const std::string what = absl::StrCat("no usable device: ", call);
  return absl::FailedPreconditionError(
      CudaStatus(error, what.c_str()).message());
}

absl::StatusOr<CudaDeviceInfo> ProbeDevice() {
  int count = 0;  // left untouched when the call fails
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
    return NoUsableDevice(e, "cudaGetDeviceCount");
  }
  if (count == 0) {
    return absl::FailedPreconditionError(
        "CUDA engine: no usable device: cudaGetDeviceCount found none");
  }
  const int device = 0;
  if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) {
    return NoUsableDevice(e, "cudaSetDevice");
  }
  cudaDeviceProp prop;
  if (cudaError_t e = cudaGetDeviceProperties(&prop, device);
      e != cudaSuccess) {
    return NoUsableDevice(e, "cudaGetDeviceProperties");
  }
  CudaDeviceInfo info;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.multiprocessors = prop.multiProcessorCount;
  info.threads_per_block = kThreadsPerBlock;
  int pools = 0;
  if (cudaError_t e =
          cudaDeviceGetAttribute(&info.clock_khz, cudaDevAttrClockRate, device);
      e != cudaSuccess) {
    return NoUsableDevice(e, "cudaDeviceGetAttribute(ClockRate)");
  }
  if (cudaError_t e = cudaDeviceGetAttribute(
          &pools, cudaDevAttrMemoryPoolsSupported, device);
      e != cudaSuccess) {
    return NoUsableDevice(e, "cudaDeviceGetAttribute(MemoryPoolsSupported)");
  }
  info.memory_pools = pools != 0;
  // Fails with cudaErrorNoKernelImageForDevice where our binary has no code
  // for this GPU.
  cudaFuncAttributes attributes;
  for (const void* kernel : {reinterpret_cast<const void*>(&SweepSlice),
                             reinterpret_cast<const void*>(&MergeBlocks)}) {
    if (cudaError_t e = cudaFuncGetAttributes(&attributes, kernel);
        e != cudaSuccess) {
      return NoUsableDevice(e, "cudaFuncGetAttributes");
    }
  }
  int per_multiprocessor = 0;
  if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_multiprocessor, SweepSlice, kThreadsPerBlock, 0);
      e != cudaSuccess) {
    return NoUsableDevice(e, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  }
  info.resident_blocks = per_multiprocessor * info.multiprocessors;
  if (info.resident_blocks <= 0) {
    return absl::FailedPreconditionError(
        "CUDA engine: no usable device: the sweep kernel fits no block");
  }
  return info;
}

// One request's device state: a stream, and one allocation holding the
// sizes, the group offsets, the running answer and the blocks' partial
// answers. Frees both when destroyed (errors then are not reported: the
// answer, or the error that ended the sweep, is already known).
class DeviceSweep {
 public:
  explicit DeviceSweep(const CudaDeviceInfo& device) : device_(device) {}
  DeviceSweep(const DeviceSweep&) = delete;
  DeviceSweep& operator=(const DeviceSweep&) = delete;

  ~DeviceSweep() {
    if (words_ != nullptr) {
      if (device_.memory_pools) {
        cudaFreeAsync(words_, stream_);
      } else {
        cudaFree(words_);
      }
    }
    // Returns at once; the stream's resources go once its work is done.
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  // Allocates and uploads: the one upload of the request.
  absl::Status Upload(const SweepProblem& problem) {
    CHUNKPLAN_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice"));
    CHUNKPLAN_RETURN_IF_ERROR(
        CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags"));
    // Layout in 64-bit words: sizes, group offsets, best (2), block_best.
    n_ = problem.sizes.size();
    num_groups_ = problem.num_groups();
    std::vector<uint64_t> staged(problem.group_begin.begin(),
                                 problem.group_begin.end());
    const WasteIndex none = NoCandidate();
    staged.push_back(none.waste);
    staged.push_back(none.index);
    const size_t words = n_ + staged.size() + 2 * device_.resident_blocks;
    const size_t bytes = words * sizeof(uint64_t);
    CHUNKPLAN_RETURN_IF_ERROR(
        device_.memory_pools
            ? CudaStatus(cudaMallocAsync(reinterpret_cast<void**>(&words_),
                                         bytes, stream_),
                         "cudaMallocAsync")
            : CudaStatus(cudaMalloc(reinterpret_cast<void**>(&words_), bytes),
                         "cudaMalloc"));
    group_begin_ = words_ + n_;
    best_ = reinterpret_cast<WasteIndex*>(group_begin_ + num_groups_ + 1);
    block_best_ = best_ + 1;
    if (n_ > 0) {
      CHUNKPLAN_RETURN_IF_ERROR(CudaStatus(
          cudaMemcpyAsync(words_, problem.sizes.data(), n_ * sizeof(uint64_t),
                          cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync(sizes)"));
    }
    // Pageable source: the call returns once `staged` has been copied out.
    return CudaStatus(cudaMemcpyAsync(group_begin_, staged.data(),
                                      staged.size() * sizeof(uint64_t),
                                      cudaMemcpyHostToDevice, stream_),
                      "cudaMemcpyAsync(group offsets)");
  }

  // Sweeps grid indices [begin, end) into the running answer; returns when
  // the device has finished.
  absl::Status RunSlice(const CandidateGrid& grid, uint64_t begin,
                        uint64_t end) {
    const uint64_t wanted =
        (end - begin + kThreadsPerBlock - 1) / kThreadsPerBlock;
    const uint32_t blocks = static_cast<uint32_t>(
        wanted < static_cast<uint64_t>(device_.resident_blocks)
            ? wanted
            : device_.resident_blocks);
    SweepSlice<<<blocks, kThreadsPerBlock, 0, stream_>>>(
        words_, group_begin_, num_groups_, grid, begin, end, block_best_);
    CHUNKPLAN_RETURN_IF_ERROR(LaunchStatus("SweepSlice launch"));
    MergeBlocks<<<1, kThreadsPerBlock, 0, stream_>>>(block_best_, blocks,
                                                     best_);
    CHUNKPLAN_RETURN_IF_ERROR(LaunchStatus("MergeBlocks launch"));
    return CudaStatus(cudaStreamSynchronize(stream_), "SweepSlice");
  }

  // The running answer.
  absl::StatusOr<WasteIndex> Result() {
    WasteIndex best;
    CHUNKPLAN_RETURN_IF_ERROR(
        CudaStatus(cudaMemcpyAsync(&best, best_, sizeof(best),
                                   cudaMemcpyDeviceToHost, stream_),
                   "cudaMemcpyAsync(result)"));
    CHUNKPLAN_RETURN_IF_ERROR(
        CudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"));
    return best;
  }

 private:
  const CudaDeviceInfo& device_;
  cudaStream_t stream_ = nullptr;
  uint64_t* words_ = nullptr;
  uint64_t n_ = 0;
  uint64_t num_groups_ = 0;
  uint64_t* group_begin_ = nullptr;
  WasteIndex* best_ = nullptr;
  WasteIndex* block_best_ = nullptr;
};

}  // namespace

CudaEngine::CudaEngine(CudaEngineOptions options) : options_(options) {}

absl::StatusOr<CudaDeviceInfo> CudaEngine::Device() {
  static const absl::StatusOr<CudaDeviceInfo>* const probe =
      new absl::StatusOr<CudaDeviceInfo>(ProbeDevice());
  return *probe;
}

absl::Status CudaEngine::Usable() const { return Device().status(); }

absl::StatusOr<SweepOutcome> CudaEngine::Sweep(const SweepProblem& problem,
                                               const StopCheck& stop) const {
  absl::StatusOr<SweepOutcome> outcome = SweepOnDevice(problem, stop);
  // A failing call whose context then fails a synchronisation too has lost
  // it, whatever the error's name (device_health.h).
  if (IsCudaFailure(outcome.status()) &&
      cudaDeviceSynchronize() != cudaSuccess) {
    absl::Status lost = outcome.status();
    lost.SetPayload(kCudaContextLostPayload, absl::Cord("lost"));
    return lost;
  }
  return outcome;
}

absl::StatusOr<SweepOutcome> CudaEngine::SweepOnDevice(
    const SweepProblem& problem, const StopCheck& stop) const {
  const CandidateGrid& grid = problem.grid;
  if (const uint64_t work = problem.SweepWork(); work > options_.max_work) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "CUDA: ", grid.count, " candidates x ",
        std::max<uint64_t>(1, problem.sizes.size()),
        " swept sizes exceed this engine's limit of ", options_.max_work,
        " steps (--max_cuda_work); use ENGINE_CPU_PLATEAU or ENGINE_AUTO"));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(const CudaDeviceInfo device, Device());
  DeviceSweep sweep(device);
  CHUNKPLAN_RETURN_IF_ERROR(sweep.Upload(problem));

  // Slices of about steps_per_slice steps, and never less than one resident
  // grid of threads, so the device stays full.
  const uint64_t per_candidate =
      problem.sizes.empty() ? 1 : problem.sizes.size();
  const uint64_t resident_threads =
      uint64_t{static_cast<uint32_t>(device.resident_blocks)} *
      kThreadsPerBlock;
  const uint64_t by_steps = options_.steps_per_slice / per_candidate;
  const uint64_t slice =
      by_steps > resident_threads ? by_steps : resident_threads;
  for (uint64_t begin = 0; begin < grid.count;) {
    if (stop) CHUNKPLAN_RETURN_IF_ERROR(stop());
    const uint64_t end =
        grid.count - begin <= slice ? grid.count : begin + slice;
    CHUNKPLAN_RETURN_IF_ERROR(sweep.RunSlice(grid, begin, end));
    begin = end;
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(const WasteIndex best, sweep.Result());
  if (best.index >= grid.count) {
    absl::Status status = absl::InternalError(
        absl::StrCat("CUDA engine: the sweep returned index ", best.index,
                     " of ", grid.count, " candidates"));
    status.SetPayload(kCudaErrorPayload, absl::Cord("invalid result"));
    return status;
  }
  return SweepOutcome{best.index, grid.At(best.index), best.waste};
}

}  // namespace chunkplan::planner
