#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/models/config_keys.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/model_description.h"
#include "server/models/tp_shard.h"

namespace chunkplan::models {
namespace {

using nlohmann::json;

// The family of the config's model_type; INVALID_ARGUMENT naming an unknown
// one and listing the supported ones.
absl::StatusOr<const Family*> FindFamily(const json& config) {
  auto it = config.find("model_type");
  if (it == config.end() || !it->is_string()) {
    return ConfigError("model_type", "expected a string naming the model type",
                       it == config.end() ? nullptr : &*it);
  }
  for (const Family* family : Families()) {
    if (family->model_type == it->get_ref<const std::string&>()) return family;
  }
  return ConfigError("model_type",
                     absl::StrCat("not a supported model type; supported: ",
                                  absl::StrJoin(SupportedModelTypes(), ", ")),
                     &*it);
}

// The class to describe: `architecture` if given, else the config's
// architectures[0], else the family's default.
absl::StatusOr<std::string> ChooseArchitecture(const Family& family,
                                               const json& config,
                                               absl::string_view architecture) {
  absl::string_view source = "architecture";
  if (architecture.empty()) {
    architecture = family.architectures.front();
    auto it = config.find("architectures");
    if (it != config.end() && !it->is_null()) {
      if (!it->is_array() || (!it->empty() && !it->front().is_string())) {
        return ConfigError("architectures", "expected a list of class names",
                           &*it);
      }
      if (!it->empty()) {
        architecture = it->front().get_ref<const std::string&>();
        source = "config architectures[0]";
      }
    }
  }
  for (absl::string_view supported : family.architectures) {
    if (supported == architecture) return std::string(architecture);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      source, ": \"", absl::CHexEscape(architecture.substr(0, 100)),
      "\" is not supported for model_type \"", family.model_type,
      "\"; supported: ", absl::StrJoin(family.architectures, ", ")));
}

// Whether Python takes `value` as true: not null, false, 0, "", [] or {}.
bool Truthy(const json& value) {
  if (value.is_null()) return false;
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number()) return value != 0;
  if (value.is_string() || value.is_array() || value.is_object()) {
    return !value.empty();
  }
  return true;
}

// Refuses the PretrainedConfig options that change any family's parameters
// and that no family models: pruned_heads (heads taken out of the
// attention), torchscript (the output embeddings cloned, not tied).
absl::Status CheckUnmodelled(const json& config) {
  for (const char* key : {"pruned_heads", "torchscript"}) {
    auto it = config.find(key);
    if (it != config.end() && Truthy(*it)) {
      return ConfigError(key, "not supported (it changes the parameters)",
                         &*it);
    }
  }
  return absl::OkStatus();
}

// The policy that shards `family` at `tp` (nullptr: the model stays
// whole), with its notes and asserts; INVALID_ARGUMENT where tp is refused.
absl::StatusOr<const TpPolicy*> ChooseTpPolicy(const Family& family,
                                               const HfConfig& cfg,
                                               const TpOptions& tp,
                                               ModelDescription& d) {
  if (tp.tp_size == 0) {
    return absl::InvalidArgumentError("gemini.tp_size: must be at least 1");
  }
  d.tp_size = tp.tp_size;
  if (tp.tp_size == 1) {
    if (tp.sequence_parallelism) {
      d.tp_notes.push_back(
          "GeminiPlugin turns enable_sequence_parallelism off without tensor "
          "parallelism (tp_size 1)");
    }
    return nullptr;
  }
  const TpPolicy* policy = family.tp_policy;
  if (policy == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemini.tp_size: ", tp.tp_size, ": model_type \"", family.model_type,
        "\" (", d.architecture,
        ") has no ShardFormer policy in ColossalAI (auto_policy: \"Auto "
        "policy for ",
        d.architecture,
        " is not implemented\"); tensor parallelism needs one: use tp_size "
        "1"));
  }
  if (!policy->refuses_tp.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("gemini.tp_size: ", tp.tp_size, ": model_type \"",
                     family.model_type, "\": ", policy->refuses_tp));
  }
  CHUNKPLAN_ASSIGN_OR_RETURN(bool ignored, TpIgnored(*policy, cfg));
  if (ignored) {
    d.tp_notes.push_back(absl::StrCat(
        family.model_type,
        ": the policy turns tensor parallelism off for this layout (a "
        "warning in ColossalAI): every tp rank holds the whole model"));
    return nullptr;
  }
  CHUNKPLAN_RETURN_IF_ERROR(
      CheckTpHeads(*policy, family.model_type, cfg, tp.tp_size));
  if (tp.sequence_parallelism && !policy->ignores_sp.empty()) {
    d.tp_notes.push_back(std::string(policy->ignores_sp));
  }
  if (tp.sequence_parallelism && policy->ignores_sp.empty()) {
    CHUNKPLAN_RETURN_IF_ERROR(CheckSequenceParallelism(
        policy->causal_lm, family.model_type, tp.tp_size, std::nullopt));
  }
  d.tp_policy = std::string(policy->file);
  d.tp_causal_lm = policy->causal_lm;
  d.tp_column_head = std::any_of(
      policy->rules.begin(), policy->rules.end(), [](const TpRule& r) {
        return r.module == "lm_head" && r.layer == TpLayer::kColumn;
      });
  d.tp_sequence_parallelism =
      tp.sequence_parallelism && policy->ignores_sp.empty();
  return policy;
}

