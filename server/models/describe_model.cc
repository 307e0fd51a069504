#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "server/models/config_keys.h"
#include "server/models/family.h"
#include "server/models/hf_config.h"
#include "server/models/model_description.h"

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
                                               uint64_t max_params) {
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
  // Count first: nothing grows before the model is known to fit.
  ParamBuilder counting(max_params, /*store=*/false);
  CHUNKPLAN_RETURN_IF_ERROR(Build(*family, cfg, description, counting));
  ParamBuilder storing(max_params, /*store=*/true);
  storing.names().reserve(counting.count());
  storing.numels().reserve(counting.count());
  CHUNKPLAN_RETURN_IF_ERROR(Build(*family, cfg, description, storing));
  description.names = std::move(storing.names());
  description.numels = std::move(storing.numels());
  description.linears = std::move(storing.linears());
  description.total = storing.total();
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

std::vector<std::string> SupportedModelTypes() {
  std::vector<std::string> types;
  for (const Family* family : Families()) {
    types.emplace_back(std::string(family->model_type));
  }
  return types;
}

}  // namespace chunkplan::models
