#ifndef CHUNKPLAN_SERVER_SERVICE_MODEL_CONVERT_H_
#define CHUNKPLAN_SERVER_SERVICE_MODEL_CONVERT_H_

// chunkplan.v1.ModelConfig -> the model's parameters (server/models), under
// the limits that bound the work: the one place where a request that names
// its model meets the model families.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "chunkplan/planner/layout_types.h"
#include "chunkplan/v1/chunk_search.pb.h"
#include "server/models/model_description.h"
#include "server/service/model_notes.h"

namespace chunkplan::service {

// What a model request may cost.
struct ModelLimits {
  // Most parameters a described model may have (the server's --max_params).
  uint64_t max_params = 1'000'000;
  // Most bytes of hf_config_json (the server's --max_config_bytes).
  uint64_t max_config_bytes = uint64_t{1} << 20;
};

// The notes of `description`.
ModelNotes NotesOf(const models::ModelDescription& description);

// Sets `out`: `notes`, and the total of the planned `numels` (the planner
// has refused a request whose total passes 64 bits).
void SetModelReport(const ModelNotes& notes,
                    const std::vector<uint64_t>& numels, v1::ModelReport* out);

// The search interval of a request with `model` and search_interval 0:
// GeminiPlugin's own when the trainer passes no hidden_dim.
inline constexpr uint64_t kGeminiDefaultSearchInterval = 1024;

// The parameters of the model `config` describes (its hf_config_json, or
// its param_list_json: models::DescribeParamList, each tp rank's own
// parameters under `tp`), with its LoRA adapters (models::AddLoraAdapters)
// and its freeze/train patterns (models::MarkTrainable) applied. Errors:
// INVALID_ARGUMENT when the text is longer than limits.max_config_bytes
// (checked before it is parsed), for param_list_json beside
// hf_config_json, architecture or lora; then models::DescribeModel's
// (INVALID_ARGUMENT for a bad config, RESOURCE_EXHAUSTED beyond
// limits.max_params; under `tp`, its tensor-parallel refusals) or
// DescribeParamList's, AddLoraAdapters' and MarkTrainable's.
absl::StatusOr<models::ModelDescription> DescribeConfig(
    const v1::ModelConfig& config, const ModelLimits& limits,
    const models::TpOptions& tp = {});

// The tensor parallelism a GeminiSettings (Layout, Plan) or a ModelConfig
// (Describe) asks for (tp_size 0: 1).
models::TpOptions TpOptionsOf(const v1::GeminiSettings& gemini);
models::TpOptions TpOptionsOf(const v1::ModelConfig& config);

// The gathered-chunk rule's view of a description (none: no operations,
// no model named); its operations are moved out.
planner::ModelOperations OperationsOf(
    std::optional<models::ModelDescription> described);
planner::ModelOperations OperationsOf(models::ModelDescription& described);

// The wire form of a description.
v1::ModelDescription ToProto(const models::ModelDescription& description);

// Checks what a ChunkSearchRequest with `model` must hold (numels empty,
// at most one dp degree) and returns the described numels; with
// `described`, the rest of the description (numels moved out) lands there.
// Errors: INVALID_ARGUMENT naming the field for numels and model both set
// or dp_degrees of more than one value; DescribeConfig's, prefixed
// "model: ".
absl::StatusOr<std::vector<uint64_t>> ModelNumels(
    const v1::ChunkSearchRequest& request, const ModelLimits& limits,
    std::optional<models::ModelDescription>* described = nullptr,
    const models::TpOptions& tp = {});

// The description of `request.model` (a request whose dp_degrees are not
// the model's business, as a PlanRequest's search). Errors: INVALID_ARGUMENT
// for numels and model both set; DescribeConfig's, prefixed "model: ".
absl::StatusOr<models::ModelDescription> DescribeRequestModel(
    const v1::ChunkSearchRequest& request, const ModelLimits& limits,
    const models::TpOptions& tp = {});

// The frozen mask a Layout or Plan request uses: `frozen` as sent, or,
// with a described model whose lora, freeze or train is set (or a
// parameter list that marks requires_grad false), the description's. Errors:
// INVALID_ARGUMENT when both are set.
absl::StatusOr<std::vector<bool>> FrozenMask(
    const google::protobuf::RepeatedField<bool>& frozen,
    const std::optional<models::ModelDescription>& described);

}  // namespace chunkplan::service

#endif  // CHUNKPLAN_SERVER_SERVICE_MODEL_CONVERT_H_
