#include <algorithm>

#include "server/models/family.h"

namespace chunkplan::models {

const std::vector<const Family*>& Families() {
  static const std::vector<const Family*>* const families = [] {
    auto* all = new std::vector<const Family*>{
        &BertFamily(),       &BloomFamily(),      &CohereFamily(),
        &DeepseekV2Family(), &DeepseekV3Family(), &FalconFamily(),
        &GemmaFamily(),      &Gemma2Family(),     &Gemma3TextFamily(),
        &Gpt2Family(),       &GptJFamily(),       &GptNeoXFamily(),
        &LlamaFamily(),      &Llama4TextFamily(), &MistralFamily(),
        &MixtralFamily(),    &OptFamily(),        &Phi3Family(),
        &Qwen2Family(),      &Qwen2MoeFamily(),   &Qwen3Family(),
        &Qwen3MoeFamily()};
    std::sort(all->begin(), all->end(), [](const Family* a, const Family* b) {
      return a->model_type < b->model_type;
    });
    return all;
  }();
  return *families;
}

}  // namespace chunkplan::models
