#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_BYTE_MODEL_OF_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_BYTE_MODEL_OF_H_

// The byte model (candidate/byte_model.h) of a request's Gemini settings.

#include "chunkplan/planner/layout_types.h"
#include "server/planner/candidate/byte_model.h"

namespace chunkplan::planner {

// Bytes per element of the fp16/bf16 chunks and of the fp32 master copies,
// and Adam's states per optimized element.
inline constexpr uint64_t kHalfBytes = 2;
inline constexpr uint64_t kMasterBytes = 4;
inline constexpr uint64_t kAdamStates = 2;

// The rates under `settings` (read from zero/gemini/gemini_ddp.py,
// gemini_optimizer.py and chunk.py; docs/layout.md): gradients get their
// own chunk without master weights or with gradient accumulation; Adam's
// states take the master copy's width. Under auto placement or
// offload_optim_frac 1 every non-gathered chunk's master, gradient and
// states are on the host (docs/placement.md).
constexpr ByteModel ByteModelOf(const GeminiSettings& settings) {
  const bool master = settings.master_weights;
  const bool separate_grads = !master || settings.gradient_accumulation;
  ByteModel m;
  m.param = kHalfBytes;
  m.master = master ? kMasterBytes : 0;
  m.grad = separate_grads ? kHalfBytes : 0;
  m.optimizer = settings.optimizer == Optimizer::kNone
                    ? 0
                    : kAdamStates * (master ? kMasterBytes : kHalfBytes);
  m.frozen = kHalfBytes;
  m.gathered = kHalfBytes;
  m.pinned = settings.pin_memory ? m.held() : 0;
  m.pageable = settings.pin_memory ? 0 : m.held();
  if (settings.placement == Placement::kAuto ||
      settings.offload_optim_frac == 1.0) {
    m.host_side = m.master + m.grad;
    m.host_optimizer = m.optimizer;
  }
  return m;
}

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_BYTE_MODEL_OF_H_
