#include "server/planner/layout/placement.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/planner/layout/byte_model.h"
#include "server/planner/layout/offload_order.h"
#include "server/planner/layout/rank_memory.h"

namespace chunkplan::planner {
namespace {

using Wide = WideBytes;

// A chunk in allocation order (groups in order, chunks within each).
struct FlatChunk {
  const ChunkLayout* chunk;
  uint64_t degree;
  bool gathered;
};

std::vector<FlatChunk> Flatten(std::span<const GroupLayout> groups) {
  std::vector<FlatChunk> flat;
  for (const GroupLayout& g : groups) {
    for (const ChunkLayout& c : g.chunks) {
      flat.push_back({&c, g.config.dp_degree, g.config.keep_gathered});
    }
  }
  return flat;
}

// setup_grads_device's total T: each chunk's fp16 bytes once per parameter
// it holds.
Wide InflatedTotal(const std::vector<FlatChunk>& flat, const ByteModel& bytes) {
  Wide total = 0;
  for (const FlatChunk& c : flat) {
    total += Wide{bytes.param} * c.chunk->size * c.chunk->num_params;
  }
  return total;
}

std::string WideString(Wide v) {
  if (v <= UINT64_MAX) return absl::StrCat(static_cast<uint64_t>(v));
  std::string digits;
  for (; v > 0; v /= 10) digits.insert(digits.begin(), '0' + v % 10);
  return digits;
}

// The least integer >= x (0 for x <= 0): an integer sum reaches the float
// budget x exactly when it reaches this.
Wide CeilBytes(double x) { return x > 0 ? static_cast<Wide>(std::ceil(x)) : 0; }

absl::Status CheckFraction(double value, absl::string_view field) {
  if (!(value >= 0.0 && value <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "gemini.", field, ": ", value, " is not a fraction in [0, 1]"));
  }
  return absl::OkStatus();
}

// The chunks that evict_tensors walks from the front (non-gathered, in
// compute order) until the rest fit `keep` bytes: how many it passes.
uint64_t PassedUntilRestFits(const std::vector<FlatChunk>& flat,
                             uint64_t param_rate, double keep) {
  Wide rest = 0;
  for (const FlatChunk& c : flat) {
    if (!c.gathered) rest += Wide{param_rate} * c.chunk->size;
  }
  const Wide fits = keep > 0 ? static_cast<Wide>(std::floor(keep)) : 0;
  uint64_t passed = 0;
  for (const FlatChunk& c : flat) {
    if (c.gathered) continue;
    if (rest <= fits) break;
    rest -= Wide{param_rate} * c.chunk->size;
    ++passed;
  }
  return passed;
}

// Marks `bit` on the first `count` non-gathered chunks (or, with `suffix`,
// on all but the first `count`).
void MarkNonGathered(const std::vector<FlatChunk>& flat, uint64_t count,
                     bool suffix, uint8_t bit, ChunkMarks* marks) {
  uint64_t seen = 0;
  for (size_t i = 0; i < flat.size(); ++i) {
    if (flat[i].gathered) continue;
    if ((seen++ < count) != suffix) (*marks)[i] |= bit;
  }
}

// The chunks rank `rank` of every group may offload, with what each saves
// on its device and adds on its host.
std::vector<OffloadItem> ItemsFor(const std::vector<FlatChunk>& flat,
                                  const ByteModel& bytes, RankOfGroup rank) {
  std::vector<OffloadItem> items;
  for (size_t i = 0; i < flat.size(); ++i) {
    const FlatChunk& c = flat[i];
    if (c.gathered) continue;
    const Wide shard = c.chunk->size / c.degree;
    const Wide real = RealElementsOnRank(*c.chunk, c.degree, rank);
    items.push_back(
        {.index = i,
         .weight = Wide{bytes.param} * c.chunk->size,
         .saving = (bytes.master + bytes.grad) * shard + bytes.optimizer * real,
         .host = bytes.optimizer * real + bytes.pageable * shard});
  }
  return items;
}

// One rank's bytes with the optimizer offloaded as `extreme` orders it
// (`budget` 0: nothing; `all`: every non-gathered chunk).
absl::StatusOr<RankMemory> RankUnder(std::span<const GroupLayout> groups,
                                     const std::vector<FlatChunk>& flat,
                                     uint64_t frozen_elements,
                                     const ByteModel& bytes, ChunkMarks marks,
                                     Wide budget, bool all, RankOfGroup rank,
                                     OffloadExtreme extreme,
                                     absl::string_view field) {
  const std::vector<OffloadItem> items = ItemsFor(flat, bytes, rank);
  std::vector<uint64_t> chosen;
  if (all) {
    for (const OffloadItem& item : items) chosen.push_back(item.index);
  } else if (budget > 0) {  // 0: no chunk sees less before it, none moves
    CHUNKPLAN_ASSIGN_OR_RETURN(chosen,
                               ExtremeOffloadSet(items, budget, extreme));
  }
  for (const uint64_t i : chosen) marks[i] |= kOptimOffloaded;
  return RankBytes(groups, frozen_elements, bytes, rank, field, marks);
}

}  // namespace

