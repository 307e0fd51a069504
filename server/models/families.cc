#include <algorithm>

#include "server/models/family.h"

namespace chunkplan::models {

const std::vector<const Family*>& Families() {
  static const std::vector<const Family*>* const families = [] {
    auto* all = new std::vector<const Family*>{&Gpt2Family()};
    std::sort(all->begin(), all->end(), [](const Family* a, const Family* b) {
      return a->model_type < b->model_type;
    });
    return all;
  }();
  return *families;
}

}  // namespace chunkplan::models
