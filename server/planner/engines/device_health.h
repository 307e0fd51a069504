#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_DEVICE_HEALTH_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_DEVICE_HEALTH_H_

// Whether an engine's device is still fit to run searches. A CUDA error that
// corrupts the context ("sticky": an illegal address, a failed launch, a
// device-side assert, ...) makes every later call on it fail too, so the
// first such failure marks the device unusable for the life of the process,
// and AUTO stops choosing it. Plain C++: the CUDA error arrives as the name
// in a status's kCudaErrorPayload (cuda_engine.h).

#include <atomic>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace chunkplan::planner {

// The payload CudaStatus adds, besides kCudaErrorPayload, when a follow-up
// call after the failure failed too (the context is lost, whatever the
// error's name).
inline constexpr absl::string_view kCudaContextLostPayload =
    "type.chunkplan/cuda_context_lost";

// True when `status` came from a CUDA error after which the device cannot
// run another search in this process: a sticky error by name, or one whose
// context was found lost.
bool IsStickyCudaFailure(const absl::Status& status);

// Thread-safe.
class DeviceHealth {
 public:
  // OK while the device is usable; else FAILED_PRECONDITION "device unusable
  // since a sticky failure: <the failure>".
  absl::Status Usable() const;

  // Takes note of a failure of a search on the device: a sticky one
  // (IsStickyCudaFailure) marks it unusable from now on; others are
  // forgotten (an allocation failure, say, may pass).
  void RecordFailure(const absl::Status& failure);

 private:
  // Set, after unusable_, by the first sticky failure: until then Usable
  // answers without the lock (every search asks it).
  std::atomic<bool> failed_{false};
  mutable absl::Mutex mu_;
  absl::Status unusable_ ABSL_GUARDED_BY(mu_);
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_DEVICE_HEALTH_H_
