#include "testing/held_engine.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace chunkplan::testing {

bool IsHeld(const planner::SweepTask& task) {
  const std::vector<uint64_t>& sizes = task.sweep->sizes;
  return std::find(sizes.begin(), sizes.end(), kHeldNumel) != sizes.end();
}

HeldEngine::HeldEngine(std::unique_ptr<planner::SweepEngine> engine,
                       std::function<bool()> released)
    : engine_(std::move(engine)), released_(std::move(released)) {}

absl::StatusOr<planner::SweepOutcome> HeldEngine::Run(
    const planner::SweepTask& task, const planner::StopCheck& stop) const {
  if (IsHeld(task)) {
    while (!released_ || !released_()) {
      if (stop) {
        absl::Status stopped = stop();
        if (!stopped.ok()) return stopped;
      }
      absl::SleepFor(absl::Milliseconds(1));
    }
  }
  return engine_->Run(task, stop);
}

planner::EngineWrapper HoldMarkedSearches(std::function<bool()> released) {
  return [released =
              std::move(released)](std::unique_ptr<planner::SweepEngine> engine)
             -> std::unique_ptr<planner::SweepEngine> {
    return std::make_unique<HeldEngine>(std::move(engine), released);
  };
}

}  // namespace chunkplan::testing
