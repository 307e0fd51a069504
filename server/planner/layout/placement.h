#ifndef CHUNKPLAN_SERVER_PLANNER_LAYOUT_PLACEMENT_H_
#define CHUNKPLAN_SERVER_PLANNER_LAYOUT_PLACEMENT_H_

// GeminiPlugin's placement policies replayed on a chunk layout: which chunks
// keep their optimizer side, their fp16 shard or their whole fp16 chunk
// where, and so every rank's device and host bytes. The rules, read from
// ColossalAI's placement_policy.py, gemini_ddp.py, gemini_optimizer.py and
// chunk.py, are in docs/placement.md.

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "server/planner/layout/offload_order.h"

namespace chunkplan::planner {

// The placement fields of `settings`: fractions in [0, 1] and not NaN, and
// no field of one policy set under the other (shard_param_frac present, an
// offload fraction non-zero under auto; device_memory_bytes under static).
// Errors: INVALID_ARGUMENT naming the field (gemini.<field>).
absl::Status CheckPlacement(const GeminiSettings& settings);

// Whether the chunks `settings`' placement moves depend on the chunk size:
// static with an offload_optim_frac strictly between 0 and 1,
// shard_param_frac < 1, or an honoured offload_param_frac. Elsewhere
// (nothing moved; auto, or offload_optim_frac 1 alone) the byte model
// carries the placement (layout/byte_model_of.h); here the peak objective lays
// out and places each candidate (docs/placement.md).
bool MovesBySize(const GeminiSettings& settings);

// PlaceOnDevices' most_loaded_rank.device_bytes alone, in 128 bits: rank 0
// of every group under the chunk order that loads its device most. Errors:
// RESOURCE_EXHAUSTED from ExtremeOffloadSet. Requires CheckPlacement to
// have passed.
absl::StatusOr<unsigned __int128> MostLoadedDeviceBytes(
    std::span<const GroupLayout> groups, uint64_t frozen_elements,
    const GeminiSettings& settings);

// What the policy does with the chunks of `groups`, and the bytes of rank 0
// and rank P - 1 of every group (with `frozen_elements` frozen elements):
// result.most_loaded_rank, most_loaded_rank_least, least_loaded_rank and
// placement. Default settings give today's static figures. Errors:
// INVALID_ARGUMENT when a count exceeds 2^64-1 bytes; RESOURCE_EXHAUSTED
// from ExtremeOffloadSet. Requires CheckPlacement to have passed.
absl::Status PlaceOnDevices(std::span<const GroupLayout> groups,
                            uint64_t frozen_elements,
                            const GeminiSettings& settings,
                            LayoutResult* result);

// PlaceOnDevices' result.most_loaded_rank alone (the other ranks are not
// computed): for searches that ask many settings of one layout. The same
// requirements and errors.
absl::StatusOr<RankMemory> MostLoadedRank(std::span<const GroupLayout> groups,
                                          uint64_t frozen_elements,
                                          const GeminiSettings& settings);

// Offload fractions that PlaceOnDevices cannot tell apart on one layout,
// for searches over a fraction: ColossalAI compares its budgets, T x
// offload_optim_frac and T x (1 - offload_param_frac) (T the inflated
// total), only with sums of non-gathered chunks' fp16 bytes, all multiples of
// their gcd (docs/plan.md).
class FractionClasses {
 public:
  // The layout `groups` under the byte rates of `settings`.
  FractionClasses(std::span<const GroupLayout> groups,
                  const GeminiSettings& settings);

  // Equal for two offload_optim_frac values in (0, 1) that offload the same
  // chunks in every order (all else equal).
  WideBytes OptimClass(double fraction) const;

  // Equal for two offload_param_frac values in (0, 1] whose walk moves the
  // same chunks (all else equal).
  WideBytes ParamClass(double fraction) const;

 private:
  double total_ = 0;   // T as the float ColossalAI multiplies
  WideBytes gcd_ = 0;  // of the non-gathered chunks' fp16 bytes; 0: none
};

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_LAYOUT_PLACEMENT_H_
