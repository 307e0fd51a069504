#ifndef CHUNKPLAN_SERVER_PLANNER_CANDIDATE_BYTE_MODEL_H_
#define CHUNKPLAN_SERVER_PLANNER_CANDIDATE_BYTE_MODEL_H_

// The one byte model: bytes per element of each part a rank keeps under one
// set of GeminiPlugin settings, host+device, so that Layout
// (layout/rank_memory.h), the layout objectives and the CUDA kernel
// (layout_measures.h) count with the same figures. Built from the settings
// by layout/byte_model_of.h; the rules are in docs/layout.md. Every part below
// lives on the device, the pinned copies on the host; a placement policy
// that moves a part to the host changes where it is counted, not these
// rates.

#include <cstdint>

#include "server/planner/candidate/host_device.h"

namespace chunkplan::planner {

struct ByteModel {
  // Per held element (each element of a rank's shards and of the gathered
  // chunks).
  uint64_t param = 2;   // the fp16/bf16 chunk
  uint64_t master = 4;  // the fp32 master copy; 0 without master weights
  uint64_t grad = 0;    // a separate gradient chunk; 0 when gradients
                        // reuse the fp16 chunk
  // Per optimized element (the real elements of a rank's shards and the
  // used elements of the gathered chunks): optimizer states x their bytes.
  uint64_t optimizer = 8;
  // Per frozen element (held whole by every rank, in fp16/bf16).
  uint64_t frozen = 2;
  // Per element of the largest non-gathered chunk, gathered to compute.
  uint64_t gathered = 2;
  // Per element of a rank's shards in pinned host memory; 0 without
  // pin_memory.
  uint64_t pinned = 6;
  // Per element of a rank's shards of a chunk whose optimizer side the
  // placement puts on the host, in pageable host memory: held() without
  // pin_memory, else 0 (the pinned copies hold them).
  uint64_t pageable = 0;
  // Per held and per optimized element of a non-gathered chunk, what the
  // placement keeps on the host instead of the device when it puts every
  // non-gathered chunk's optimizer side there (auto, or static with
  // offload_optim_frac 1): master + grad, and optimizer; else 0.
  uint64_t host_side = 0;
  uint64_t host_optimizer = 0;

  // Bytes per held element on the device.
  CHUNKPLAN_HOST_DEVICE constexpr uint64_t held() const {
    return param + master + grad;
  }
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_CANDIDATE_BYTE_MODEL_H_
