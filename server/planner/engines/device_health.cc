#include "server/planner/engines/device_health.h"

#include <optional>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "server/planner/engines/cuda_engine.h"

namespace chunkplan::planner {
namespace {

// The CUDA runtime's errors after which "the process is in an inconsistent
// state and any further CUDA work will return the same error" (their
// documentation in driver_types.h), a device-side assert (after which "the
// context cannot be used anymore") and an uncorrectable ECC error.
constexpr absl::string_view kStickyErrors[] = {
    "cudaErrorContained",           "cudaErrorIllegalAddress",
    "cudaErrorLaunchTimeout",       "cudaErrorHardwareStackError",
    "cudaErrorIllegalInstruction",  "cudaErrorMisalignedAddress",
    "cudaErrorInvalidAddressSpace", "cudaErrorInvalidPc",
    "cudaErrorLaunchFailure",       "cudaErrorTensorMemoryLeak",
    "cudaErrorExternalDevice",      "cudaErrorAssert",
    "cudaErrorECCUncorrectable",
};

}  // namespace

bool IsStickyCudaFailure(const absl::Status& status) {
  if (!IsCudaFailure(status)) return false;
  if (status.GetPayload(kCudaContextLostPayload).has_value()) return true;
  const std::string name(*status.GetPayload(kCudaErrorPayload));
  for (absl::string_view sticky : kStickyErrors) {
    if (name == sticky) return true;
  }
  return false;
}

absl::Status DeviceHealth::Usable() const {
  if (!failed_.load(std::memory_order_acquire)) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  return unusable_;
}

void DeviceHealth::RecordFailure(const absl::Status& failure) {
  if (!IsStickyCudaFailure(failure)) return;
  absl::MutexLock lock(&mu_);
  if (!unusable_.ok()) return;  // the first failure is the one to tell
  unusable_ = absl::FailedPreconditionError(absl::StrCat(
      "device unusable since a sticky failure: ",
      absl::StatusCodeToString(failure.code()), ": ", failure.message()));
  failed_.store(true, std::memory_order_release);
}

}  // namespace chunkplan::planner
