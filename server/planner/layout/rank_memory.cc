#include "server/planner/layout/rank_memory.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace chunkplan::planner {
namespace {

using Wide = unsigned __int128;

// `value` as a uint64, or INVALID_ARGUMENT naming it `name`.
absl::Status Narrow(Wide value, absl::string_view name, uint64_t* out) {
  if (value > UINT64_MAX) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, " exceeds 2^64-1 bytes"));
  }
  *out = static_cast<uint64_t>(value);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RankMemory> RankBytes(std::span<const GroupLayout> groups,
                                     uint64_t frozen_elements,
                                     const ByteModel& bytes, RankOfGroup rank,
                                     absl::string_view field) {
  Wide shard_elements = 0;     // sum of size / P over non-gathered chunks
  Wide gathered_elements = 0;  // sum of gathered chunk sizes
  Wide optimized = 0;          // real elements here + gathered used ones
  for (const GroupLayout& g : groups) {
    const uint64_t degree = g.config.dp_degree;
    const uint64_t r = rank == RankOfGroup::kFirst ? 0 : degree - 1;
    for (const ChunkLayout& c : g.chunks) {
      if (g.config.keep_gathered) {
        gathered_elements += c.size;
        optimized += c.used;
        continue;
      }
      const uint64_t shard = c.size / degree;
      shard_elements += shard;
      // r * shard <= size - shard < 2^64.
      const uint64_t begin = r * shard;
      optimized += c.used <= begin ? 0 : std::min(c.used - begin, shard);
    }
  }
  const Wide held = shard_elements + gathered_elements;
  const Wide params = bytes.param * held;
  const Wide masters = bytes.master * held;
  const Wide grads = bytes.grad * held;
  const Wide states = bytes.optimizer * optimized;
  const Wide frozen = Wide{bytes.frozen} * frozen_elements;
  const Wide pinned = bytes.pinned * shard_elements;
  RankMemory m;
  for (const auto& [value, part, out] :
       {std::tuple{params, "param_bytes", &m.param_bytes},
        std::tuple{masters, "master_bytes", &m.master_bytes},
        std::tuple{grads, "grad_bytes", &m.grad_bytes},
        std::tuple{states, "optimizer_bytes", &m.optimizer_bytes},
        std::tuple{frozen, "frozen_bytes", &m.frozen_bytes},
        std::tuple{params + masters + grads + states + frozen, "device_bytes",
                   &m.device_bytes},
        std::tuple{pinned, "pinned_host_bytes", &m.pinned_host_bytes}}) {
    if (absl::Status s = Narrow(value, absl::StrCat(field, ".", part), out);
        !s.ok()) {
      return s;
    }
  }
  return m;
}

absl::StatusOr<uint64_t> GatheredChunkBytes(std::span<const GroupLayout> groups,
                                            const ByteModel& bytes) {
  uint64_t largest = 0;
  for (const GroupLayout& g : groups) {
    if (g.config.keep_gathered) continue;
    for (const ChunkLayout& c : g.chunks) largest = std::max(largest, c.size);
  }
  uint64_t gathered = 0;
  if (absl::Status s = Narrow(Wide{bytes.gathered} * largest,
                              "gathered_chunk_bytes", &gathered);
      !s.ok()) {
    return s;
  }
  return gathered;
}

}  // namespace chunkplan::planner
