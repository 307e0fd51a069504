#include "server/planner/plan_search/verdict.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/planner/request/checked_math.h"

namespace chunkplan::planner {
namespace {

// 2^64 as a double: the first value a uint64_t cannot hold.
constexpr double kTwoTo64 = 18446744073709551616.0;

// "device: <need> > <budget> by <excess>", with the budget's parts where a
// margin is taken off.
std::string DeviceWhyNot(const Verdict& v) {
  const uint64_t budget = v.device_memory_bytes - v.margin_bytes;
  std::string out = absl::StrCat("device: ", v.device_need_bytes, " > ", budget,
                                 " by ", v.device_excess_bytes);
  if (v.margin_bytes != 0) {
    absl::StrAppend(&out, " (device memory ", v.device_memory_bytes,
                    " less margin ", v.margin_bytes, ")");
  }
  return out;
}

}  // namespace

double MarginOf(const Cluster& cluster) {
  return cluster.margin.value_or(kDefaultMargin);
}

absl::Status CheckMargin(const Cluster& cluster) {
  if (!cluster.margin.has_value()) return absl::OkStatus();
  const double m = *cluster.margin;
  if (!(m >= 0.0 && m < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cluster.margin: ", m,
                     " is not a fraction in [0, 1) of device memory (unset: ",
                     kDefaultMargin, ")"));
  }
  return absl::OkStatus();
}

uint64_t MarginBytes(double margin, uint64_t memory) {
  const double bytes = std::ceil(margin * static_cast<double>(memory));
  if (!(bytes < kTwoTo64)) return memory;
  return std::min(memory, static_cast<uint64_t>(bytes));
}

uint64_t DeviceBudgetBytes(const Cluster& cluster) {
  return cluster.device_memory_bytes -
         MarginBytes(MarginOf(cluster), cluster.device_memory_bytes);
}

std::optional<uint64_t> DeviceNeedOf(uint64_t device_bytes,
                                     uint64_t gathered_chunk_bytes,
                                     uint64_t reserve_bytes,
                                     uint64_t activation_bytes,
                                     uint64_t transient_bytes) {
  uint64_t need = device_bytes;
  if (!CheckedAdd(need, gathered_chunk_bytes, &need) ||
      !CheckedAdd(need, reserve_bytes, &need) ||
      !CheckedAdd(need, activation_bytes, &need) ||
      !CheckedAdd(need, transient_bytes, &need)) {
    return std::nullopt;
  }
  return need;
}

std::optional<uint64_t> HostBytesPerNode(uint32_t gpus_per_node,
                                         uint64_t world_size,
                                         const RankMemory& most,
                                         const RankMemory& most_least) {
  const uint64_t ranks = std::min<uint64_t>(gpus_per_node, world_size);
  uint64_t out = 0;
  if (!CheckedMul(ranks, std::max(most.host_bytes, most_least.host_bytes),
                  &out)) {
    return std::nullopt;
  }
  return out;
}

Verdict Judge(const Cluster& cluster, uint64_t device_need_bytes,
              uint64_t host_bytes_per_node) {
  Verdict v;
  v.device_need_bytes = device_need_bytes;
  v.device_memory_bytes = cluster.device_memory_bytes;
  v.reserve_bytes = cluster.reserve_bytes;
  v.margin = MarginOf(cluster);
  v.margin_bytes = MarginBytes(v.margin, v.device_memory_bytes);
  const uint64_t memory = v.device_memory_bytes;
  const uint64_t budget = memory - v.margin_bytes;
  const uint64_t need = device_need_bytes;
  v.headroom_bytes = need <= memory ? memory - need : 0;
  v.device_excess_bytes = need > budget ? need - budget : 0;
  v.host_bytes_per_node = host_bytes_per_node;
  v.host_memory_bytes = cluster.host_memory_bytes;
  if (v.host_memory_bytes != 0 && host_bytes_per_node > v.host_memory_bytes) {
    v.host_excess_bytes = host_bytes_per_node - v.host_memory_bytes;
  }
  v.fits = v.device_excess_bytes == 0 && v.host_excess_bytes == 0;
  v.tight = !v.fits && v.host_excess_bytes == 0 && need <= memory;
  if (v.device_excess_bytes != 0) v.why_not = DeviceWhyNot(v);
  if (v.host_excess_bytes != 0) {
    absl::StrAppend(&v.why_not, v.why_not.empty() ? "" : "; ",
                    "host: ", host_bytes_per_node, " > ", v.host_memory_bytes,
                    " by ", v.host_excess_bytes);
  }
  return v;
}

absl::StatusOr<Verdict> JudgeLayout(const Cluster& cluster,
                                    const LayoutResult& layout,
                                    const GeminiSettings& mesh) {
  const std::optional<uint64_t> need = DeviceNeedOf(
      layout.most_loaded_rank.device_bytes, layout.gathered_chunk_bytes,
      cluster.reserve_bytes, layout.activation_bytes, layout.transient_bytes);
  if (!need.has_value()) {
    return absl::InvalidArgumentError(
        "device_need_bytes: most_loaded_rank.device_bytes + "
        "gathered_chunk_bytes + cluster.reserve_bytes + activation_bytes + "
        "transient_bytes exceeds 2^64-1");
  }
  // The zero degree times the rest of the mesh: every rank of a node holds
  // its own shards, whatever its tp or extra_dp coordinate.
  uint32_t world_size = 0;
  for (const GroupLayout& g : layout.groups) {
    world_size = std::max(world_size, g.config.dp_degree);
  }
  const uint64_t world =
      MeshWorld(world_size, mesh.tp_size, mesh.extra_dp_size);
  const std::optional<uint64_t> host =
      HostBytesPerNode(cluster.gpus_per_node, world, layout.most_loaded_rank,
                       layout.most_loaded_rank_least);
  if (!host.has_value()) {
    return absl::InvalidArgumentError(
        "host_bytes_per_node: cluster.gpus_per_node x the most loaded rank's "
        "host bytes exceeds 2^64-1");
  }
  return Judge(cluster, *need, *host);
}

}  // namespace chunkplan::planner
