#include "server/service/model_convert.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/models/lora.h"
#include "server/models/param_list.h"
#include "server/models/trainable.h"

namespace chunkplan::service {

models::TpOptions TpOptionsOf(const v1::GeminiSettings& gemini) {
  models::TpOptions tp;
  tp.tp_size = gemini.tp_size() == 0 ? 1 : gemini.tp_size();
  tp.sequence_parallelism = gemini.enable_sequence_parallelism();
  return tp;
}

models::TpOptions TpOptionsOf(const v1::ModelConfig& config) {
  models::TpOptions tp;
  tp.tp_size = config.tp_size() == 0 ? 1 : config.tp_size();
  tp.sequence_parallelism = config.enable_sequence_parallelism();
  return tp;
}

namespace {

// The text of `field` within limits.max_config_bytes, or INVALID_ARGUMENT
// naming it (checked before the text is parsed).
absl::Status CheckConfigBytes(const std::string& text, absl::string_view field,
                              const ModelLimits& limits) {
  if (text.size() <= limits.max_config_bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, " is ", text.size(),
                   " bytes; this server takes a config of at most ",
                   limits.max_config_bytes, " bytes (--max_config_bytes)"));
}

// The description of config.param_list_json (models::DescribeParamList):
// its numels are each tp rank's own (no policy applies), `tp` noted.
// INVALID_ARGUMENT beside hf_config_json, architecture or lora.
absl::StatusOr<models::ModelDescription> DescribeListed(
    const v1::ModelConfig& config, const ModelLimits& limits,
    const models::TpOptions& tp) {
  if (!config.hf_config_json().empty()) {
    return absl::InvalidArgumentError(
        "hf_config_json and param_list_json are both set; send one of them");
  }
  if (!config.architecture().empty()) {
    return absl::InvalidArgumentError(
        "architecture: applies to hf_config_json, not to a parameter list");
  }
  if (config.lora().rank() != 0 || config.lora().targets_size() != 0) {
    return absl::InvalidArgumentError(
        "lora: a parameter list does not say which parameters belong to "
        "nn.Linear modules; dump the list from the model PEFT adapted (its "
        "adapters trainable, the rest requires_grad=False), or send "
        "hf_config_json");
  }
  if (absl::Status s =
          CheckConfigBytes(config.param_list_json(), "param_list_json", limits);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<models::ModelDescription> description =
      models::DescribeParamList(config.param_list_json(), limits.max_params);
  if (!description.ok()) return description;
  description->tp_size = tp.tp_size;
  if (tp.tp_size > 1) {
    description->tp_notes.push_back(
        "a parameter list is taken as each tp rank's own parameters: no "
        "ShardFormer policy applies to it");
  }
  return description;
}

}  // namespace

absl::StatusOr<models::ModelDescription> DescribeConfig(
    const v1::ModelConfig& config, const ModelLimits& limits,
    const models::TpOptions& tp) {
  absl::StatusOr<models::ModelDescription> description;
  if (!config.param_list_json().empty()) {
    description = DescribeListed(config, limits, tp);
  } else {
    const std::string& text = config.hf_config_json();
    if (absl::Status s = CheckConfigBytes(text, "hf_config_json", limits);
        !s.ok()) {
      return s;
    }
    description = models::DescribeModel(std::string_view(text),
                                        std::string_view(config.architecture()),
                                        limits.max_params, tp);
  }
  if (!description.ok()) return description;
  const v1::Lora& lora = config.lora();
  if (tp.tp_size > 1 && lora.rank() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemini.tp_size: ", tp.tp_size,
        ": LoRA adapters on tensor-parallel shards are not modelled (lora "
        "with tp_size 1 only)"));
  }
  models::LoraSpec spec{
      .rank = lora.rank(),
      .targets = {lora.targets().begin(), lora.targets().end()},
      .dropout = lora.dropout()};
  if (absl::Status s =
          models::AddLoraAdapters(spec, limits.max_params, *description);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          models::MarkTrainable(config.freeze(), config.train(), *description);
      !s.ok()) {
    return s;
  }
  return description;
}

