#ifndef CHUNKPLAN_SERVER_PLANNER_REQUEST_REQUEST_CHECKS_H_
#define CHUNKPLAN_SERVER_PLANNER_REQUEST_REQUEST_CHECKS_H_

// Field-by-field checks of a SearchRequest. Each error is INVALID_ARGUMENT
// with a message that starts with the field (and index) at fault.
//
// Why was my request refused? Every refusal, where it is made, and why there
// (in the order a Search call meets them; the CLI's --local and the fuzzer
// take the same path from the second row on):
//
//   status              check                          file (function)
//   ------------------  -----------------------------  ----------------------
//   INVALID_ARGUMENT    the body is not a              service/request_intake
//                       ChunkSearchRequest             (ParseRequest)
//   RESOURCE_EXHAUSTED  numels or dp_degrees longer    service/request_intake
//                       than --max_params              (CheckAndConvert)
//   INVALID_ARGUMENT    engine outside the enum        service/proto_convert
//                                                      (FromProto)
//   RESOURCE_EXHAUSTED  --max_concurrent_searches      service/
//                       already running                chunk_search_service
//   INVALID_ARGUMENT    shape: no numels, a size or    planner/request/
//                       degree out of range, interval  request_checks (here:
//                       0, NaN/inf/negative _m values  CheckShape,
//                                                      RoundedMebiElements)
//   INVALID_ARGUMENT    sums, lcms, the start size,    planner/request/
//                       the last candidate or padding  search_plan
//                       sums beyond 64 bits            (BuildSearchPlan)
//   INVALID_ARGUMENT    gemini.tp_size > 1 for a       models/describe_model
//                       family without a ShardFormer   (ChooseTpPolicy),
//                       policy or one that refuses;    models/tp_shard
//                       heads, kv heads or features    (CheckTpHeads,
//                       not divisible by tp            TpLocalDims)
//   INVALID_ARGUMENT    Plan: tp_sizes or              service/plan_convert
//                       extra_dp_sizes with a 0, a     (CheckMeshSizes,
//                       repeat or over 8 entries;      PlanSearch)
//                       search_tp without a model
//   INVALID_ARGUMENT    Layout: frozen of the wrong    planner/layout/
//                       length; given configs for an   layout_checks
//                       absent degree, a degree with   (CheckFrozen,
//                       none or two, a chunk size of   CheckGivenConfigs)
//                       0 or not a multiple of P
//   INVALID_ARGUMENT    Layout: a padding or byte      planner/layout/
//                       count beyond 64 bits           chunk_placement,
//                                                      rank_memory
//   INVALID_ARGUMENT    Frontier, Layout: an engine    planner/engines/
//                       that does not serve the        engine_choice
//                       objective                      (EngineServes)
//   FAILED_PRECONDITION an engine this binary or       planner/planner.cc
//                       machine cannot run (CUDA       (Planner's Choose),
//                       without a usable device)       engines/device_health
//   RESOURCE_EXHAUSTED  sweep work beyond              planner/engines/
//                       --max_sweep_work or            cpu_sweep_engine,
//                       --max_cuda_work                cuda_engine.cu
//   DEADLINE_EXCEEDED,  the client's deadline or       service/call_stop
//   CANCELLED           --max_search_time passed, or   (CallStop), asked
//                       the call was cancelled         by every engine
//
// Why the split: only the service sees bytes, its own flags and the wire's
// enum values, so those checks are its; everything a request's values can
// get wrong is the planner's, so every caller of the planner gets the same
// answer; the overflow checks need the plan's own arithmetic, so they live
// where it is done; limits that depend on the engine live in the engine.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "chunkplan/planner/search_types.h"

namespace chunkplan::planner {

// The largest size, total or chunk the planner accepts: numpy holds the
// seed's sizes as int64.
inline constexpr uint64_t kMaxElements = (uint64_t{1} << 63) - 1;

// numels non-empty, each <= kMaxElements; dp_degrees of length 0, 1 or
// numels.size(), each >= 1; search_interval >= 1.
absl::Status CheckShape(const SearchRequest& request);

// The degree of parameter i under the dp_degrees rule (empty: 1; one value:
// shared). Requires CheckShape to have passed.
uint32_t DegreeOf(const SearchRequest& request, size_t i);

// Python's round(value * 1024**2) as an element count, for the field named
// `field`: finite, and rounding to a value in [0, kMaxElements].
absl::StatusOr<uint64_t> RoundedMebiElements(double value,
                                             absl::string_view field);

}  // namespace chunkplan::planner

#endif  // CHUNKPLAN_SERVER_PLANNER_REQUEST_REQUEST_CHECKS_H_
