#!/usr/bin/python3
"""The placement oracle: what GeminiPlugin's placement policies keep where.

An independent Python statement of the rules of issue 27 (static placement
with offload_optim_frac, shard_param_frac and offload_param_frac; auto
placement), written from the issue text and checked against ColossalAI's code
in /work/shared/reference/colossalai/*.txt (placement_policy.py,
gemini_ddp.py, gemini_optimizer.py, chunk.py). Nothing here comes from the
C++ side. layout_oracle.py calls place() on its chunk layout.

Where ColossalAI's chunk order is arbitrary (setup_grads_device iterates a
Python set of chunks), this oracle does not reason about which sets an order
can give: for every vector of counts per fp16 size (chunks of one size are
interchangeable for the visiting rule) it simulates the rule on the order
that visits those chunks first, smallest first, and keeps the vectors the
simulation reproduces. Within a vector it picks which chunks of each size
by sorting (_Extremes.by_sorting): a rank's bytes are a sum of one term per
chunk, set by that chunk's own marks (asserted on every answer), and the
lexicographic order of (device, host) pairs is total and kept by addition,
so the k chunks of a size with the largest (or smallest) change give the
most (or least) sum of any k of them. _Extremes.by_enumeration, every
choice of chunks, is the reference it is held equal to
(placement_oracle_test.py); it is exponential in the chunks of a size that
differ on a rank (a Layout of Mixtral's 802 chunks took 47 s with it, under
half a second sorted).
"""

import collections
import itertools
import math

HALF = 2
MASTER = 4
OPTIMIZER_NONE = 1
PLACEMENT_STATIC = 0
PLACEMENT_AUTO = 1


def rates(s):
    """Per-element bytes: (param, master, grad, optimizer, pinned, pageable)
    as issue 12's table has them; pageable: the shard of a chunk whose
    optimizer side is on the host, in pageable memory when not pinned (a
    chunk moved to the host without pinned memory adds its shard there)."""
    master = MASTER if s["master_weights"] else 0
    separate = (not s["master_weights"]) or s["gradient_accumulation"]
    grad = HALF if separate else 0
    opt = 0 if s["optimizer"] == OPTIMIZER_NONE else 2 * (
        MASTER if s["master_weights"] else HALF)
    held = HALF + master + grad
    return HALF, master, grad, opt, (held if s["pin_memory"] else 0), (
        0 if s["pin_memory"] else held)


def _real(chunk, degree, rank):
    shard = chunk.size // degree
    return min(max(chunk.used - rank * shard, 0), shard)


def _memory(flat, frozen_numel, s, rank_of, marks):
    """One rank's bytes; marks[i] is a set of "optim", "gathered", "param"."""
    p, m, g, o, pinned_rate, pageable = rates(s)
    out = collections.OrderedDict((k, 0) for k in (
        "param_bytes", "master_bytes", "grad_bytes", "optimizer_bytes",
        "frozen_bytes", "device_bytes", "pinned_host_bytes",
        "offloaded_host_bytes", "host_bytes"))
    for i, (chunk, degree, kept) in enumerate(flat):
        if kept:
            out["param_bytes"] += p * chunk.size
            out["master_bytes"] += m * chunk.size
            out["grad_bytes"] += g * chunk.size
            out["optimizer_bytes"] += o * chunk.used
            continue
        shard = chunk.size // degree
        real = _real(chunk, degree, rank_of(degree))
        out["pinned_host_bytes"] += pinned_rate * shard
        if "gathered" in marks[i]:
            out["param_bytes"] += p * chunk.size   # whole fp16 chunk
        elif "param" not in marks[i]:
            out["param_bytes"] += p * shard
        if "optim" in marks[i]:
            # fp32 shard and states on the host; the fp16 shard (through
            # which gradients reach the host) too when not pinned.
            out["offloaded_host_bytes"] += o * real + pageable * shard
        else:
            out["master_bytes"] += m * shard
            out["grad_bytes"] += g * shard
            out["optimizer_bytes"] += o * real
    out["frozen_bytes"] = HALF * frozen_numel
    out["device_bytes"] = sum(out[k] for k in (
        "param_bytes", "master_bytes", "grad_bytes", "optimizer_bytes",
        "frozen_bytes"))
    out["host_bytes"] = out["pinned_host_bytes"] + out["offloaded_host_bytes"]
    return out


