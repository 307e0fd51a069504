#ifndef CHUNKPLAN_SERVER_MODELS_LORA_H_
#define CHUNKPLAN_SERVER_MODELS_LORA_H_

// LoRA adapters added to a described model as PEFT adds them
// (peft/tuners/lora: LoraLayer wraps the module, keeping it as base_layer,
// then update_layer adds lora_A = nn.Linear(in, r, bias=False) and lora_B =
// nn.Linear(r, out, bias=False) under the adapter name "default").
// docs/lora.md states the rules and where they were read.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/models/model_description.h"

namespace chunkplan::models {

// PEFT's LoraConfig: r, target_modules (a list), lora_dropout.
struct LoraSpec {
  uint32_t rank = 0;  // 0: no adapters
  std::vector<std::string> targets;
  double dropout = 0;
};

// Adds an adapter to every linear module of `d` whose name equals a target
// or ends in "." + target: the module's own parameters renamed
// "<module>.base_layer.<weight|bias>", followed by
// "<module>.lora_A.default.weight" (rank x in) and
// "<module>.lora_B.default.weight" (out x rank), in the module's place.
// Every base parameter is then frozen and the adapters trainable (d.frozen,
// d.trainable); d.adapters gets the activation estimate's facts;
// d.operations, renumbered, gain each adapted module's lora_A and lora_B
// (one operation each) after the last operation that takes the module's
// own parameters, as PEFT's lora.Linear.forward runs them (base_layer,
// then lora_B(lora_A(dropout(x)))); INTERNAL where no operation takes
// them.
// Nothing is done for rank 0 with no targets. Errors, INVALID_ARGUMENT
// naming the field: rank 0 with targets, rank >= 1 without, an empty
// target or one that matches no linear module ("lora.targets[i]"), a
// dropout outside [0, 1) or NaN, a count past 2^64 - 1; RESOURCE_EXHAUSTED
// where the adapters take the model past `max_params` parameters.
absl::Status AddLoraAdapters(const LoraSpec& spec, uint64_t max_params,
                             ModelDescription& d);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_LORA_H_
