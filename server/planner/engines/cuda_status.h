#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_CUDA_STATUS_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_CUDA_STATUS_H_

// The one conversion from cudaError_t to absl::Status. Included only by the
// engine's .cu files: it is the one planner header that needs the CUDA
// runtime.

#include <cuda_runtime_api.h>

#include "absl/status/status.h"

namespace chunkplan::planner {

// OK for cudaSuccess. Otherwise a status whose message is
// "CUDA engine: <what>: <error name> (<error text>)", carrying the
// kCudaErrorPayload (see cuda_engine.h), with code RESOURCE_EXHAUSTED for an
// allocation failure, FAILED_PRECONDITION for a missing or unusable driver,
// device or kernel image, and INTERNAL for anything else.
absl::Status CudaStatus(cudaError_t error, const char* what);

// CudaStatus of the launch just made: cudaGetLastError after a kernel launch.
absl::Status LaunchStatus(const char* kernel);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_CUDA_STATUS_H_
