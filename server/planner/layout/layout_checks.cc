#include "server/planner/layout/layout_checks.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "server/planner/request/request_checks.h"

namespace chunkplan::planner {

absl::Status CheckFrozen(const LayoutRequest& request) {
  const size_t f = request.frozen.size();
  const size_t n = request.search.numels.size();
  if (f != 0 && f != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("frozen has ", f, " entries; expected 0 (none frozen) or ",
                     n, " (one per numel)"));
  }
  return absl::OkStatus();
}

absl::Status CheckGivenConfigs(const LayoutRequest& request) {
  const SearchRequest& search = request.search;
  // Each degree present, with the index of its first parameter.
  absl::flat_hash_map<uint32_t, size_t> first_of;
  for (size_t i = 0; i < search.numels.size(); ++i) {
    first_of.try_emplace(DegreeOf(search, i), i);
  }
  absl::flat_hash_map<uint32_t, size_t> config_of;
  for (size_t k = 0; k < request.configs.size(); ++k) {
    const ChunkConfig& c = request.configs[k];
    if (!first_of.contains(c.dp_degree)) {
      return absl::InvalidArgumentError(
          absl::StrCat("configs[", k, "].dp_degree: degree ", c.dp_degree,
                       " is not the degree of any parameter"));
    }
    if (const auto [it, inserted] = config_of.try_emplace(c.dp_degree, k);
        !inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "configs[", k, "].dp_degree: a second config for degree ",
          c.dp_degree, " (the first is configs[", it->second, "])"));
    }
    if (c.chunk_size == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("configs[", k, "].chunk_size is 0; it must be >= 1"));
    }
    if (!c.keep_gathered && c.chunk_size % c.dp_degree != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "configs[", k, "].chunk_size: ", c.chunk_size,
          " is not a multiple of dp_degree ", c.dp_degree,
          " (a chunk that is not kept gathered is split into dp_degree "
          "shards)"));
    }
  }
  // The first parameter of a degree without a config, lowest index first.
  size_t missing = search.numels.size();
  for (const auto& [degree, first] : first_of) {
    if (!config_of.contains(degree) && first < missing) missing = first;
  }
  if (missing < search.numels.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "configs: no config for degree ", DegreeOf(search, missing),
        " (the degree of search.numels[", missing, "])"));
  }
  return absl::OkStatus();
}

}  // namespace chunkplan::planner
