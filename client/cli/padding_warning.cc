#include "client/cli/padding_warning.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace chunkplan::cli {
namespace {

// `{1: {"chunk_size": 98304, "keep_gathered": False}, ...}`: per group one
// chunk of its placed elements, rounded up to its degree.
std::string SuggestedConfigs(const v1::LayoutResponse& response) {
  std::vector<std::string> items;
  for (const v1::GroupLayout& group : response.groups()) {
    uint64_t used = 0;
    for (const v1::ChunkLayout& chunk : group.chunks()) used += chunk.used();
    const uint64_t degree = std::max<uint64_t>(group.dp_degree(), 1);
    const uint64_t size =
        std::max(degree, (used + degree - 1) / degree * degree);
    items.push_back(absl::StrFormat(
        "%u: {\"chunk_size\": %u, \"keep_gathered\": False}", degree, size));
  }
  return absl::StrCat("{", absl::StrJoin(items, ", "), "}");
}

}  // namespace

std::string PaddingWarning(const v1::LayoutResponse& response) {
  uint64_t placed = 0;
  uint64_t allocated = 0;
  for (const v1::GroupLayout& group : response.groups()) {
    for (const v1::ChunkLayout& chunk : group.chunks()) {
      placed += chunk.used();
      allocated += chunk.size();
    }
  }
  const uint64_t padding = allocated - placed;
  if (padding <= placed) return "";
  const std::string share =
      placed == 0
          ? "-"
          : absl::StrFormat("%.2f%%", 100.0 * static_cast<double>(padding) /
                                          static_cast<double>(placed));
  return absl::StrFormat(
      "\nwarning         the chunks dwarf what they hold: %u elements placed "
      "in %u allocated, padding %u elements = %s of placed\n"
      "                ColossalAI's search sizes chunks on every parameter, "
      "frozen ones included, but frozen parameters get no chunk; neither the "
      "layout objectives (their candidates start at the largest parameter) "
      "nor min_chunk_size_m (a kept-gathered group is as large as all its "
      "parameters) makes them smaller\n"
      "                try chunk sizes of your own, one chunk per group "
      "(configs; GeminiPlugin's chunk_config_dict): %s\n",
      placed, allocated, padding, share, SuggestedConfigs(response));
}

}  // namespace chunkplan::cli
