#ifndef CHUNKPLAN_TESTING_HELD_ENGINE_H_
#define CHUNKPLAN_TESTING_HELD_ENGINE_H_

// What a test uses where it needs a call that is still running: a search
// that the test marks is held by the engine that would run it until the
// call's stop check fires (its deadline, its cancellation, the server's
// budget, the inline slice) or, where the test gives a release, until that
// says so. A test never relies on an input being slow enough: the engines
// got faster, and a loaded machine is slower.

#include <cstdint>
#include <functional>
#include <memory>

#include "chunkplan/planner/planner.h"
#include "server/planner/engines/sweep_engine.h"

namespace chunkplan::testing {

// The parameter size that marks a search to hold: a request with this numel
// among its swept sizes (the filter off and no minimum chunk sweep every
// size). No real model has a parameter of this many elements.
inline constexpr uint64_t kHeldNumel = 999'999'937;

// Whether `task` is a marked search (kHeldNumel among its swept sizes).
bool IsHeld(const planner::SweepTask& task);

// Runs every task on the engine it wraps, except a marked one (IsHeld),
// which it holds: asks `stop` about every millisecond and ends with its
// status when it is not OK; where `released` is given and returns true,
// runs the task on the wrapped engine after all.
class HeldEngine final : public planner::SweepEngine {
 public:
  HeldEngine(std::unique_ptr<planner::SweepEngine> engine,
             std::function<bool()> released);

  planner::Engine kind() const override { return engine_->kind(); }
  absl::Status Usable() const override { return engine_->Usable(); }
  absl::StatusOr<planner::SweepOutcome> Run(
      const planner::SweepTask& task,
      const planner::StopCheck& stop) const override;

 private:
  std::unique_ptr<planner::SweepEngine> engine_;
  std::function<bool()> released_;
};

// An EngineWrapper (planner.h) that puts each engine in a HeldEngine with
// `released` (empty: a marked search is held until it is stopped).
planner::EngineWrapper HoldMarkedSearches(std::function<bool()> released = {});

}  // namespace chunkplan::testing

#endif  // CHUNKPLAN_TESTING_HELD_ENGINE_H_
