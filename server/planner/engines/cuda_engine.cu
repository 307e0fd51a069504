#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "server/planner/candidate/argmin.h"
#include "server/planner/candidate/round_up.h"
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

// Measures grid indices [begin, end) by a layout objective: thread t of the
// launch takes candidates begin + t, begin + t + stride, ...; candidate i's
// value goes to values[i - begin], and the lowest candidate whose measures
// passed 2^64-1 to *overflow_at (left alone when none did). Every thread
// reads the same tensor at the same step: the loads are broadcasts.
__global__ void __launch_bounds__(kThreadsPerBlock)
    MeasureSlice(LayoutArrays arrays, CandidateGrid grid, uint64_t lcm,
                 Objective objective, uint64_t begin, uint64_t end,
                 uint64_t* values, unsigned long long* overflow_at) {
  const uint64_t stride = uint64_t{gridDim.x} * kThreadsPerBlock;
  for (uint64_t i =
           begin + uint64_t{blockIdx.x} * kThreadsPerBlock + threadIdx.x;
       i < end; i += stride) {
    const uint64_t rounded = RoundUp(grid.At(i), lcm);
    LayoutValues v;
    MeasureLayout<uint64_t>(arrays, &rounded, &v);
    if (v.overflow) atomicMin(overflow_at, static_cast<unsigned long long>(i));
    values[i - begin] = ObjectiveValue(objective, 0, v);
  }
}

// FAILED_PRECONDITION "CUDA engine: no usable device: <call>: <error>".
absl::Status NoUsableDevice(cudaError_t error, const char* call) {
  const std::string what = absl::StrCat("no usable device: ", call);
  return absl::FailedPreconditionError(
      CudaStatus(error, what.c_str()).message());
}

// OK, or NoUsableDevice(error, call).
absl::Status DeviceCall(cudaError_t error, const char* call) {
  return error == cudaSuccess ? absl::OkStatus() : NoUsableDevice(error, call);
}

// Makes device 0 current, where there is one.
absl::Status SelectFirstDevice() {
  int count = 0;  // left untouched when the call fails
  CHUNKPLAN_RETURN_IF_ERROR(
      DeviceCall(cudaGetDeviceCount(&count), "cudaGetDeviceCount"));
  if (count == 0) {
    return absl::FailedPreconditionError(
        "CUDA engine: no usable device: cudaGetDeviceCount found none");
  }
  return DeviceCall(cudaSetDevice(0), "cudaSetDevice");
}

// The name, compute capability, multiprocessors, clock and memory pools of
// `device` into *info.
absl::Status ReadProperties(int device, CudaDeviceInfo* info) {
  cudaDeviceProp prop;
  CHUNKPLAN_RETURN_IF_ERROR(DeviceCall(cudaGetDeviceProperties(&prop, device),
                                       "cudaGetDeviceProperties"));
  info->name = prop.name;
  info->compute_major = prop.major;
  info->compute_minor = prop.minor;
  info->multiprocessors = prop.multiProcessorCount;
  CHUNKPLAN_RETURN_IF_ERROR(DeviceCall(
      cudaDeviceGetAttribute(&info->clock_khz, cudaDevAttrClockRate, device),
      "cudaDeviceGetAttribute(ClockRate)"));
  int pools = 0;
  CHUNKPLAN_RETURN_IF_ERROR(DeviceCall(
      cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, device),
      "cudaDeviceGetAttribute(MemoryPoolsSupported)"));
  info->memory_pools = pools != 0;
  return absl::OkStatus();
}

// OK when every kernel has code for the device: cudaFuncGetAttributes fails
// with cudaErrorNoKernelImageForDevice where our binary has none.
absl::Status CheckKernelsLoad() {
  cudaFuncAttributes attributes;
  for (const void* kernel : {reinterpret_cast<const void*>(&SweepSlice),
                             reinterpret_cast<const void*>(&MergeBlocks),
                             reinterpret_cast<const void*>(&MeasureSlice)}) {
    CHUNKPLAN_RETURN_IF_ERROR(DeviceCall(
        cudaFuncGetAttributes(&attributes, kernel), "cudaFuncGetAttributes"));
  }
  return absl::OkStatus();
}

