#include "server/planner/layout/gathered_chunks.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "server/planner/layout/byte_model_of.h"

namespace chunkplan::planner {
namespace {

using Wide = unsigned __int128;
constexpr uint64_t kNone = ~uint64_t{0};

// One chunk of a group that is not kept gathered.
struct Chunk {
  uint64_t size = 0;
  uint64_t shard = 0;         // size / P: what a gather or a reduce adds
  uint64_t params = 0;        // tensors it holds (each gets one gradient)
  uint64_t arrived = 0;       // gradients in so far
  bool held = false;          // gathered (the fp16 chunk)
  bool pending = false;       // prefetched, its operation not yet run
  bool grad_held = false;     // its own gradient chunk gathered
  bool in_operation = false;  // scratch: a chunk of the current operation
};

// The chunk of every parameter (kNone: frozen, or in a kept-gathered
// group), and the chunks of the groups that are not kept gathered.
struct Flat {
  std::vector<Chunk> chunks;
  std::vector<uint64_t> chunk_of;
};

uint64_t DegreeOf(std::span<const uint32_t> dp_degrees, size_t i) {
  if (dp_degrees.empty()) return 1;
  if (dp_degrees.size() == 1) return dp_degrees[0];
  return dp_degrees[i];
}

// Every group's chunks take its placed parameters in visit order.
Flat Flatten(std::span<const uint32_t> dp_degrees, size_t num_params,
             const std::vector<bool>& frozen,
             std::span<const GroupLayout> groups) {
  Flat f;
  f.chunk_of.assign(num_params, kNone);
  for (const GroupLayout& g : groups) {
    const uint64_t degree = g.config.dp_degree;
    size_t next = 0;  // the next parameter to look at
    for (const ChunkLayout& c : g.chunks) {
      uint64_t id = kNone;
      if (!g.config.keep_gathered) {
        id = f.chunks.size();
        f.chunks.push_back({.size = c.size,
                            .shard = degree == 0 ? 0 : c.size / degree,
                            .params = c.num_params});
      }
      for (uint64_t taken = 0; taken < c.num_params; ++next) {
        if (next >= num_params) break;
        if (DegreeOf(dp_degrees, next) != degree) continue;
        if (!frozen.empty() && frozen[next]) continue;
        f.chunk_of[next] = id;
        ++taken;
      }
    }
  }
  return f;
}

// The steady state less what a gathered buffer frees: the rank's shard
// where it stays on the device.
struct ShardKept {
  bool fp16 = true;  // false: offload_param_frac in force
  bool grad = true;  // false: some gradient shards live on the host
};

ShardKept ShardKeptOf(const GeminiSettings& s) {
  const bool is_static = s.placement == Placement::kStatic;
  ShardKept kept;
  kept.fp16 =
      !(is_static && s.offload_param_frac > 0 &&
        s.shard_param_frac.value_or(1.0) == 1.0 && s.offload_optim_frac == 1.0);
  kept.grad = is_static && s.offload_optim_frac == 0;
  return kept;
}

// One step of the replay: an operation, and whether it is its backward
// (else its forward, or its forward run again by checkpointing).
struct Visit {
  size_t op = 0;
  bool backward = false;
};

// The order one iteration runs `n` operations in: forward, then backward
// in reverse; with `layers`, the operations of each layer (a run of equal
// layers, -1 none) run forward again just before the layer's backward
// (torch.utils.checkpoint's reentrant backward: the layer re-run under
// enable_grad, then autograd.backward over it).
std::vector<Visit> RunOrder(size_t n, std::span<const int64_t> layers) {
  std::vector<Visit> order;
  order.reserve(2 * n);
  for (size_t k = 0; k < n; ++k) order.push_back({k, false});
  for (size_t end = n; end > 0;) {
    const size_t last = end - 1;
    size_t first = last;
    if (!layers.empty() && layers[last] >= 0) {
      while (first > 0 && layers[first - 1] == layers[last]) --first;
      for (size_t k = first; k <= last; ++k) order.push_back({k, false});
    }
    for (size_t k = end; k-- > first;) order.push_back({k, true});
    end = first;
  }
  return order;
}

// The replay of one iteration (forward, then backward) over `flat`. The
// device's bytes beyond the steady state rise and fall in groups of events
// within a step (releases, gathers, prefetches, gradient chunks,
// reductions); a group is counted at its sum after its gathers or before
// its releases and reductions, plus its largest shard: exact where the
// chunks share one size, an upper bound otherwise (docs/plan.md).
class Replay {
 public:
  Replay(Flat flat, const GeminiSettings& settings)
      : flat_(std::move(flat)),
        separate_grads_(ByteModelOf(settings).grad != 0),
        kept_(ShardKeptOf(settings)),
        max_prefetch_(settings.max_prefetch) {}

