#ifndef CHUNKPLAN_SERVER_SERVICE_WORKLOAD_CONVERT_H_
#define CHUNKPLAN_SERVER_SERVICE_WORKLOAD_CONVERT_H_

// chunkplan.v1.Workload -> the planner's PlanWorkload, for the Layout and
// Plan requests alike (docs/plan.md, "Activations: an estimate").

#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "chunkplan/planner/workload_types.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "server/models/model_description.h"
#include "server/service/model_convert.h"

namespace chunkplan::service {

// The workload's sizes, checked before the model is described:
// INVALID_ARGUMENT naming workload.micro_batch, then
// workload.sequence_length, when it is 0.
absl::Status CheckWorkloadSizes(const v1::Workload& workload);

// What tp rank 0 of the model `m` describes runs (its tp_size; the split
// the activation estimate models, or in not_split why not: the policy's
// forward not modelled, sequence parallelism on, tensor parallelism turned
// off by the policy).
planner::TensorParallelShape TpShapeOf(const models::ModelDescription& m);

// The activation estimate's inputs: the shape and layer traits of the
// described model, or, where numels or a parameter list
// (ModelConfig.param_list_json) were sent, of workload.shape_from
// (described within `limits`), and `workload`'s fields (flash_attention
// true is attention ATTENTION_FLASH_ATTENTION_2). INVALID_ARGUMENT
// "workload: ..." without either (the message says how to give a shape),
// with both, for a model that is not decoder-only, or for flash_attention
// true beside another attention; shape_from's description errors prefixed
// "workload.shape_from: ". A family whose layer is not modelled passes with
// shape.not_estimated set (the estimate answers UNIMPLEMENTED with it).
absl::StatusOr<planner::PlanWorkload> PlanWorkloadOf(
    const v1::Workload& workload,
    const std::optional<models::ModelDescription>& model,
    const ModelLimits& limits);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_WORKLOAD_CONVERT_H_
