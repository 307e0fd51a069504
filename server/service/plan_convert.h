#ifndef CHUNKPLAN_SERVER_SERVICE_PLAN_CONVERT_H_
#define CHUNKPLAN_SERVER_SERVICE_PLAN_CONVERT_H_

// chunkplan.v1.PlanRequest / PlanResponse <-> the planner's Plan values
// (include/chunkplan/planner/plan_types.h). The search's rules: docs/plan.md.

#include <string>

#include "absl/status/statusor.h"
#include "chunkplan/planner/plan_types.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "server/service/model_convert.h"

namespace chunkplan::service {

// The planner's Plan request for `request`. The search part as Layout's
// (its errors prefixed "search."), except that dp_degrees is ignored (each
// option's world size): with `search.model` the model is described (within
// `limits`) and, with a `workload`, its shape facts fill
// PlanWorkload.shape. `gemini` as Layout's with its placement fields
// ignored; its precision named "fp16" or "bf16". `frozen`, `cluster`,
// `max_options` and the workload's fields are copied; the planner checks
// their values. Errors: INVALID_ARGUMENT naming the field for an enum value
// outside chunkplan.v1 (search.engine, gemini.precision, gemini.optimizer),
// and "workload: ..." for a workload without a search.model of a
// decoder-only family; the description's errors ("search.model: ...").
// `notes` (when given) gets the model's notes (NotesOf).
absl::StatusOr<planner::PlanRequest> FromProto(const v1::PlanRequest& request,
                                               const ModelLimits& limits = {},
                                               ModelNotes* notes = nullptr);

// FromProto, refused in the oracle's order (docs/plan.md): the cluster's
// fields (planner::CheckCluster), then a present workload's micro_batch and
// sequence_length (0: INVALID_ARGUMENT naming it), then FromProto's errors.
// The cluster is checked here only when the request is refused otherwise:
// Planner::Plan checks the cluster of a request that converts, so each
// request has it checked once (one whose only fault is its cluster has its
// model described before Planner::Plan refuses it).
// `notes` as FromProto's.
absl::StatusOr<planner::PlanRequest> FromProtoInOrder(
    const v1::PlanRequest& request, const ModelLimits& limits = {},
    ModelNotes* notes = nullptr);

// The wire form of a Plan result; every option's gemini.precision is
// `precision` (the request's: the planner's settings do not carry it).
v1::PlanResponse ToProto(const planner::PlanResult& result,
                         v1::Precision precision);

// "fp16" for PRECISION_FP16, "bf16" for PRECISION_BF16 (GeminiPlugin's
// precision argument).
std::string PrecisionName(v1::Precision precision);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_PLAN_CONVERT_H_