  // The peak over the steps of `order`, in elements, and the buffers
  // held there.
  std::pair<Wide, uint64_t> Run(
      std::span<const std::vector<uint64_t>> operations,
      const std::vector<Visit>& order) {
    const size_t n = operations.size();
    steps_.reserve(order.size());
    for (const Visit& v : order) steps_.push_back(ChunksOf(operations[v.op]));
    // A parameter's gradient arrives at the backward step of its first
    // forward use (a tied weight's uses add up before its hook fires).
    std::vector<bool> seen(flat_.chunk_of.size(), false);
    std::vector<std::vector<uint64_t>> arrivals(n);
    for (size_t k = 0; k < n; ++k) {
      for (uint64_t p : operations[k]) {
        if (seen[p]) continue;
        seen[p] = true;
        if (flat_.chunk_of[p] != kNone)
          arrivals[k].push_back(flat_.chunk_of[p]);
      }
    }
    for (size_t s = 0; s < order.size(); ++s) {
      Step(s, order[s].backward ? &arrivals[order[s].op] : nullptr);
    }
    return {peak_, peak_buffers_};
  }

 private:
  // The distinct chunks of an operation's parameters, in their order.
  std::vector<uint64_t> ChunksOf(const std::vector<uint64_t>& op) const {
    std::vector<uint64_t> out;
    for (uint64_t p : op) {
      const uint64_t c = flat_.chunk_of[p];
      if (c != kNone && std::find(out.begin(), out.end(), c) == out.end()) {
        out.push_back(c);
      }
    }
    return out;
  }

  bool Partial(const Chunk& c) const {
    return c.arrived > 0 && c.arrived < c.params;
  }

  // What a buffer of chunk `c` adds while gathered.
  uint64_t Above(const Chunk& c, bool shard_kept) const {
    return c.size - (shard_kept ? c.shard : 0);
  }

  // Records the bytes now plus `transient`.
  void Note(Wide transient) {
    const Wide now = above_ + transient;
    const uint64_t buffers = held_.size() + grad_held_.size();
    if (now > peak_ || (now == peak_ && buffers > peak_buffers_)) {
      peak_ = now;
      peak_buffers_ = buffers;
    }
  }

  // The largest shard of `ids`.
  uint64_t LargestShard(const std::vector<uint64_t>& ids) const {
    uint64_t largest = 0;
    for (uint64_t id : ids) {
      largest = std::max(largest, flat_.chunks[id].shard);
    }
    return largest;
  }

  // Gathers `ids` (none of them held) as one group of events.
  void Gather(const std::vector<uint64_t>& ids, bool pending) {
    if (ids.empty()) return;
    for (uint64_t id : ids) {
      Chunk& c = flat_.chunks[id];
      c.held = true;
      c.pending = pending;
      held_.push_back(id);
      above_ += Above(c, kept_.fp16);
    }
    Note(LargestShard(ids));
  }

  // Releases or reduces the fp16 chunks (or, with `grads`, the gradient
  // chunks) of `ids` as one group of events.
  void Drop(const std::vector<uint64_t>& ids, bool grads) {
    if (ids.empty()) return;
    Note(LargestShard(ids));
    std::vector<uint64_t>& list = grads ? grad_held_ : held_;
    for (uint64_t id : ids) {
      Chunk& c = flat_.chunks[id];
      (grads ? c.grad_held : c.held) = false;
      above_ -= Above(c, grads ? kept_.grad : kept_.fp16);
      list.erase(std::find(list.begin(), list.end(), id));
    }
  }

  // One operation: pre_op (wait for its prefetched chunks, release what can
  // be released, gather its chunks, prefetch), the computation, and in
  // backward its gradients (`arrivals`: the chunk of each) and reductions;
  // a forward run again by checkpointing has none (`arrivals` null).
  void Step(size_t s, const std::vector<uint64_t>* arrivals) {
    std::vector<Chunk>& chunks = flat_.chunks;
    for (uint64_t c : steps_[s]) {
      chunks[c].in_operation = true;
      if (chunks[c].pending) {
        chunks[c].pending = false;
        --pending_;
      }
    }
    std::vector<uint64_t> released;
    for (uint64_t id : held_) {
      const Chunk& c = chunks[id];
      if (!c.in_operation && !c.pending && (separate_grads_ || !Partial(c))) {
        released.push_back(id);
      }
    }
    Drop(released, /*grads=*/false);
    std::vector<uint64_t> gathered;
    for (uint64_t c : steps_[s]) {
      chunks[c].in_operation = false;
      if (!chunks[c].held) gathered.push_back(c);
    }
    Gather(gathered, /*pending=*/false);
    Gather(Prefetch(s), /*pending=*/true);
    Note(0);
    if (arrivals == nullptr) return;
    std::vector<uint64_t> reduced;
    std::vector<uint64_t> new_grads;
    for (uint64_t id : *arrivals) {
      Chunk& c = chunks[id];
      if (separate_grads_ && !c.grad_held &&
          std::find(new_grads.begin(), new_grads.end(), id) ==
              new_grads.end()) {
        new_grads.push_back(id);
      }
      if (++c.arrived == c.params) reduced.push_back(id);
    }
    for (uint64_t id : new_grads) {
      chunks[id].grad_held = true;
      grad_held_.push_back(id);
      above_ += Above(chunks[id], kept_.grad);
    }
    if (!new_grads.empty()) Note(0);
    Drop(reduced, /*grads=*/separate_grads_);
    if (separate_grads_) {
      // grad_handle releases the fp16 chunk once its gradients are reduced.
      std::erase_if(reduced, [&](uint64_t id) { return !chunks[id].held; });
      Drop(reduced, /*grads=*/false);
    }
  }