absl::Status CheckPlacement(const GeminiSettings& s) {
  if (s.shard_param_frac.has_value()) {
    CHUNKPLAN_RETURN_IF_ERROR(
        CheckFraction(*s.shard_param_frac, "shard_param_frac"));
  }
  CHUNKPLAN_RETURN_IF_ERROR(
      CheckFraction(s.offload_optim_frac, "offload_optim_frac"));
  CHUNKPLAN_RETURN_IF_ERROR(
      CheckFraction(s.offload_param_frac, "offload_param_frac"));
  const char* other = nullptr;
  if (s.placement == Placement::kAuto) {
    if (s.shard_param_frac.has_value()) {
      other = "shard_param_frac";
    } else if (s.offload_optim_frac != 0) {
      other = "offload_optim_frac";
    } else if (s.offload_param_frac != 0) {
      other = "offload_param_frac";
    }
    if (other != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("gemini.", other,
                       ": a static placement setting, set under "
                       "PLACEMENT_AUTO"));
    }
  } else if (s.device_memory_bytes.has_value()) {
    return absl::InvalidArgumentError(
        "gemini.device_memory_bytes: an auto placement setting, set under "
        "PLACEMENT_STATIC");
  }
  return absl::OkStatus();
}

absl::Status CheckObjectivePlacement(const LayoutRequest& request) {
  const GeminiSettings& s = request.gemini;
  const bool by_size =
      s.placement == Placement::kStatic &&
      ((s.offload_optim_frac > 0 && s.offload_optim_frac < 1) ||
       s.shard_param_frac.value_or(1.0) < 1.0 ||
       (s.offload_optim_frac == 1 && s.offload_param_frac > 0));
  if (request.objective == Objective::kPeakRankBytes && by_size) {
    return absl::UnimplementedError(
        "objective: OBJECTIVE_PEAK_RANK_BYTES is not computed where the "
        "chunks a placement moves depend on the chunk size (an offload "
        "fraction strictly between 0 and 1, shard_param_frac < 1, an "
        "honoured offload_param_frac); use Layout with given configs per "
        "candidate");
  }
  return absl::OkStatus();
}

