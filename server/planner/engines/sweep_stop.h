#ifndef CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_STOP_H_
#define CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_STOP_H_

// A StopCheck shared by the threads of one sweep (CPU_SWEEP's ranges, the
// frontier's ranges): once any thread is told to stop, every thread stops,
// and the first stop status is the sweep's.

#include <atomic>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

class SweepStop {
 public:
  // `check` may be empty (never stop); it must outlive this object and, as
  // every StopCheck the planner is given, be safe to call from any thread.
  explicit SweepStop(const StopCheck& check) : check_(check) {}

  // False once any worker has been told to stop.
  bool Continue() {
    if (stopped_.load(std::memory_order_relaxed)) return false;
    if (!check_) return true;
    absl::Status status = check_();
    if (status.ok()) return true;
    std::lock_guard<std::mutex> lock(mu_);
    if (status_.ok()) status_ = std::move(status);
    stopped_.store(true, std::memory_order_relaxed);
    return false;
  }

  // OK, or the first stop status a worker saw.
  absl::Status status() {
    std::lock_guard<std::mutex> lock(mu_);
    return status_;
  }

 private:
  const StopCheck& check_;
  std::atomic<bool> stopped_{false};
  std::mutex mu_;
  absl::Status status_;
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_ENGINES_SWEEP_STOP_H_