// One run of the family's build over `builder`; the first error of either.
absl::Status Build(const Family& family, const HfConfig& cfg,
                   ModelDescription& description, ParamBuilder& builder) {
  CHUNKPLAN_RETURN_IF_ERROR(
      family.build(cfg, description.architecture, builder, description));
  return builder.status();
}

}  // namespace

absl::StatusOr<ModelDescription> DescribeModel(std::string_view hf_config_json,
                                               std::string_view architecture,
                                               uint64_t max_params,
                                               const TpOptions& tp) {
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const json config,
      ParseConfigJson({hf_config_json.data(), hf_config_json.size()}));
  CHUNKPLAN_ASSIGN_OR_RETURN(const Family* family, FindFamily(config));
  CHUNKPLAN_RETURN_IF_ERROR(CheckUnmodelled(config));
  ModelDescription description;
  description.model_type = std::string(family->model_type);
  CHUNKPLAN_ASSIGN_OR_RETURN(
      description.architecture,
      ChooseArchitecture(*family, config,
                         {architecture.data(), architecture.size()}));
  absl::StatusOr<json> defaults = ParseConfigJson(family->defaults);
  if (!defaults.ok()) {
    return absl::InternalError(absl::StrCat("the defaults of ",
                                            family->model_type, ": ",
                                            defaults.status().message()));
  }
  const HfConfig cfg(config, *defaults);
  CHUNKPLAN_ASSIGN_OR_RETURN(const TpPolicy* policy,
                             ChooseTpPolicy(*family, cfg, tp, description));
  // Count first: nothing grows before the model is known to fit.
  ParamBuilder counting(max_params, /*store=*/false);
  ParamBuilder storing(max_params, /*store=*/true);
  if (policy != nullptr) {
    counting.ShardFor(*policy, tp.tp_size);
    storing.ShardFor(*policy, tp.tp_size);
  }
  CHUNKPLAN_RETURN_IF_ERROR(Build(*family, cfg, description, counting));
  storing.names().reserve(counting.count());
  storing.numels().reserve(counting.count());
  CHUNKPLAN_RETURN_IF_ERROR(Build(*family, cfg, description, storing));
  description.names = std::move(storing.names());
  description.numels = std::move(storing.numels());
  description.operations = std::move(storing.operations());
  description.operation_layers = std::move(storing.operation_layers());
  description.linears = std::move(storing.linears());
  description.total = storing.total();
  if (policy != nullptr && description.vocab_size != 0 &&
      std::any_of(policy->rules.begin(), policy->rules.end(),
                  [](const TpRule& r) { return r.layer == TpLayer::kVocab; })) {
    description.padded_vocab_size =
        PaddedVocab(description.vocab_size, tp.tp_size);
  }
  description.trainable = description.total;
  std::set<std::string, std::less<>> read = cfg.keys_read();
  // Read here, before the family: the type, the class, the refused options.
  for (const char* key :
       {"model_type", "architectures", "pruned_heads", "torchscript"}) {
    read.emplace(key);
  }
  description.config_keys = AccountForKeys(config, read, *defaults);
  return description;
}

absl::Status CheckSequenceParallelMesh(const ModelDescription& d,
                                       uint64_t zero_x_extra_dp) {
  if (!d.tp_sequence_parallelism) return absl::OkStatus();
  return CheckSequenceParallelism(d.tp_causal_lm, d.model_type, d.tp_size,
                                  zero_x_extra_dp);
}

std::vector<std::string> SupportedModelTypes() {
  std::vector<std::string> types;
  for (const Family* family : Families()) {
    types.emplace_back(std::string(family->model_type));
  }
  return types;
}

}  // namespace chunkplan::models