namespace {

// PlaceOnDevices, with only most_loaded_rank (and placement) unless
// `every_rank`.
absl::Status Place(std::span<const GroupLayout> groups,
                   uint64_t frozen_elements, const GeminiSettings& settings,
                   bool every_rank, LayoutResult* result) {
  const ByteModel bytes = ByteModelOf(settings);
  const std::vector<FlatChunk> flat = Flatten(groups);
  PlacementOutcome& out = result->placement;
  out = PlacementOutcome{};
  const Wide total = InflatedTotal(flat, bytes);
  Wide non_gathered_bytes = 0;
  uint64_t non_gathered = 0;
  std::vector<Wide> weights;
  for (const FlatChunk& c : flat) {
    const Wide w = Wide{bytes.param} * c.chunk->size;
    if (c.gathered) continue;
    non_gathered_bytes += w;
    ++non_gathered;
    weights.push_back(w);
  }
  const double total_f = static_cast<double>(total);
  const std::string total_s = WideString(total);
  ChunkMarks marks(flat.size(), 0);
  const bool is_auto = settings.placement == Placement::kAuto;
  const double optim = is_auto ? 0.0 : settings.offload_optim_frac;
  const double shard = settings.shard_param_frac.value_or(1.0);
  double param = settings.offload_param_frac;
  if (param > 0 && (shard != 1.0 || optim != 1.0)) {
    out.notes.push_back(absl::StrFormat(
        "offload_param_frac %g is ignored: ColossalAI honours it only when "
        "shard_param_frac == 1 and offload_optim_frac == 1",
        param));
    param = 0;
  }
  if (!is_auto && shard < 1.0) {
    const uint64_t released =
        PassedUntilRestFits(flat, bytes.param, total_f * (1 - shard));
    out.gathered_at_run_time = non_gathered - released;
    MarkNonGathered(flat, released, true, kGatheredAtRunTime, &marks);
    out.notes.push_back(absl::StrFormat(
        "shard_param_frac %g keeps %d of %d non-gathered chunks whole on the "
        "device at run time (keep_gathered_chunk_mem is %g of the inflated "
        "total %s bytes)",
        shard, out.gathered_at_run_time, non_gathered, 1 - shard, total_s));
  }
  if (param > 0) {
    out.param_offloaded_chunks =
        PassedUntilRestFits(flat, bytes.param, total_f * (1 - param));
    MarkNonGathered(flat, out.param_offloaded_chunks, false, kParamOffloaded,
                    &marks);
    out.notes.push_back(absl::StrFormat(
        "offload_param_frac %g moves the fp16 shards of %d of %d non-gathered "
        "chunks to the host (keep_cuda_chunk_mem is %g of the inflated total "
        "%s bytes)",
        param, out.param_offloaded_chunks, non_gathered, 1 - param, total_s));
  }
  const Wide budget = CeilBytes(total_f * optim);
  if (is_auto) {
    out.offloaded_chunks = out.offloaded_chunks_max = non_gathered;
    out.effective_offload_optim_frac = non_gathered > 0 ? 1.0 : 0.0;
  } else {
    const OffloadCounts counts = CountOffloaded(weights, budget);
    out.offloaded_chunks = counts.least;
    out.offloaded_chunks_max = counts.most;
    if (non_gathered_bytes > 0) {
      out.effective_offload_optim_frac =
          static_cast<double>(counts.least_bytes) /
          static_cast<double>(non_gathered_bytes);
    }
    if (optim > 0) {
      out.notes.push_back(absl::StrFormat(
          "offload_optim_frac %g offloads %d to %d of %d non-gathered chunks "
          "(%.2f%% of their fp16 bytes): ColossalAI's budget is the fraction "
          "of %s bytes, a total that counts each fp16 chunk once per "
          "parameter it holds (%s bytes counted once)",
          optim, counts.least, counts.most, non_gathered,
          100 * out.effective_offload_optim_frac, total_s,
          WideString(non_gathered_bytes)));
    }
  }
  const auto rank = [&](RankOfGroup r, OffloadExtreme e,
                        absl::string_view field) {
    // Every order offloads every chunk when the budget exceeds their sum
    // (each sees less before it): no extreme to search.
    return RankUnder(groups, flat, frozen_elements, bytes, marks, budget,
                     is_auto || budget > non_gathered_bytes, r, e, field);
  };
  CHUNKPLAN_ASSIGN_OR_RETURN(
      result->most_loaded_rank,
      rank(RankOfGroup::kFirst, OffloadExtreme::kMostDevice,
           "most_loaded_rank"));
  if (every_rank) {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        result->most_loaded_rank_least,
        rank(RankOfGroup::kFirst, OffloadExtreme::kLeastDevice,
             "most_loaded_rank_least"));
    CHUNKPLAN_ASSIGN_OR_RETURN(
        result->least_loaded_rank,
        rank(RankOfGroup::kLast, OffloadExtreme::kLeastDevice,
             "least_loaded_rank"));
  }
  if (is_auto) {
    out.notes.push_back(absl::StrFormat(
        "auto: the master shards and optimizer states of all %d non-gathered "
        "chunks are on the host; fp16 shards stay on the device unless "
        "evicted at run time, and during warm-up model data may use 20%% of "
        "the device's memory",
        non_gathered));
  }
  if (is_auto && settings.device_memory_bytes.has_value()) {
    const RankMemory& m = result->most_loaded_rank;
    const Wide used = Wide{m.param_bytes} + m.master_bytes + m.grad_bytes;
    const double cap = static_cast<double>(*settings.device_memory_bytes);
    const double share = cap - cap * 0.8;
    const bool moves = used > static_cast<Wide>(std::floor(share));
    out.notes.push_back(absl::StrFormat(
        "auto: rank 0's chunks on the device take %s bytes, %s the warm-up "
        "share of %.0f bytes (20%% of %d): %s",
        WideString(used), moves ? "more than" : "within", share,
        *settings.device_memory_bytes,
        moves ? "chunks will be moved to the host during warm-up"
              : "no chunk is moved during warm-up"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status PlaceOnDevices(std::span<const GroupLayout> groups,
                            uint64_t frozen_elements,
                            const GeminiSettings& settings,
                            LayoutResult* result) {
  return Place(groups, frozen_elements, settings, true, result);
}

absl::StatusOr<RankMemory> MostLoadedRank(std::span<const GroupLayout> groups,
                                          uint64_t frozen_elements,
                                          const GeminiSettings& settings) {
  LayoutResult result;
  CHUNKPLAN_RETURN_IF_ERROR(
      Place(groups, frozen_elements, settings, false, &result));
  return result.most_loaded_rank;
}

FractionClasses::FractionClasses(std::span<const GroupLayout> groups,
                                 const GeminiSettings& settings) {
  const ByteModel bytes = ByteModelOf(settings);
  const std::vector<FlatChunk> flat = Flatten(groups);
  total_ = static_cast<double>(InflatedTotal(flat, bytes));
  for (const FlatChunk& c : flat) {
    if (c.gathered) continue;
    for (Wide a = Wide{bytes.param} * c.chunk->size; a != 0;) {
      const Wide r = gcd_ % a;  // Euclid: gcd_ = gcd(gcd_, weight)
      gcd_ = a;
      a = r;
    }
  }
}

WideBytes FractionClasses::OptimClass(double fraction) const {
  if (gcd_ == 0) return 0;
  // A sum s of weights is below the budget B exactly when s / gcd <
  // ceil(B / gcd).
  const Wide budget = CeilBytes(total_ * fraction);
  return (budget + gcd_ - 1) / gcd_;
}

WideBytes FractionClasses::ParamClass(double fraction) const {
  if (gcd_ == 0) return 0;
  // The rest r fits floor(keep) exactly when r / gcd <= floor(floor(keep) /
  // gcd), as PassedUntilRestFits compares.
  const double keep = total_ * (1 - fraction);
  const Wide fits = keep > 0 ? static_cast<Wide>(std::floor(keep)) : 0;
  return fits / gcd_;
}

}  // namespace chunkplan::planner
