#include "server/service/workload_convert.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "server/service/proto_convert.h"

namespace chunkplan::service {

absl::Status CheckWorkloadSizes(const v1::Workload& workload) {
  if (workload.micro_batch() == 0) {
    return absl::InvalidArgumentError("workload.micro_batch: 0; at least 1");
  }
  if (workload.sequence_length() == 0) {
    return absl::InvalidArgumentError(
        "workload.sequence_length: 0; at least 1");
  }
  return absl::OkStatus();
}

absl::StatusOr<planner::PlanWorkload> PlanWorkloadOf(
    const v1::Workload& workload,
    const std::optional<models::ModelDescription>& described,
    const ModelLimits& limits) {
  if (described.has_value() && workload.has_shape_from()) {
    return absl::InvalidArgumentError(
        "workload.shape_from: set with search.model, whose shape the "
        "estimate takes; send one of them");
  }
  std::optional<models::ModelDescription> model = described;
  if (!model.has_value() && workload.has_shape_from()) {
    absl::StatusOr<models::ModelDescription> shape =
        DescribeConfig(workload.shape_from(), limits);
    if (!shape.ok()) return Prefixed("workload.shape_from: ", shape.status());
    model = *std::move(shape);
  }
  if (!model.has_value()) {
    return absl::InvalidArgumentError(
        "workload: the activation estimate needs the model's shape: send "
        "search.model (a decoder-only family) or, with numels, "
        "workload.shape_from");
  }
  if (!model->decoder_only) {
    return absl::InvalidArgumentError(absl::StrCat(
        "workload: the activation estimate covers decoder-only models; ",
        model->architecture, " (model_type \"", model->model_type,
        "\") is not one"));
  }
  planner::PlanWorkload out;
  out.shape.num_layers = model->num_layers;
  out.shape.hidden_size = model->hidden_size;
  out.shape.num_attention_heads = model->num_attention_heads;
  out.shape.vocab_size = model->vocab_size;
  const models::AdapterFacts& a = model->adapters;
  out.shape.adapters = {a.rank,          a.dropout,
                        a.layer_modules, a.layer_in_features,
                        a.other_modules, a.other_in_features};
  out.workload.micro_batch = workload.micro_batch();
  out.workload.sequence_length = workload.sequence_length();
  out.workload.activation_checkpointing = workload.activation_checkpointing();
  out.workload.flash_attention = workload.flash_attention();
  return out;
}

}  // namespace chunkplan::service
