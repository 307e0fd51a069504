#include "server/planner/layout/chunk_placement.h"

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "server/planner/request/checked_math.h"
#include "server/planner/request/request_checks.h"

namespace chunkplan::planner {
namespace {

// Places the tensor `index` of `numel` elements into `group` (whose degree
// is `degree`), as register_tensor does.
void Register(GroupLayout& group, uint64_t index, uint64_t numel) {
  if (!group.chunks.empty()) {
    ChunkLayout& open = group.chunks.back();
    // used <= size, so size - used cannot wrap.
    if (numel <= open.size - open.used) {
      open.used += numel;
      ++open.num_params;
      return;
    }
  }
  const uint64_t chunk_size = group.config.chunk_size;
  uint64_t size = chunk_size;
  if (numel > chunk_size) {
    // numel <= 2^63-1 and the degree < 2^32: the round-up fits.
    CheckedRoundUp(numel, group.config.dp_degree, &size);
  }
  group.chunks.push_back(ChunkLayout{size, numel, index, 1});
}

}  // namespace

absl::StatusOr<std::vector<GroupLayout>> PlaceChunks(
    const SearchRequest& params, std::span<const ChunkConfig> configs,
    const std::vector<bool>& frozen) {
  std::vector<GroupLayout> groups;
  groups.reserve(configs.size());
  absl::flat_hash_map<uint32_t, size_t> group_of;
  for (const ChunkConfig& c : configs) {
    group_of.try_emplace(c.dp_degree, groups.size());
    groups.push_back(GroupLayout{c, {}, 0});
  }
  // One shared degree (the common case): no lookup per parameter.
  const bool shared = params.dp_degrees.size() <= 1;
  GroupLayout* const only =
      shared ? &groups[group_of.at(DegreeOf(params, 0))] : nullptr;
  for (size_t i = 0; i < params.numels.size(); ++i) {
    if (!frozen.empty() && frozen[i]) continue;
    GroupLayout& g = shared ? *only : groups[group_of.at(params.dp_degrees[i])];
    Register(g, i, params.numels[i]);
  }
  for (size_t k = 0; k < groups.size(); ++k) {
    GroupLayout& g = groups[k];
    for (const ChunkLayout& c : g.chunks) {
      if (!CheckedAdd(g.padding, c.size - c.used, &g.padding)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "groups[", k, "] (dp_degree ", g.config.dp_degree, ", chunk_size ",
            g.config.chunk_size, "): the padding exceeds 2^64-1 elements"));
      }
    }
  }
  return groups;
}

uint64_t FrozenElements(const SearchRequest& params,
                        const std::vector<bool>& frozen) {
  uint64_t elements = 0;
  for (size_t i = 0; i < frozen.size(); ++i) {
    if (frozen[i]) elements += params.numels[i];
  }
  return elements;
}

}  // namespace chunkplan::planner