def _visit(runs, budget):
    """placement_policy.py setup_grads_device's loop for chunks visited in
    this order, given as runs (w, k): k chunks of w fp16 bytes in a row.
    Each chunk is offloaded while offloaded-so-far < budget (a float; for
    an integer n, n < budget iff n < ceil(budget), exactly); returns how
    many of each run are offloaded: chunk j of a run (from 0) is iff
    offloaded + j * w < ceil(budget), so the first ceil(room / w) of it,
    at most k, where room = ceil(budget) - offloaded > 0; a run of chunks
    of 0 bytes (every parameter in them of 0 elements) is offloaded whole
    while there is room, since none of them adds to the sum."""
    limit = math.ceil(budget)
    offloaded = 0
    taken = []
    for w, k in runs:
        room = limit - offloaded
        if room <= 0:
            t = 0
        elif w == 0:
            t = k
        else:
            t = min(k, -(-room // w))
        taken.append(t)
        offloaded += t * w
    return taken


def _reachable_counts(classes, budget):
    """Every vector of per-size counts that some order offloads: the order
    that visits k_w chunks of each size w first (ascending sizes), then the
    rest, is simulated; the vector is reachable iff the simulation offloads
    exactly those first chunks (any other order offloading the same chunks
    has the same sums before each offloaded chunk or larger ones)."""
    sizes = sorted(classes)
    found = []
    for counts in itertools.product(*(range(len(classes[w]) + 1)
                                      for w in sizes)):
        first = list(zip(sizes, counts))
        rest = [(w, len(classes[w]) - k) for w, k in zip(sizes, counts)]
        if _visit(first + rest, budget) == list(counts) + [0] * len(sizes):
            found.append(dict(zip(sizes, counts)))
    return found


def _classes(flat):
    """The non-gathered chunks (indices into flat) by fp16 bytes."""
    classes = collections.defaultdict(list)
    for i, (chunk, _, kept) in enumerate(flat):
        if not kept:
            classes[HALF * chunk.size].append(i)
    return classes


def _change(flat, s, marks, rank_of, i):
    """(device, host) bytes a rank gains when chunk i's optimizer side is
    offloaded (_memory of chunk i alone, with its marks, before and
    after)."""
    before = _memory([flat[i]], 0, s, rank_of, [marks[i]])
    after = _memory([flat[i]], 0, s, rank_of, [marks[i] | {"optim"}])
    return (after["device_bytes"] - before["device_bytes"],
            after["host_bytes"] - before["host_bytes"])


def _sorted_changes(classes, change, most_device):
    """Per fp16 size w: (its chunks in decreasing (device, host) change(i)
    when most_device, else increasing; prefix[k] the sum of the first k's
    changes), so that the first k chunks of a size give the most (or the
    least) of any k of them: docs/placement.md, "Which chunks, over every
    order"."""
    sign = 1 if most_device else -1
    out = {}
    for w, chunks in classes.items():
        order = sorted(chunks, reverse=True, key=lambda i: (
            sign * change(i)[0], sign * change(i)[1]))
        out[w] = (order, list(itertools.accumulate(
            (change(i) for i in order), initial=(0, 0),
            func=lambda a, b: (a[0] + b[0], a[1] + b[1]))))
    return out


class _Extremes:
    """One rank's figures at the extremes over every chunk order, under an
    optimizer budget whose reachable count vectors (per fp16 size) are
    given; `marks` are the other policies' (they have no extremes)."""

    def __init__(self, flat, frozen_numel, s, marks, classes, reachable):
        self.flat, self.frozen_numel, self.s = flat, frozen_numel, s
        self.marks, self.classes, self.reachable = marks, classes, reachable
        self.changes = {}   # (chunk, its rank) -> _change

    def change(self, rank_of, i):
        key = (i, rank_of(self.flat[i][1]))
        if key not in self.changes:
            self.changes[key] = _change(self.flat, self.s, self.marks,
                                        rank_of, i)
        return self.changes[key]

    def figures(self, rank_of, chosen):
        """The rank's bytes with the optimizer side of `chosen` offloaded."""
        m = [set(x) for x in self.marks]
        for i in chosen:
            m[i].add("optim")
        return _memory(self.flat, self.frozen_numel, self.s, rank_of, m)

    def by_sorting(self, rank_of, most_device):
        """The most (most_device) or least (device bytes, then host bytes)
        over every reachable vector, each size's chunks taken in the order
        of _sorted_changes. Ties keep the first: two choices with equal
        device and host bytes have equal parts (the master, gradient and
        optimizer rates fix the sums of shards and of real elements)."""
        only = self.reachable[0]
        if len(self.reachable) == 1 and all(
                k in (0, len(self.classes[w])) for w, k in only.items()):
            # One set of chunks (nothing, or every chunk of some sizes).
            return self.figures(rank_of, [i for w, k in only.items() if k
                                          for i in self.classes[w]])
        sign = 1 if most_device else -1
        per_size = _sorted_changes(
            self.classes, lambda i: self.change(rank_of, i), most_device)
        best = None
        for r in self.reachable:
            d = sum(per_size[w][1][k][0] for w, k in r.items())
            h = sum(per_size[w][1][k][1] for w, k in r.items())
            if best is None or (sign * d, sign * h) > best[0]:
                best = ((sign * d, sign * h), r, d, h)
        _, r, d, h = best
        got = self.figures(rank_of, [i for w, k in r.items()
                                     for i in per_size[w][0][:k]])
        # The method's condition: a rank's bytes are a sum over chunks, each
        # term set by that chunk's own marks.
        base = self.figures(rank_of, [])
        assert (got["device_bytes"], got["host_bytes"]) == (
            base["device_bytes"] + d, base["host_bytes"] + h), (got, base)
        return got

    def by_enumeration(self, rank_of, most_device):
        """by_sorting's reference: every reachable count vector, and within
        a size every choice of which chunks, chunks of one size whose
        offload changes this rank's bytes alike counted as one kind; the
        device bytes' extreme, then the host bytes'. Exponential in the
        kinds per size: for tests on small layouts."""
        kinds = collections.defaultdict(list)   # (size, change) -> chunks
        for w, chunks in self.classes.items():
            for i in chunks:
                kinds[(w, self.change(rank_of, i))].append(i)
        best = None
        for r in self.reachable:
            per_size = []
            for w, k in sorted(r.items()):
                mine = [key for key in kinds if key[0] == w]
                splits = [split for split in itertools.product(
                    *(range(len(kinds[key]) + 1) for key in mine))
                    if sum(split) == k]
                per_size.append([list(zip(mine, split)) for split in splits])
            for pick in itertools.product(*per_size):
                mem = self.figures(rank_of, [i for part in pick
                                             for key, n in part
                                             for i in kinds[key][:n]])
                key = (mem["device_bytes"], mem["host_bytes"])
                if not most_device:
                    key = (-key[0], -key[1])
                if best is None or key > best[0]:
                    best = (key, mem)
        return best[1]


def place(groups, frozen_numel, s, least_loaded=True, by_enumeration=False):
    """(most, most_least, least, outcome) for the groups of layout_oracle
    (each with .config.dp_degree/.keep_gathered and .chunks with size, used,
    num_params), frozen elements and the settings dict. least_loaded=False
    leaves `least` None (rank P - 1's extreme; plan_oracle.py needs rank
    0's only). The extremes over every chunk order come from
    _Extremes.by_sorting, or with by_enumeration from its reference (tests
    on small layouts only)."""
    flat = [(c, g.config.dp_degree, g.config.keep_gathered)
            for g in groups for c in g.chunks]
    non_gathered = [i for i, f in enumerate(flat) if not f[2]]
    # setup_grads_device: total_chunk_mem = sum over fp16 params of their
    # chunk's chunk_mem (chunk_size x 2 bytes): once per parameter.
    total = sum(HALF * c.size * c.num_params for c, _, _ in flat)
    notes = []
    is_auto = s["placement"] == PLACEMENT_AUTO
    optim = 0.0 if is_auto else s["offload_optim_frac"]
    shard = 1.0 if s["shard_param_frac"] is None else s["shard_param_frac"]
    param = s["offload_param_frac"]
    marks = [set() for _ in flat]
    outcome = collections.OrderedDict([
        ("offloaded_chunks", 0), ("offloaded_chunks_max", 0),
        ("effective_offload_optim_frac", 0.0), ("gathered_at_run_time", 0),
        ("param_offloaded_chunks", 0), ("notes", notes)])
    # StaticPlacementPolicy.__init__ zeroes offload_param_frac with a warning
    # unless shard_param_frac == 1.0 and offload_optim_frac == 1.0.
    if param > 0.0 and (shard != 1.0 or optim != 1.0):
        notes.append("offload_param_frac %g is ignored: ColossalAI honours "
                     "it only when shard_param_frac == 1 and "
                     "offload_optim_frac == 1" % param)
        param = 0.0

    def front_until_rest_fits(keep):
        # evict_tensors: walk the evictable chunks (compute order: allocation
        # order), acting on each until the rest's chunk_mem <= keep.
        rest = sum(HALF * flat[i][0].size for i in non_gathered)
        passed = []
        for i in non_gathered:
            if rest <= keep:
                break
            rest -= HALF * flat[i][0].size
            passed.append(i)
        return passed

    if not is_auto and shard < 1.0:
        released = front_until_rest_fits(total * (1 - shard))
        kept = [i for i in non_gathered if i not in released]
        for i in kept:
            marks[i].add("gathered")
        outcome["gathered_at_run_time"] = len(kept)
        notes.append(
            "shard_param_frac %g keeps %d of %d non-gathered chunks whole on "
            "the device at run time (keep_gathered_chunk_mem is %g of the "
            "inflated total %d bytes)" % (shard, len(kept), len(non_gathered),
                                          1 - shard, total))
    if param > 0.0:
        moved = front_until_rest_fits(total * (1 - param))
        for i in moved:
            marks[i].add("param")
        outcome["param_offloaded_chunks"] = len(moved)
        notes.append(
            "offload_param_frac %g moves the fp16 shards of %d of %d "
            "non-gathered chunks to the host (keep_cuda_chunk_mem is %g of "
            "the inflated total %d bytes)" % (param, len(moved),
                                              len(non_gathered), 1 - param,
                                              total))
    budget = total * optim
    classes = _classes(flat)
    all_bytes = sum(HALF * flat[i][0].size for i in non_gathered)
    if is_auto:
        reachable = [{w: len(v) for w, v in classes.items()}]
        outcome["offloaded_chunks"] = len(non_gathered)
        outcome["offloaded_chunks_max"] = len(non_gathered)
        outcome["effective_offload_optim_frac"] = 1.0 if non_gathered else 0.0
    else:
        # A budget of 0: `offloaded >= budget` holds at once, nothing moves.
        reachable = ([{w: 0 for w in classes}] if budget <= 0
                     else _reachable_counts(classes, budget))
        counts = [sum(r.values()) for r in reachable]
        least = min(counts)
        outcome["offloaded_chunks"] = least
        outcome["offloaded_chunks_max"] = max(counts)
        # The bytes of the fewest-chunk order (largest first).
        fewest = [sum(w * k for w, k in r.items())
                  for r in reachable if sum(r.values()) == least]
        least_bytes = max(fewest)
        if all_bytes:
            outcome["effective_offload_optim_frac"] = least_bytes / all_bytes
        if optim > 0:
            notes.append(
                "offload_optim_frac %g offloads %d to %d of %d non-gathered "
                "chunks (%.2f%% of their fp16 bytes): ColossalAI's budget is "
                "the fraction of %d bytes, a total that counts each fp16 "
                "chunk once per parameter it holds (%d bytes counted once)"
                % (optim, least, max(counts), len(non_gathered),
                   100 * outcome["effective_offload_optim_frac"], total,
                   all_bytes))

    orders = _Extremes(flat, frozen_numel, s, marks, classes, reachable)
    extreme = orders.by_enumeration if by_enumeration else orders.by_sorting
    most = extreme(lambda d: 0, True)
    most_least = extreme(lambda d: 0, False)
    least = extreme(lambda d: d - 1, False) if least_loaded else None
    if is_auto:
        notes.append(
            "auto: the master shards and optimizer states of all %d "
            "non-gathered chunks are on the host; fp16 shards stay on the "
            "device unless evicted at run time, and during warm-up model "
            "data may use 20%% of the device's memory" % len(non_gathered))
        cap = s["device_memory_bytes"]
        if cap is not None:
            # AutoPlacementPolicy.evict_tensors in warm-up: model data may
            # use cuda_capacity - cuda_capacity * 0.8.
            used = (most["param_bytes"] + most["master_bytes"] +
                    most["grad_bytes"])
            share = cap - cap * 0.8
            moves = used > share
            notes.append(
                "auto: rank 0's chunks on the device take %d bytes, %s the "
                "warm-up share of %.0f bytes (20%% of %d): %s" % (
                    used, "more than" if moves else "within", share, cap,
                    "chunks will be moved to the host during warm-up"
                    if moves else "no chunk is moved during warm-up"))
    return most, most_least, least, outcome


def check(s):
    """The placement fields' checks; returns an error message or None."""
    for name in ("shard_param_frac", "offload_optim_frac",
                 "offload_param_frac"):
        v = s[name]
        if v is not None and not (0.0 <= v <= 1.0):
            return "gemini.%s: not a fraction in [0, 1]" % name
    if s["placement"] == PLACEMENT_AUTO:
        for name in ("shard_param_frac", "offload_optim_frac",
                     "offload_param_frac"):
            if s[name] not in (None, 0.0):
                return "gemini.%s: a static placement setting" % name
    elif s["device_memory_bytes"] is not None:
        return "gemini.device_memory_bytes: an auto placement setting"
    return None
