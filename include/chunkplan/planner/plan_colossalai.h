#ifndef CHUNKPLAN_PLANNER_PLAN_COLOSSALAI_H_
#define CHUNKPLAN_PLANNER_PLAN_COLOSSALAI_H_

// An option as GeminiPlugin's keyword arguments, Python text to paste
// (docs/plan.md, "Every option's figures": `colossalai`).

#include <span>
#include <string>

#include "chunkplan/planner/layout_types.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

// `value` as Python's repr writes a float: the shortest digits that read
// back as the same double, fixed notation for exponents -4 to 15 (with ".0"
// when whole), else "<digits>e<sign><two or more digits>"; "inf", "-inf",
// "nan" for the rest.
std::string PythonFloatRepr(double value);

// GeminiPlugin's keyword arguments on one line: placement_policy, the three
// fractions (static only: shard_param_frac as 1.0 when unset), precision
// (`precision`, "fp16" or "bf16"), master_weights,
// enable_gradient_accumulation, pin_memory, max_prefetch (where not 0),
// tp_size (with enable_sequence_parallelism) where above 1, extra_dp_size
// where above 1, and chunk_config_dict in `configs`' order (keyed by the
// zero degree).
std::string ColossalaiKwargs(const GeminiSettings& settings,
                             const std::string& precision,
                             std::span<const ChunkConfig> configs);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_PLANNER_PLAN_COLOSSALAI_H_