// The blocks of `kernel` resident on the whole device at once.
template <typename Kernel>
absl::StatusOr<int> ResidentBlocks(Kernel kernel, int multiprocessors) {
  int per_multiprocessor = 0;
  CHUNKPLAN_RETURN_IF_ERROR(
      DeviceCall(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                     &per_multiprocessor, kernel, kThreadsPerBlock, 0),
                 "cudaOccupancyMaxActiveBlocksPerMultiprocessor"));
  return per_multiprocessor * multiprocessors;
}

absl::StatusOr<CudaDeviceInfo> ProbeDevice() {
  CHUNKPLAN_RETURN_IF_ERROR(SelectFirstDevice());
  CudaDeviceInfo info;
  info.threads_per_block = kThreadsPerBlock;
  CHUNKPLAN_RETURN_IF_ERROR(ReadProperties(0, &info));
  CHUNKPLAN_RETURN_IF_ERROR(CheckKernelsLoad());
  CHUNKPLAN_ASSIGN_OR_RETURN(info.resident_blocks,
                             ResidentBlocks(SweepSlice, info.multiprocessors));
  CHUNKPLAN_ASSIGN_OR_RETURN(
      info.layout_resident_blocks,
      ResidentBlocks(MeasureSlice, info.multiprocessors));
  if (info.resident_blocks <= 0 || info.layout_resident_blocks <= 0) {
    return absl::FailedPreconditionError(
        "CUDA engine: no usable device: a kernel fits no block");
  }
  return info;
}

