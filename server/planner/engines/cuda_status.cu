#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "server/planner/engines/cuda_engine.h"
#include "server/planner/engines/cuda_status.h"

namespace chunkplan::planner {
namespace {

absl::StatusCode CodeFor(cudaError_t error) {
  switch (error) {
    case cudaErrorMemoryAllocation:
      return absl::StatusCode::kResourceExhausted;
    case cudaErrorInsufficientDriver:
    case cudaErrorNoDevice:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorInitializationError:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status CudaStatus(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return absl::OkStatus();
  const char* name = cudaGetErrorName(error);
  absl::Status status(CodeFor(error),
                      absl::StrCat("CUDA engine: ", what, ": ", name, " (",
                                   cudaGetErrorString(error), ")"));
  status.SetPayload(kCudaErrorPayload, absl::Cord(name));
  return status;
}

absl::Status LaunchStatus(const char* kernel) {
  return CudaStatus(cudaGetLastError(), kernel);
}

}  // namespace chunkplan::planner
