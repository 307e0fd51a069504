#include "server/planner/layout/placement.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "server/planner/layout/byte_model_of.h"
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

// `marks` with the optimizer of rank `rank`'s chunks offloaded as
// `extreme` orders it (`budget` 0: nothing; `all`: every non-gathered
// chunk).
absl::StatusOr<ChunkMarks> MarksUnder(const std::vector<FlatChunk>& flat,
                                      const ByteModel& bytes, ChunkMarks marks,
                                      Wide budget, bool all, RankOfGroup rank,
                                      OffloadExtreme extreme) {
  const std::vector<OffloadItem> items = ItemsFor(flat, bytes, rank);
  std::vector<uint64_t> chosen;
  if (all) {
    for (const OffloadItem& item : items) chosen.push_back(item.index);
  } else if (budget > 0) {  // 0: no chunk sees less before it, none moves
    CHUNKPLAN_ASSIGN_OR_RETURN(chosen,
                               ExtremeOffloadSet(items, budget, extreme));
  }
  for (const uint64_t i : chosen) marks[i] |= kOptimOffloaded;
  return marks;
}

// What a policy decides before the chunk order comes in: the chunks it
// keeps gathered at run time or whose fp16 shard it moves (marks), the
// optimizer budget, and the figures the notes cite.
struct PolicyPlan {
  std::vector<FlatChunk> flat;
  ChunkMarks marks;
  bool is_auto = false;
  double optim = 0;        // offload_optim_frac in force (0 under auto)
  double shard = 1;        // shard_param_frac
  double param = 0;        // offload_param_frac in force
  double param_given = 0;  // offload_param_frac as asked
  Wide total = 0;          // setup_grads_device's inflated total
  Wide budget = 0;         // ceil(total x optim)
  // Every non-gathered chunk's optimizer side moves in every order (auto, or
  // a budget above their sum: each chunk sees less before it).
  bool all_offloaded = false;
  Wide non_gathered_bytes = 0;
  uint64_t non_gathered = 0;
  std::vector<Wide> weights;  // each non-gathered chunk's fp16 bytes
  uint64_t gathered_at_run_time = 0;
  uint64_t param_offloaded = 0;
};

PolicyPlan PlanPolicy(std::span<const GroupLayout> groups,
                      const GeminiSettings& settings, const ByteModel& bytes) {
  PolicyPlan p;
  p.flat = Flatten(groups);
  p.total = InflatedTotal(p.flat, bytes);
  for (const FlatChunk& c : p.flat) {
    const Wide w = Wide{bytes.param} * c.chunk->size;
    if (c.gathered) continue;
    p.non_gathered_bytes += w;
    ++p.non_gathered;
    p.weights.push_back(w);
  }
  const double total_f = static_cast<double>(p.total);
  p.marks.assign(p.flat.size(), 0);
  p.is_auto = settings.placement == Placement::kAuto;
  p.optim = p.is_auto ? 0.0 : settings.offload_optim_frac;
  p.shard = settings.shard_param_frac.value_or(1.0);
  p.param = p.param_given = settings.offload_param_frac;
  if (p.param > 0 && (p.shard != 1.0 || p.optim != 1.0)) p.param = 0;
  if (!p.is_auto && p.shard < 1.0) {
    const uint64_t released =
        PassedUntilRestFits(p.flat, bytes.param, total_f * (1 - p.shard));
    p.gathered_at_run_time = p.non_gathered - released;
    MarkNonGathered(p.flat, released, true, kGatheredAtRunTime, &p.marks);
  }
  if (p.param > 0) {
    p.param_offloaded =
        PassedUntilRestFits(p.flat, bytes.param, total_f * (1 - p.param));
    MarkNonGathered(p.flat, p.param_offloaded, false, kParamOffloaded,
                    &p.marks);
  }
  p.budget = CeilBytes(total_f * p.optim);
  p.all_offloaded = p.is_auto || p.budget > p.non_gathered_bytes;
  return p;
}

// The notes of `plan` on what its settings really do, before the
// optimizer's (which need the counts).
void PolicyNotes(const PolicyPlan& plan, std::vector<std::string>* notes) {
  const std::string total_s = WideString(plan.total);
  if (plan.param_given > 0 && plan.param == 0) {
    notes->push_back(absl::StrFormat(
        "offload_param_frac %g is ignored: ColossalAI honours it only when "
        "shard_param_frac == 1 and offload_optim_frac == 1",
        plan.param_given));
  }
  if (!plan.is_auto && plan.shard < 1.0) {
    notes->push_back(absl::StrFormat(
        "shard_param_frac %g keeps %d of %d non-gathered chunks whole on the "
        "device at run time (keep_gathered_chunk_mem is %g of the inflated "
        "total %s bytes)",
        plan.shard, plan.gathered_at_run_time, plan.non_gathered,
        1 - plan.shard, total_s));
  }
  if (plan.param > 0) {
    notes->push_back(absl::StrFormat(
        "offload_param_frac %g moves the fp16 shards of %d of %d non-gathered "
        "chunks to the host (keep_cuda_chunk_mem is %g of the inflated total "
        "%s bytes)",
        plan.param, plan.param_offloaded, plan.non_gathered, 1 - plan.param,
        total_s));
  }
}

