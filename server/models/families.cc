#include <algorithm>

#include "server/models/family.h"

namespace chunkplan::models {

const std::vector<const Family*>& Families() {
  static const std::vector<const Family*>* const families = [] {
    auto* all = new std::vector<const Family*>{
        &BertFamily(),    &GemmaFamily(), &Gemma2Family(),  &Gpt2Family(),
        &GptNeoXFamily(), &LlamaFamily(), &MistralFamily(), &MixtralFamily(),
        &OptFamily(),     &Phi3Family(),  &Qwen2Family(),   &Qwen2MoeFamily()};
    std::sort(all->begin(), all->end(), [](const Family* a, const Family* b) {
      return a->model_type < b->model_type;
    });
    return all;
  }();
  return *families;
}

}  // namespace chunkplan::models
