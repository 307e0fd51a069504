#include "server/models/mlp_activation.h"

#include "absl/strings/str_cat.h"

namespace chunkplan::models {

bool SetMlpActivation(const std::string& key, const std::string& name,
                      DecoderTraits& t) {
  t.gelu_new = name == "gelu_new";
  t.gelu_fast = name == "gelu_fast";
  t.relu = name == "relu";
  if (t.gelu_new || t.gelu_fast || t.relu || name == "gelu" ||
      name == "gelu_pytorch_tanh" || name == "silu" || name == "swish") {
    return true;
  }
  t.not_estimated = absl::StrCat(
      key, " \"", name,
      "\" is not modelled (gelu, gelu_new, gelu_fast, gelu_pytorch_tanh, "
      "relu, silu, swish are)");
  return false;
}

}  // namespace chunkplan::models