// The counts of chunks whose optimizer side `plan` puts on the host, over
// every chunk order, and the note on what the fraction really offloads.
void OptimizerOutcome(const PolicyPlan& plan, PlacementOutcome* out) {
  if (plan.is_auto) {
    out->offloaded_chunks = out->offloaded_chunks_max = plan.non_gathered;
    out->effective_offload_optim_frac = plan.non_gathered > 0 ? 1.0 : 0.0;
    return;
  }
  const OffloadCounts counts = CountOffloaded(plan.weights, plan.budget);
  out->offloaded_chunks = counts.least;
  out->offloaded_chunks_max = counts.most;
  if (plan.non_gathered_bytes > 0) {
    out->effective_offload_optim_frac =
        static_cast<double>(counts.least_bytes) /
        static_cast<double>(plan.non_gathered_bytes);
  }
  if (plan.optim > 0) {
    out->notes.push_back(absl::StrFormat(
        "offload_optim_frac %g offloads %d to %d of %d non-gathered chunks "
        "(%.2f%% of their fp16 bytes): ColossalAI's budget is the fraction "
        "of %s bytes, a total that counts each fp16 chunk once per "
        "parameter it holds (%s bytes counted once)",
        plan.optim, counts.least, counts.most, plan.non_gathered,
        100 * out->effective_offload_optim_frac, WideString(plan.total),
        WideString(plan.non_gathered_bytes)));
  }
}

// Auto's notes: every optimizer side on the host, and with the device's
// memory whether rank 0's chunks (`most`) exceed the warm-up share.
void AutoNotes(const PolicyPlan& plan, const GeminiSettings& settings,
               const RankMemory& most, std::vector<std::string>* notes) {
  notes->push_back(absl::StrFormat(
      "auto: the master shards and optimizer states of all %d non-gathered "
      "chunks are on the host; fp16 shards stay on the device unless "
      "evicted at run time, and during warm-up model data may use 20%% of "
      "the device's memory",
      plan.non_gathered));
  if (!settings.device_memory_bytes.has_value()) return;
  const Wide used =
      Wide{most.param_bytes} + most.master_bytes + most.grad_bytes;
  const double cap = static_cast<double>(*settings.device_memory_bytes);
  const double share = cap - cap * 0.8;
  const bool moves = used > static_cast<Wide>(std::floor(share));
  notes->push_back(absl::StrFormat(
      "auto: rank 0's chunks on the device take %s bytes, %s the warm-up "
      "share of %.0f bytes (20%% of %d): %s",
      WideString(used), moves ? "more than" : "within", share,
      *settings.device_memory_bytes,
      moves ? "chunks will be moved to the host during warm-up"
            : "no chunk is moved during warm-up"));
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

bool MovesBySize(const GeminiSettings& s) {
  return s.placement == Placement::kStatic &&
         ((s.offload_optim_frac > 0 && s.offload_optim_frac < 1) ||
          s.shard_param_frac.value_or(1.0) < 1.0 ||
          (s.offload_optim_frac == 1 && s.offload_param_frac > 0));
}

absl::StatusOr<unsigned __int128> MostLoadedDeviceBytes(
    std::span<const GroupLayout> groups, uint64_t frozen_elements,
    const GeminiSettings& settings) {
  const ByteModel bytes = ByteModelOf(settings);
  const PolicyPlan plan = PlanPolicy(groups, settings, bytes);
  CHUNKPLAN_ASSIGN_OR_RETURN(
      const ChunkMarks marks,
      MarksUnder(plan.flat, bytes, plan.marks, plan.budget, plan.all_offloaded,
                 RankOfGroup::kFirst, OffloadExtreme::kMostDevice));
  return RankDeviceBytes(groups, frozen_elements, bytes, RankOfGroup::kFirst,
                         marks);
}

namespace {

// PlaceOnDevices, with only most_loaded_rank (and placement) unless
// `every_rank`.
absl::Status Place(std::span<const GroupLayout> groups,
                   uint64_t frozen_elements, const GeminiSettings& settings,
                   bool every_rank, LayoutResult* result) {
  const ByteModel bytes = ByteModelOf(settings);
  const PolicyPlan plan = PlanPolicy(groups, settings, bytes);
  PlacementOutcome& out = result->placement;
  out = PlacementOutcome{};
  out.gathered_at_run_time = plan.gathered_at_run_time;
  out.param_offloaded_chunks = plan.param_offloaded;
  PolicyNotes(plan, &out.notes);
  OptimizerOutcome(plan, &out);
  const auto rank = [&](RankOfGroup r, OffloadExtreme e,
                        absl::string_view field) -> absl::StatusOr<RankMemory> {
    CHUNKPLAN_ASSIGN_OR_RETURN(
        const ChunkMarks marks,
        MarksUnder(plan.flat, bytes, plan.marks, plan.budget,
                   plan.all_offloaded, r, e));
    return RankBytes(groups, frozen_elements, bytes, r, field, marks);
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
  if (plan.is_auto) {
    AutoNotes(plan, settings, result->most_loaded_rank, &out.notes);
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
