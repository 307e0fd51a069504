#ifndef CHUNKPLAN_SERVER_MODELS_FAMILY_H_
#define CHUNKPLAN_SERVER_MODELS_FAMILY_H_

// What chunkplan knows of one Hugging Face model type: the classes built
// from it, its config class's defaults, and how each class lists its
// parameters. One file per family (or per few families that share their
// code) defines its Family.

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/models/hf_config.h"
#include "server/models/model_description.h"
#include "server/models/param_builder.h"
#include "server/models/tp_policy.h"

namespace chunkplan::models {

struct Family {
  absl::string_view model_type;
  // The class names supported, the default first (the one a trainer
  // instantiates: the language-model head).
  std::vector<absl::string_view> architectures;
  // The transformers config class's defaults, as a JSON object (null where
  // the class defaults to None): what a config that leaves a key out gets.
  absl::string_view defaults;
  // Reads `cfg`, checks it, sets `description`'s hidden_size and shape
  // facts, and adds to `builder` the parameters of `architecture` (one of
  // `architectures`) in that class's model.parameters() order.
  // INVALID_ARGUMENT naming the key for a bad value or an option that is
  // not modelled; the builder keeps its own errors (too many parameters,
  // sizes past 64 bits).
  absl::Status (*build)(const HfConfig& cfg, absl::string_view architecture,
                        ParamBuilder& builder, ModelDescription& description);
  // ColossalAI's ShardFormer policy for every class above (auto_policy.py),
  // or nullptr where it has none: tensor parallelism is then refused.
  const TpPolicy* tp_policy = nullptr;
};

// Every family, sorted by model_type.
const std::vector<const Family*>& Families();

// Each family's Family.
const Family& BertFamily();
const Family& BloomFamily();
const Family& CohereFamily();
const Family& DeepseekV2Family();
const Family& DeepseekV3Family();
const Family& FalconFamily();
const Family& GemmaFamily();
const Family& Gemma2Family();
const Family& Gemma3TextFamily();
const Family& Gpt2Family();
const Family& GptJFamily();
const Family& GptNeoXFamily();
const Family& LlamaFamily();
const Family& Llama4TextFamily();
const Family& MistralFamily();
const Family& MixtralFamily();
const Family& OptFamily();
const Family& Phi3Family();
const Family& Qwen2Family();
const Family& Qwen2MoeFamily();
const Family& Qwen3Family();
const Family& Qwen3MoeFamily();

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_FAMILY_H_
