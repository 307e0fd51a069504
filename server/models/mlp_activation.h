#ifndef CHUNKPLAN_SERVER_MODELS_MLP_ACTIVATION_H_
#define CHUNKPLAN_SERVER_MODELS_MLP_ACTIVATION_H_

// The MLP activation of a LayerNorm family (gpt_neox, opt, ...) as the
// activation estimate counts its saves (transformers' ACT2FN).

#include <string>

#include "server/models/model_description.h"

namespace chunkplan::models {

// Sets t's activation from ACT2FN's `name`: gelu, gelu_pytorch_tanh, silu
// and swish one op that keeps its input; gelu_new and gelu_fast tanh
// arithmetic; relu, which keeps its result. Else sets t.not_estimated to
// the reason and returns false.
bool SetMlpActivation(const std::string& key, const std::string& name,
                      DecoderTraits& t);

}  // namespace chunkplan::models

#endif  // CHUNKPLAN_SERVER_MODELS_MLP_ACTIVATION_H_
