#ifndef CHUNKPLAN_SERVER_MODELS_FAMILY_H_
#define CHUNKPLAN_SERVER_MODELS_FAMILY_H_

// What chunkplan knows of one Hugging Face model type: the classes built
// from it and how each lists its parameters. One file per family (or per
// few families that share their code) defines its Family.

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "server/models/model_description.h"
#include "server/models/param_builder.h"

namespace chunkplan::models {

struct Family {
  absl::string_view model_type;
  // The class names supported, the default first (the one a trainer
  // instantiates: the language-model head).
  std::vector<absl::string_view> architectures;
  // Reads `config` (the family's defaults for absent keys), checks it, sets
  // `description`'s hidden_size and shape facts, and adds to `builder` the
  // parameters of `architecture` (one of `architectures`) in that class's
  // model.parameters() order. INVALID_ARGUMENT naming the key for a bad
  // value or an option that is not modelled; the builder keeps its own
  // errors (too many parameters, sizes past 64 bits).
  absl::Status (*build)(const nlohmann::json& config,
                        absl::string_view architecture, ParamBuilder& builder,
                        ModelDescription& description);
};

// Every family, sorted by model_type.
const std::vector<const Family*>& Families();

// Each family's Family (one file per family, or per few that share code).
const Family& BertFamily();
const Family& GemmaFamily();
const Family& Gemma2Family();
const Family& Gpt2Family();
const Family& GptNeoXFamily();
const Family& LlamaFamily();
const Family& MistralFamily();
const Family& MixtralFamily();
const Family& OptFamily();
const Family& Phi3Family();
const Family& Qwen2Family();
const Family& Qwen2MoeFamily();

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_FAMILY_H_