// Blocks for one launch over `candidates` (at least 1): one thread each,
// at most `resident_blocks` (the rest are taken by the grid-stride loop).
uint32_t LaunchBlocks(uint64_t candidates, int resident_blocks) {
  const uint64_t wanted =
      (candidates + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const uint64_t most = static_cast<uint32_t>(resident_blocks);
  return static_cast<uint32_t>(wanted < most ? wanted : most);
}

// A stream and one allocation of 64-bit words on it. Frees both when
// destroyed (errors then are not reported: the answer, or the error that
// ended the work, is already known).
class DeviceWords {
 public:
  explicit DeviceWords(const CudaDeviceInfo& device) : device_(device) {}
  DeviceWords(const DeviceWords&) = delete;
  DeviceWords& operator=(const DeviceWords&) = delete;

  ~DeviceWords() {
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

  // Creates the stream and allocates `count` words on it.
  absl::Status Allocate(size_t count) {
    CHUNKPLAN_RETURN_IF_ERROR(CudaStatus(cudaSetDevice(0), "cudaSetDevice"));
    CHUNKPLAN_RETURN_IF_ERROR(
        CudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags"));
    const size_t bytes = count * sizeof(uint64_t);
    return device_.memory_pools
               ? CudaStatus(cudaMallocAsync(reinterpret_cast<void**>(&words_),
                                            bytes, stream_),
                            "cudaMallocAsync")
               : CudaStatus(
                     cudaMalloc(reinterpret_cast<void**>(&words_), bytes),
                     "cudaMalloc");
  }

  // Copies `count` words between the host and words() + offset on the
  // stream; `what` names the copy in errors. A pageable host source is
  // copied out before the call returns.
  absl::Status Upload(size_t offset, const void* from, size_t count,
                      const char* what) {
    if (count == 0) return absl::OkStatus();
    return CudaStatus(cudaMemcpyAsync(words_ + offset, from, count * 8,
                                      cudaMemcpyHostToDevice, stream_),
                      what);
  }
  absl::Status Download(void* to, size_t offset, size_t count,
                        const char* what) {
    if (count == 0) return absl::OkStatus();
    return CudaStatus(cudaMemcpyAsync(to, words_ + offset, count * 8,
                                      cudaMemcpyDeviceToHost, stream_),
                      what);
  }

  uint64_t* words() const { return words_; }
  cudaStream_t stream() const { return stream_; }

 private:
  const CudaDeviceInfo& device_;
  cudaStream_t stream_ = nullptr;
  uint64_t* words_ = nullptr;
};

// One request's device state for the seed's sweep: one allocation holding
// the sizes, the group offsets, the running answer and the blocks' partial
// answers.
class DeviceSweep {
 public:
  explicit DeviceSweep(const CudaDeviceInfo& device)
      : device_(device), buffer_(device) {}

  // Allocates and uploads: the one upload of the request.
  absl::Status Upload(const SweepProblem& problem) {
    // Layout in 64-bit words: sizes, group offsets, best (2), block_best.
    n_ = problem.sizes.size();
    num_groups_ = problem.num_groups();
    std::vector<uint64_t> staged(problem.group_begin.begin(),
                                 problem.group_begin.end());
    const WasteIndex none = NoCandidate();
    staged.push_back(none.waste);
    staged.push_back(none.index);
    CHUNKPLAN_RETURN_IF_ERROR(
        buffer_.Allocate(n_ + staged.size() + 2 * device_.resident_blocks));
    group_begin_ = buffer_.words() + n_;
    best_ = reinterpret_cast<WasteIndex*>(group_begin_ + num_groups_ + 1);
    block_best_ = best_ + 1;
    CHUNKPLAN_RETURN_IF_ERROR(
        buffer_.Upload(0, problem.sizes.data(), n_, "cudaMemcpyAsync(sizes)"));
    return buffer_.Upload(n_, staged.data(), staged.size(),
                          "cudaMemcpyAsync(group offsets)");
  }

  // Sweeps grid indices [begin, end) into the running answer; returns when
  // the device has finished.
  absl::Status RunSlice(const CandidateGrid& grid, uint64_t begin,
                        uint64_t end) {
    const uint32_t blocks = LaunchBlocks(end - begin, device_.resident_blocks);
    SweepSlice<<<blocks, kThreadsPerBlock, 0, buffer_.stream()>>>(
        buffer_.words(), group_begin_, num_groups_, grid, begin, end,
        block_best_);
    CHUNKPLAN_RETURN_IF_ERROR(LaunchStatus("SweepSlice launch"));
    MergeBlocks<<<1, kThreadsPerBlock, 0, buffer_.stream()>>>(block_best_,
                                                              blocks, best_);
    CHUNKPLAN_RETURN_IF_ERROR(LaunchStatus("MergeBlocks launch"));
    return CudaStatus(cudaStreamSynchronize(buffer_.stream()), "SweepSlice");
  }

  // The running answer.
  absl::StatusOr<WasteIndex> Result() {
    WasteIndex best;
    CHUNKPLAN_RETURN_IF_ERROR(buffer_.Download(
        &best, reinterpret_cast<uint64_t*>(best_) - buffer_.words(), 2,
        "cudaMemcpyAsync(result)"));
    CHUNKPLAN_RETURN_IF_ERROR(CudaStatus(
        cudaStreamSynchronize(buffer_.stream()), "cudaStreamSynchronize"));
    return best;
  }

 private:
  const CudaDeviceInfo& device_;
  DeviceWords buffer_;
  uint64_t n_ = 0;
  uint64_t num_groups_ = 0;
  uint64_t* group_begin_ = nullptr;
  WasteIndex* best_ = nullptr;
  WasteIndex* block_best_ = nullptr;
};

// One request's device state for a layout sweep: one allocation holding the
// tensors (3 words each), the group offsets, the degrees (two per word), the
// slice's lowest overflowing candidate and its values.
class DeviceLayouts {
 public:
  DeviceLayouts(const CudaDeviceInfo& device, uint64_t slice)
      : device_(device), buffer_(device), slice_(slice), values_(slice) {}

  // Allocates and uploads: the one upload of the request.
  absl::Status Upload(const LayoutArrays& a) {
    const uint64_t tensors = a.begin[a.groups];
    const uint64_t degree_words = (a.groups + 1) / 2;
    const uint64_t begin_at = 3 * tensors;
    const uint64_t degrees_at = begin_at + a.groups + 1;
    overflow_at_ = degrees_at + degree_words;
    CHUNKPLAN_RETURN_IF_ERROR(buffer_.Allocate(overflow_at_ + 1 + slice_));
    static_assert(sizeof(PlacedTensor) == 3 * sizeof(uint64_t));
    CHUNKPLAN_RETURN_IF_ERROR(
        buffer_.Upload(0, a.tensors, 3 * tensors, "cudaMemcpyAsync(tensors)"));
    CHUNKPLAN_RETURN_IF_ERROR(buffer_.Upload(begin_at, a.begin, a.groups + 1,
                                             "cudaMemcpyAsync(group offsets)"));
    std::vector<uint32_t> degrees(a.degrees, a.degrees + a.groups);
    degrees.resize(2 * degree_words);
    CHUNKPLAN_RETURN_IF_ERROR(buffer_.Upload(
        degrees_at, degrees.data(), degree_words, "cudaMemcpyAsync(degrees)"));
    device_arrays_ = a;
    device_arrays_.tensors =
        reinterpret_cast<const PlacedTensor*>(buffer_.words());
    device_arrays_.begin = buffer_.words() + begin_at;
    device_arrays_.degrees =
        reinterpret_cast<const uint32_t*>(buffer_.words() + degrees_at);
    return absl::OkStatus();
  }

  // Measures grid indices [begin, end) (at most the slice) and returns when
  // their values are back on the host.
  absl::StatusOr<LayoutSlice> RunSlice(const CandidateGrid& grid, uint64_t lcm,
                                       Objective objective, uint64_t begin,
                                       uint64_t end) {
    const uint64_t none = UINT64_MAX;
    CHUNKPLAN_RETURN_IF_ERROR(
        buffer_.Upload(overflow_at_, &none, 1, "cudaMemcpyAsync(overflow)"));
    const uint32_t blocks =
        LaunchBlocks(end - begin, device_.layout_resident_blocks);
    uint64_t* words = buffer_.words();
    MeasureSlice<<<blocks, kThreadsPerBlock, 0, buffer_.stream()>>>(
        device_arrays_, grid, lcm, objective, begin, end,
        words + overflow_at_ + 1,
        reinterpret_cast<unsigned long long*>(words + overflow_at_));
    CHUNKPLAN_RETURN_IF_ERROR(LaunchStatus("MeasureSlice launch"));
    uint64_t overflow = none;
    CHUNKPLAN_RETURN_IF_ERROR(buffer_.Download(&overflow, overflow_at_, 1,
                                               "cudaMemcpyAsync(overflow)"));
    CHUNKPLAN_RETURN_IF_ERROR(buffer_.Download(values_.data(), overflow_at_ + 1,
                                               end - begin,
                                               "cudaMemcpyAsync(values)"));
    CHUNKPLAN_RETURN_IF_ERROR(
        CudaStatus(cudaStreamSynchronize(buffer_.stream()), "MeasureSlice"));
    LayoutSlice slice;
    slice.first = begin;
    slice.values = std::span<const uint64_t>(values_.data(), end - begin);
    if (overflow != none) slice.overflow_at = overflow;
    return slice;
  }

 private:
  const CudaDeviceInfo& device_;
  DeviceWords buffer_;
  uint64_t slice_;
  std::vector<uint64_t> values_;
  uint64_t overflow_at_ = 0;  // word offsets of the overflow, then values
  LayoutArrays device_arrays_;
};

// `status`, marked with kCudaContextLostPayload when it is a CUDA failure
// whose context then fails a synchronisation too: it has lost the context,
// whatever the error's name (device_health.h).
absl::Status MarkLostContext(absl::Status status) {
  if (IsCudaFailure(status) && cudaDeviceSynchronize() != cudaSuccess) {
    status.SetPayload(kCudaContextLostPayload, absl::Cord("lost"));
  }
  return status;
}

// Candidates per launch: about steps_per_slice steps of `per_candidate`
// each, never less than one resident grid of threads (the device stays
// full) nor more than `cap`, and never more than the grid.
uint64_t SliceCandidates(uint64_t steps_per_slice, uint64_t per_candidate,
                         int resident_blocks, uint64_t cap, uint64_t count) {
  const uint64_t resident_threads =
      uint64_t{static_cast<uint32_t>(resident_blocks)} * kThreadsPerBlock;
  uint64_t slice = steps_per_slice / per_candidate;
  if (slice < resident_threads) slice = resident_threads;
  if (slice > cap) slice = cap;
  return slice < count ? slice : count;
}

// Values one layout launch brings back at most: 32 MiB.
constexpr uint64_t kMaxLayoutSlice = uint64_t{1} << 22;

}  // namespace

CudaEngine::CudaEngine(CudaEngineOptions options) : options_(options) {}

absl::StatusOr<CudaDeviceInfo> CudaEngine::Device() {
  static const absl::StatusOr<CudaDeviceInfo>* const probe =
      new absl::StatusOr<CudaDeviceInfo>(ProbeDevice());
  return *probe;
}

absl::Status CudaEngine::Usable() const { return Device().status(); }

absl::StatusOr<SweepOutcome> CudaEngine::SeedBest(const SweepProblem& problem,
                                                  const StopCheck& stop) const {
  absl::StatusOr<SweepOutcome> outcome = SweepOnDevice(problem, stop);
  if (outcome.ok()) return outcome;
  return MarkLostContext(outcome.status());
}

absl::Status CudaEngine::MeasureLayouts(const LayoutArrays& arrays,
                                        const CandidateGrid& grid,
                                        uint64_t degree_lcm,
                                        Objective objective,
                                        const StopCheck& stop,
                                        const LayoutSliceSink& sink) const {
  return MarkLostContext(
      MeasureOnDevice(arrays, grid, degree_lcm, objective, stop, sink));
}

absl::Status CudaEngine::MeasureOnDevice(const LayoutArrays& arrays,
                                         const CandidateGrid& grid,
                                         uint64_t degree_lcm,
                                         Objective objective,
                                         const StopCheck& stop,
                                         const LayoutSliceSink& sink) const {
  const uint64_t tensors = arrays.begin[arrays.groups];
  const uint64_t per_candidate = tensors == 0 ? 1 : tensors;
  if (grid.count > options_.max_work / per_candidate) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "CUDA: ", grid.count, " candidates x ", per_candidate,
        " placed parameters exceed this engine's limit of ", options_.max_work,
        " steps (--max_cuda_work); use ENGINE_CPU_SWEEP or ENGINE_AUTO"));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(const CudaDeviceInfo device, Device());
  const uint64_t slice = SliceCandidates(
      options_.steps_per_slice, per_candidate, device.layout_resident_blocks,
      kMaxLayoutSlice, grid.count);
  DeviceLayouts layouts(device, slice);
  CHUNKPLAN_RETURN_IF_ERROR(layouts.Upload(arrays));
  for (uint64_t begin = 0; begin < grid.count;) {
    if (stop) CHUNKPLAN_RETURN_IF_ERROR(stop());
    const uint64_t end =
        grid.count - begin <= slice ? grid.count : begin + slice;
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const LayoutSlice measured,
        layouts.RunSlice(grid, degree_lcm, objective, begin, end));
    CHUNKPLAN_RETURN_IF_ERROR(sink(measured));
    begin = end;
  }
  return absl::OkStatus();
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

  const uint64_t per_candidate =
      problem.sizes.empty() ? 1 : problem.sizes.size();
  const uint64_t slice =
      SliceCandidates(options_.steps_per_slice, per_candidate,
                      device.resident_blocks, UINT64_MAX, grid.count);
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