planner::ModelOperations OperationsOf(
    std::optional<models::ModelDescription> described) {
  planner::ModelOperations out;
  if (!described.has_value()) return out;
  out.forward = std::move(described->operations);
  out.layers = std::move(described->operation_layers);
  if (out.forward.empty()) {
    out.unsequenced_model_type = described->model_type;
    if (described->adapters.rank != 0) {
      out.unsequenced_model_type += " with LoRA adapters";
    }
  }
  return out;
}

v1::ModelDescription ToProto(const models::ModelDescription& description) {
  v1::ModelDescription out;
  out.set_model_type(description.model_type);
  out.set_architecture(description.architecture);
  out.set_hidden_size(description.hidden_size);
  out.mutable_numels()->Add(description.numels.begin(),
                            description.numels.end());
  out.mutable_names()->Reserve(static_cast<int>(description.names.size()));
  for (const std::string& name : description.names) out.add_names(name);
  out.set_total(description.total);
  out.set_tp_size(description.tp_size);
  out.set_tp_policy(description.tp_policy);
  out.set_padded_vocab_size(description.padded_vocab_size);
  for (const std::string& note : description.tp_notes) out.add_tp_notes(note);
  out.mutable_frozen()->Add(description.frozen.begin(),
                            description.frozen.end());
  out.set_trainable(description.trainable);
  const models::ConfigKeys& keys = description.config_keys;
  for (const std::string& key : keys.read) out.add_config_keys_read(key);
  for (const std::string& key : keys.ignored) out.add_config_keys_ignored(key);
  for (const std::string& key : keys.harmless) {
    out.add_config_keys_harmless(key);
  }
  for (const std::string& warning : keys.warnings) out.add_warnings(warning);
  return out;
}

absl::StatusOr<std::vector<bool>> FrozenMask(
    const google::protobuf::RepeatedField<bool>& frozen,
    const std::optional<models::ModelDescription>& described) {
  if (!described.has_value() || described->frozen.empty()) {
    return std::vector<bool>(frozen.begin(), frozen.end());
  }
  if (!frozen.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "frozen has ", frozen.size(),
        " entries and search.model sets lora, freeze or train (or its "
        "parameter list marks requires_grad false); send one of them"));
  }
  return described->frozen;
}

ModelNotes NotesOf(const models::ModelDescription& description) {
  return {description.model_type, description.architecture,
          description.config_keys.warnings};
}

void SetModelReport(const ModelNotes& notes,
                    const std::vector<uint64_t>& numels, v1::ModelReport* out) {
  uint64_t total = 0;
  for (uint64_t numel : numels) total += numel;
  out->set_total_param_size(total);
  out->set_model_type(notes.model_type);
  out->set_architecture(notes.architecture);
  for (const std::string& warning : notes.warnings) out->add_warnings(warning);
}

absl::StatusOr<models::ModelDescription> DescribeRequestModel(
    const v1::ChunkSearchRequest& request, const ModelLimits& limits,
    const models::TpOptions& tp) {
  if (request.numels_size() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "numels (", request.numels_size(),
        " entries) and model are both set; send exactly one of them"));
  }
  absl::StatusOr<models::ModelDescription> description =
      DescribeConfig(request.model(), limits, tp);
  if (!description.ok()) {
    return absl::Status(
        description.status().code(),
        absl::StrCat("model: ", description.status().message()));
  }
  return description;
}

absl::StatusOr<std::vector<uint64_t>> ModelNumels(
    const v1::ChunkSearchRequest& request, const ModelLimits& limits,
    std::optional<models::ModelDescription>* described,
    const models::TpOptions& tp) {
  if (request.numels_size() == 0 && request.dp_degrees_size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dp_degrees has ", request.dp_degrees_size(),
        " values; with model it holds at most one, the degree of every "
        "parameter"));
  }
  absl::StatusOr<models::ModelDescription> description =
      DescribeRequestModel(request, limits, tp);
  if (!description.ok()) return description.status();
  std::vector<uint64_t> numels = std::move(description->numels);
  if (described != nullptr) {
    description->numels.clear();
    *described = *std::move(description);
  }
  return numels;
}

}  // namespace chunkplan::service