  // get_prefetch_chunks: the next chunks the later steps need that are not
  // gathered, while fewer than max_prefetch are outstanding.
  std::vector<uint64_t> Prefetch(size_t s) {
    std::vector<uint64_t> out;
    if (max_prefetch_ <= pending_) return out;
    const uint64_t room = max_prefetch_ - pending_;
    for (size_t t = s + 1; t < steps_.size() && out.size() < room; ++t) {
      for (uint64_t c : steps_[t]) {
        if (out.size() >= room) break;
        if (flat_.chunks[c].held ||
            std::find(out.begin(), out.end(), c) != out.end()) {
          continue;
        }
        out.push_back(c);
      }
    }
    pending_ += out.size();
    return out;
  }

  Flat flat_;
  bool separate_grads_;
  ShardKept kept_;
  uint64_t max_prefetch_;
  std::vector<std::vector<uint64_t>> steps_;  // the chunks of each step
  std::vector<uint64_t> held_;                // gathered fp16 chunks, in order
  std::vector<uint64_t> grad_held_;           // gathered gradient chunks
  uint64_t pending_ = 0;                      // prefetched, not yet used
  Wide above_ = 0;                            // elements above the steady state
  Wide peak_ = 0;
  uint64_t peak_buffers_ = 0;
};

// The largest non-gathered chunk, whole.
GatheredPeak LargestChunk(std::span<const GroupLayout> groups,
                          uint64_t* largest) {
  GatheredPeak peak;
  *largest = 0;
  for (const GroupLayout& g : groups) {
    if (g.config.keep_gathered) continue;
    for (const ChunkLayout& c : g.chunks) {
      *largest = std::max(*largest, c.size);
      peak.chunks = 1;
    }
  }
  return peak;
}

}  // namespace

absl::StatusOr<GatheredPeak> GatheredChunkPeak(
    std::span<const uint32_t> dp_degrees, size_t num_params,
    const std::vector<bool>& frozen, std::span<const GroupLayout> groups,
    std::span<const std::vector<uint64_t>> operations,
    std::span<const int64_t> recomputed_layers,
    const GeminiSettings& settings) {
  if (!recomputed_layers.empty() &&
      recomputed_layers.size() != operations.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "operations: ", recomputed_layers.size(), " recomputed layers for ",
        operations.size(), " operations"));
  }
  for (size_t k = 0; k < operations.size(); ++k) {
    for (uint64_t p : operations[k]) {
      if (p >= num_params) {
        return absl::InvalidArgumentError(absl::StrCat(
            "operations[", k, "]: parameter ", p, " of ", num_params));
      }
    }
  }
  GatheredPeak peak;
  Wide elements = 0;
  if (operations.empty()) {
    uint64_t largest = 0;
    peak = LargestChunk(groups, &largest);
    elements = largest;
  } else {
    Replay replay(Flatten(dp_degrees, num_params, frozen, groups), settings);
    std::tie(elements, peak.chunks) =
        replay.Run(operations, RunOrder(operations.size(), recomputed_layers));
  }
  const Wide bytes = elements * ByteModelOf(settings).gathered;
  if (bytes > ~uint64_t{0}) {
    return absl::InvalidArgumentError(
        "gathered_chunk_bytes: exceeds 2^64-1 bytes");
  }
  peak.bytes = static_cast<uint64_t>(bytes);
  return peak;
}

std::span<const int64_t> RecomputedLayers(
    const ModelOperations& operations,
    const std::optional<PlanWorkload>& workload) {
  if (!workload.has_value() || !workload->workload.activation_checkpointing) {
    return {};
  }
  return operations.layers;
}

std::optional<std::string> GatheredChunksNote(
    const ModelOperations& operations) {
  if (operations.unsequenced_model_type.empty()) return std::nullopt;
  return absl::StrCat(
      "gathered_chunk_bytes counts one chunk, the largest: model_type ",
      operations.unsequenced_model_type,
      " has no operation sequence yet (docs/plan.md, \"Gathered chunks\")");
}

}  // namespace chunkplan::planner
