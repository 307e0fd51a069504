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

uint64_t RealElementsOnRank(const ChunkLayout& chunk, uint64_t degree,
                            RankOfGroup rank) {
  const uint64_t r = rank == RankOfGroup::kFirst ? 0 : degree - 1;
  const uint64_t shard = chunk.size / degree;
  // r * shard <= size - shard < 2^64.
  const uint64_t begin = r * shard;
  return chunk.used <= begin ? 0 : std::min(chunk.used - begin, shard);
}

namespace {

// One rank's parts in 128 bits, before RankBytes narrows them.
struct WideParts {
  Wide params = 0, masters = 0, grads = 0, states = 0, frozen = 0;
  Wide pinned = 0, offloaded = 0;

  Wide device() const { return params + masters + grads + states + frozen; }
};

WideParts PartsOf(std::span<const GroupLayout> groups, uint64_t frozen_elements,
                  const ByteModel& bytes, RankOfGroup rank,
                  std::span<const uint8_t> marks) {
  Wide param_elements = 0;     // fp16 elements on the device
  Wide shard_elements = 0;     // sum of size / P over non-gathered chunks
  Wide gathered_elements = 0;  // sum of gathered chunk sizes
  Wide side_elements = 0;      // master/grad elements on the device
  Wide optimized = 0;          // real elements here + gathered used ones
  Wide host_states = 0;        // optimizer elements on the host
  Wide host_shards = 0;        // shard elements of offloaded chunks
  size_t index = 0;
  for (const GroupLayout& g : groups) {
    const uint64_t degree = g.config.dp_degree;
    for (const ChunkLayout& c : g.chunks) {
      const uint8_t mark = marks.empty() ? 0 : marks[index];
      ++index;
      if (g.config.keep_gathered) {
        gathered_elements += c.size;
        optimized += c.used;
        continue;
      }
      const uint64_t shard = c.size / degree;
      const uint64_t real = RealElementsOnRank(c, degree, rank);
      shard_elements += shard;
      if (mark & kGatheredAtRunTime) {
        param_elements += c.size;
      } else if (!(mark & kParamOffloaded)) {
        param_elements += shard;
      }
      if (mark & kOptimOffloaded) {
        host_states += real;
        host_shards += shard;
      } else {
        side_elements += shard;
        optimized += real;
      }
    }
  }
  param_elements += gathered_elements;
  side_elements += gathered_elements;
  WideParts p;
  p.params = bytes.param * param_elements;
  p.masters = bytes.master * side_elements;
  p.grads = bytes.grad * side_elements;
  p.states = bytes.optimizer * optimized;
  p.frozen = Wide{bytes.frozen} * frozen_elements;
  p.pinned = bytes.pinned * shard_elements;
  p.offloaded = bytes.optimizer * host_states + bytes.pageable * host_shards;
  return p;
}

}  // namespace

absl::StatusOr<RankMemory> RankBytes(std::span<const GroupLayout> groups,
                                     uint64_t frozen_elements,
                                     const ByteModel& bytes, RankOfGroup rank,
                                     absl::string_view field,
                                     std::span<const uint8_t> marks) {
  const WideParts p = PartsOf(groups, frozen_elements, bytes, rank, marks);
  RankMemory m;
  for (const auto& [value, part, out] :
       {std::tuple{p.params, "param_bytes", &m.param_bytes},
        std::tuple{p.masters, "master_bytes", &m.master_bytes},
        std::tuple{p.grads, "grad_bytes", &m.grad_bytes},
        std::tuple{p.states, "optimizer_bytes", &m.optimizer_bytes},
        std::tuple{p.frozen, "frozen_bytes", &m.frozen_bytes},
        std::tuple{p.device(), "device_bytes", &m.device_bytes},
        std::tuple{p.pinned, "pinned_host_bytes", &m.pinned_host_bytes},
        std::tuple{p.offloaded, "offloaded_host_bytes",
                   &m.offloaded_host_bytes},
        std::tuple{p.pinned + p.offloaded, "host_bytes", &m.host_bytes}}) {
    if (absl::Status s = Narrow(value, absl::StrCat(field, ".", part), out);
        !s.ok()) {
      return s;
    }
  }
  return m;
}

unsigned __int128 RankDeviceBytes(std::span<const GroupLayout> groups,
                                  uint64_t frozen_elements,
                                  const ByteModel& bytes, RankOfGroup rank,
                                  std::span<const uint8_t> marks) {
  return PartsOf(groups, frozen_elements, bytes, rank, marks).device();
}

}  // namespace chunkplan::planner
