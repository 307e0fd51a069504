#!/usr/bin/python3
"""The plan oracle: every Gemini configuration Plan considers, by brute force.

An independent Python statement of docs/plan.md, "The search, exactly"
(issue 28) and "The verdict" (issue 41: the margin, tight, the order),
written from that text and from docs/placement.md and docs/layout.md, never
from the C++ side. Every figure comes from the other oracles: the layout
(layout_oracle: the grid, the chunk layout, the peak objective), the
placement (placement_oracle.place: what each setting keeps where), the
activation estimate (activation_oracle), the model description (models:
numels and the shape from `search.model`) and the verdict (verdict_oracle:
fits, tight, the margin, why_not; the device check of f* and g* is its
"need <= device memory - margin bytes").

Input: one chunkplan.v1.PlanRequest in protobuf's JSON mapping (proto field
names or lowerCamelCase; uint64 as numbers or decimal strings; enums as
names or numbers). Output: the PlanResponse with proto field names, every
primitive printed, uint64 as decimal strings, uint32 and bool as JSON
values, doubles as JSON numbers (Python's repr, which reads back exactly),
enums as names, `plan_nanos` left out; or {"error": "<message naming the
field>"}.

Usage:
  /usr/bin/python3 plan_oracle.py < request.json
  /usr/bin/python3 plan_oracle.py --lines < requests.jsonl   (or --jsonl)
With --lines (--jsonl, as testing/oracle_runner.h passes it) every input
line is one request and gets one answer line, flushed, in order.

How the two fractions are found (not the C++ side's bisection):
  f* (offload_optim_frac): the worst order's device bytes depend on the
      budget b = float(T) * f only through comparisons of b with sums of
      the non-gathered chunks' fp16 bytes (docs/placement.md: a set S is
      offloaded by some order iff sum(S) - max(S) < b and (sum(S) >= b or
      S is every chunk)), and chunks of one size are interchangeable, so
      the breakpoints are the sums n1*w1 + n2*w2 + ... over the counts per
      size. For each sum s, ascending, the candidate is the smallest double
      f with float(T) * f > s (math.nextafter from s / T). With few
      breakpoints and chunks the placement oracle is asked at each, in
      order, and the first that passes the device check wins; otherwise
      the breakpoints are bisected (the device bytes never grow with the
      budget: docs/plan.md) with rank 0's worst-order device bytes from the
      same count vectors, and the answer is then certified by the placement
      oracle itself: it passes at f*, and fails at nextafter(f*, 0).
  g* (offload_param_frac, with offload_optim_frac = 1): the walk in compute
      order moves the shortest prefix whose remainder is at most
      keep = float(T) * (1 - g), so the breakpoints are the suffix sums of
      the chunks' fp16 bytes: moving k chunks needs keep < suffix[k - 1].
      The smallest g in (0, 1] with that property is found over the
      doubles' bit patterns (1 - g rounds, so nextafter steps in g may
      leave it unchanged for 2^52 steps); the prefix length k is searched
      with the placement oracle, and certified as f* is.

Readings where docs/plan.md leaves a choice (the lead aligns the C++ side):
  - Checks run in this order: the cluster's fields, the workload's sizes,
    `search.model` (described once), the workload's model family, then the
    search part and `frozen` as Layout checks them at each world size in
    the request's order (the search oracle runs once, at degree 1: see
    _worlds), then the activation estimate's own refusal (a part past
    2^64 - 1). Every check precedes any evaluation; a device_need_bytes or
    host_bytes_per_node past 2^64 - 1 is refused when the first option
    that has it is built (world sizes in the request's order, then the
    sources, then the placement ranks), and the message names that option.
  - The placement fields of `gemini` are ignored, not checked.
  - An option's `gemini` states every fixed choice with its resolved value
    (master_weights and pin_memory printed even where the request left them
    unset), placement, offload_optim_frac and offload_param_frac;
    shard_param_frac is left unset; device_memory_bytes only under auto.
  - options_considered counts the options built (present placements of the
    distinct chunk sizes), before max_options cuts the list.
  - host_bytes_per_node past 2^64 - 1 is refused as device_need_bytes is.
  - The optimizer note is added under every placement rank 1 to 4, even
    with OPTIMIZER_NONE (docs/plan.md says "under any optimizer offload").
  - Rank 1 exists when the device check passes just below 1
    (nextafter(1, 0)); its f* is then found among the breakpoints.
  - The world-size divisibility rule for colossalai_search is applied, but
    cannot fire: with dp_degrees = [W] the search rounds its pick up to the
    lcm of the degrees, W, and an oversize chunk is rounded up to W too.
  - The peak objective's best on a grid: brute force (every candidate laid
    out) where the grid is small; else the candidates where the layout can
    change (see _peak_best): within a run of candidates whose next-fit
    decisions are all the same, every chunk's size, shard and real elements
    and the gathered buffer are nondecreasing in C', so the run's first
    candidate is its least (and the first with the least value overall).
"""

import argparse
import collections
import itertools
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import activation_oracle  # noqa: E402
import gathered_oracle  # noqa: E402
import decoder_traits  # noqa: E402
import layout_oracle as lo  # noqa: E402
import tp_activation_oracle  # noqa: E402
import models  # noqa: E402
import placement_oracle as po  # noqa: E402
import tp_oracle  # noqa: E402
import verdict_oracle  # noqa: E402
from models.hf_config import HfConfig  # noqa: E402

UINT64_MAX = lo.UINT64_MAX
UINT32_MAX = lo.UINT32_MAX
DEFAULT_MAX_OPTIONS = 10
MAX_WORLD_SIZES = 64
WIDE_RANGE_M = 1024
WIDE_INTERVAL = 128

SOURCES = ("colossalai_search", "peak_rank_bytes", "peak_rank_bytes_wide")
OBJECTIVE_NAMES = {lo.OBJECTIVE_SEED_WASTE: "OBJECTIVE_SEED_WASTE",
                   lo.OBJECTIVE_PEAK_RANK_BYTES: "OBJECTIVE_PEAK_RANK_BYTES"}
# The placement ranks of docs/plan.md's table.
NOTHING_MOVED, PARTIAL_OPTIMIZER, FULL_OPTIMIZER, OPTIMIZER_AND_PARAMS, AUTO = (
    range(5))
OPTIMIZER_NOTE = ("the optimizer must run where its states live: HybridAdam "
                  "(CPUAdam on the host states); a GPU-only fused Adam fails "
                  "at the first step")
ESTIMATE_NOTE = ("activation_bytes and transient_bytes are estimates "
                 "(docs/plan.md)")
# search_tp's degrees, and the most entries a mesh list may have.
SEARCHED_TP_SIZES = (1, 2, 4, 8)
MAX_MESH_SIZES = 8


def not_split_note(why):
    """The note beside activation_bytes where tp rank 0's split is not
    modelled (docs/tensor-parallelism.md, "Activations"): the estimate is
    the whole model's."""
    return (f"activations not split by tp: {why}; activation_bytes is the "
            "estimate without tensor parallelism (tp_size 1)")

# Grids of at most this many candidates x numels are laid out candidate by
# candidate; larger ones jump between layouts (_peak_best).
BRUTE_FORCE_WORK = 60000
# The f* breakpoints are asked of the placement oracle one by one when there
# are at most this many and at most LINEAR_CHUNKS chunks; else bisected
# (each placement oracle call walks every count vector anew).
LINEAR_BREAKPOINTS = 8
LINEAR_CHUNKS = 12
# Beyond this many count vectors (chunk sizes x counts), f* is bisected over
# the doubles' bit patterns instead of over the listed breakpoints.
MAX_COUNT_VECTORS = 1 << 20

_PRECISION_NAMES = {0: "PRECISION_FP16", 1: "PRECISION_BF16"}
_OPTIMIZER_NAMES = {0: "OPTIMIZER_ADAM", 1: "OPTIMIZER_NONE"}
_PLACEMENT_NAMES = {po.PLACEMENT_STATIC: "PLACEMENT_STATIC",
                    po.PLACEMENT_AUTO: "PLACEMENT_AUTO"}


class PlanError(ValueError):
    """A PlanRequest Plan refuses; the message names the field. `code`:
    INVALID_ARGUMENT, or UNIMPLEMENTED for a family's layer not estimated."""

    def __init__(self, message, code="INVALID_ARGUMENT"):
        super().__init__(message)
        self.code = code


# ---------------------------------------------------------------------------
# Reading the request.

_TOP_FIELDS = {"search": "search", "frozen": "frozen", "gemini": "gemini",
               "cluster": "cluster", "max_options": "max_options",
               "maxOptions": "max_options", "workload": "workload",
               "search_tp": "search_tp", "searchTp": "search_tp",
               "tp_sizes": "tp_sizes", "tpSizes": "tp_sizes",
               "extra_dp_sizes": "extra_dp_sizes",
               "extraDpSizes": "extra_dp_sizes"}
# The Cluster message's fields, as the layout oracle reads Layout's.
_CLUSTER_FIELDS = lo._CLUSTER_FIELDS
_WORKLOAD_FIELDS = {"micro_batch": "micro_batch", "microBatch": "micro_batch",
                    "sequence_length": "sequence_length",
                    "sequenceLength": "sequence_length",
                    "activation_checkpointing": "activation_checkpointing",
                    "activationCheckpointing": "activation_checkpointing",
                    "flash_attention": "flash_attention",
                    "flashAttention": "flash_attention",
                    "attention": "attention"}
# Workload.attention's values: the enum's names and numbers.
_ATTENTION = ("ATTENTION_DEFAULT", "ATTENTION_EAGER", "ATTENTION_SDPA",
              "ATTENTION_FLASH_ATTENTION_2")
_ATTENTION_IMPLEMENTATION = ("default", "eager", "sdpa", "flash_attention_2")
# The shape's config keys: (layers, hidden, heads, vocabulary).
_SHAPE_KEYS = {"gpt2": ("n_layer", "n_embd", "n_head", "vocab_size"),
               "bloom": ("n_layer", "hidden_size", "n_head", "vocab_size"),
               "gptj": ("n_layer", "n_embd", "n_head", "vocab_size")}
_DEFAULT_SHAPE_KEYS = ("num_hidden_layers", "hidden_size",
                       "num_attention_heads", "vocab_size")
_NOT_DECODER_ONLY = ("bert",)

Cluster = collections.namedtuple(
    "Cluster", "device_memory_bytes host_memory_bytes gpus_per_node "
    "world_sizes reserve_bytes margin whole_nodes max_nodes")
# margin: a float, or None where unset (the verdict oracle's 0.05)
Parsed = collections.namedtuple(
    "Parsed", "search frozen gemini cluster max_options workload model "
    "meshes extra_dp_sizes sequence_parallelism")
# model: (config dict, Description) or None; meshes: [(tp, numels)] in the
# order tried; extra_dp_sizes: the extra_dp degrees, in order


def _cluster(raw):
    f = lo._fields(raw if raw is not None else {}, _CLUSTER_FIELDS, "cluster")
    sizes = lo._list(f.get("world_sizes", []), "cluster.world_sizes")
    return Cluster(
        lo._uint(f.get("device_memory_bytes", 0),
                 "cluster.device_memory_bytes", UINT64_MAX),
        lo._uint(f.get("host_memory_bytes", 0), "cluster.host_memory_bytes",
                 UINT64_MAX),
        lo._uint(f.get("gpus_per_node", 0), "cluster.gpus_per_node",
                 UINT32_MAX),
        [lo._uint(v, f"cluster.world_sizes[{i}]", UINT32_MAX)
         for i, v in enumerate(sizes)],
        lo._uint(f.get("reserve_bytes", 0), "cluster.reserve_bytes",
                 UINT64_MAX),
        lo._frac(f.get("margin"), "cluster.margin"),
        lo._bool(f.get("whole_nodes", False), "cluster.whole_nodes"),
        lo._uint(f.get("max_nodes", 0), "cluster.max_nodes", UINT32_MAX))


def _workload(raw):
    if raw is None:
        return None
    f = lo._fields(raw, _WORKLOAD_FIELDS, "workload")
    return {
        "micro_batch": lo._uint(f.get("micro_batch", 0),
                                "workload.micro_batch", UINT32_MAX),
        "sequence_length": lo._uint(f.get("sequence_length", 0),
                                    "workload.sequence_length", UINT32_MAX),
        "activation_checkpointing": lo._bool(
            f.get("activation_checkpointing", False),
            "workload.activation_checkpointing"),
        "flash_attention": lo._bool(f.get("flash_attention", False),
                                    "workload.flash_attention"),
        "attention": _attention(f.get("attention", 0))}


def _attention(value):
    """Workload.attention's index (a name or a number, as protobuf's JSON
    takes it)."""
    if isinstance(value, str) and value in _ATTENTION:
        return _ATTENTION.index(value)
    if isinstance(value, int) and not isinstance(value, bool) and \
            0 <= value < len(_ATTENTION):
        return value
    raise PlanError(f"workload.attention: {value!r} is not an Attention")


def _attention_of(workload):
    """The attention the estimate takes; flash_attention true is
    flash_attention_2, and refuses another attention."""
    kind = workload["attention"]
    if workload["flash_attention"]:
        if kind not in (0, 3):
            raise PlanError(
                "workload.flash_attention: true means attention "
                f"ATTENTION_FLASH_ATTENTION_2; attention is {_ATTENTION[kind]}")
        kind = 3
    return _ATTENTION_IMPLEMENTATION[kind]


def _gemini(raw):
    """The fixed choices as the layout oracle reads them (JSON); the
    placement fields are ignored."""
    g = lo._fields(raw if raw is not None else {}, lo._GEMINI_FIELDS,
                   "gemini")
    return collections.OrderedDict([
        ("precision", _PRECISION_NAMES[lo._enum(
            g.get("precision", 0), lo._PRECISIONS, "gemini.precision")]),
        ("master_weights", lo._bool(g.get("master_weights", True),
                                    "gemini.master_weights")),
        ("gradient_accumulation", lo._bool(
            g.get("gradient_accumulation", False),
            "gemini.gradient_accumulation")),
        ("pin_memory", lo._bool(g.get("pin_memory", True),
                                "gemini.pin_memory")),
        ("optimizer", _OPTIMIZER_NAMES[lo._enum(
            g.get("optimizer", 0), lo._OPTIMIZERS, "gemini.optimizer")]),
        ("max_prefetch", lo._uint(g.get("max_prefetch", 0),
                                  "gemini.max_prefetch", UINT32_MAX))])


def _mesh_list(raw, field):
    sizes = [lo._uint(v, f"{field}[{i}]", UINT32_MAX)
             for i, v in enumerate(lo._list(raw, field))]
    if len(sizes) > MAX_MESH_SIZES:
        raise PlanError(f"{field}: {len(sizes)} entries; at most "
                        f"{MAX_MESH_SIZES}")
    for i, v in enumerate(sizes):
        if v == 0:
            raise PlanError(f"{field}[{i}]: must be at least 1")
        if v in sizes[:i]:
            raise PlanError(f"{field}[{i}]: {v} repeats "
                            f"{field}[{sizes.index(v)}]")
    return sizes


def _meshes(top, raw_gemini, search, model, sequence_parallelism):
    """[(tp, numels)]: each tp degree tried with tp rank 0's numels
    (tp_oracle over the model's description; numels given: taken as the
    rank's own). search_tp skips the degrees the policy refuses."""
    g = raw_gemini if isinstance(raw_gemini, dict) else {}
    searching = lo._bool(top.get("search_tp", False), "search_tp")
    listed = _mesh_list(top.get("tp_sizes", []), "tp_sizes")
    if searching:
        if listed:
            raise PlanError("tp_sizes: leave it empty with search_tp")
        sizes = list(SEARCHED_TP_SIZES)
    elif listed:
        sizes = listed
    else:
        sizes = [max(1, lo._uint(g.get("tp_size", g.get("tpSize", 0)),
                                 "gemini.tp_size", UINT32_MAX))]
    if model is None:
        if searching or len(sizes) > 1:
            raise PlanError("search_tp: trying several tp degrees needs "
                            "search.model")
        return [(sizes[0], list(search.get("numels", [])))]
    config, description = model
    out = []
    for tp in sizes:
        try:
            shards = tp_oracle.shard(description, config, tp,
                                     sequence_parallelism)
        except tp_oracle.TpRefused as exc:
            if searching and tp > 1:
                continue
            field = ("gemini.enable_sequence_parallelism"
                     if isinstance(exc, tp_oracle.SpRefused)
                     else "gemini.tp_size")
            raise PlanError(f"search.model: {field}: {exc}") from None
        if (searching and tp > 1 and sequence_parallelism
                and description.model_type
                in tp_activation_oracle.SEQUENCE_PARALLEL
                and _sequence_length(top) % tp):
            continue  # _split asserts the sequence a multiple of tp
        out.append((tp, shards.numels))
    return out


def _sequence_length(top):
    """The workload's sequence length as given (0 without one; its checks
    come later)."""
    work = top.get("workload")
    if not isinstance(work, dict):
        return 0
    value = work.get("sequence_length", work.get("sequenceLength", 0))
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _split_search(raw):
    """(search dict without dp_degrees and model, the raw model or None)."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise PlanError(f"search: expected a JSON object, got {raw!r}")
    search = {k: v for k, v in raw.items()
              if k not in ("dp_degrees", "dpDegrees", "model")}
    return search, raw.get("model")


def _describe(search, raw_model):
    """Puts the described numels (and interval 1024 for 0) in `search`;
    returns (config dict, Description). Errors name search.model."""
    return lo.describe_model(search, raw_model, PlanError)


def _check_cluster(c):
    if c.device_memory_bytes == 0:
        raise PlanError("cluster.device_memory_bytes: 0; a GPU's memory is "
                        "required")
    if c.gpus_per_node == 0:
        raise PlanError("cluster.gpus_per_node: 0; at least 1")
    if c.whole_nodes:
        if c.world_sizes:
            raise PlanError("cluster.world_sizes: must be empty with "
                            "whole_nodes")
        if not 1 <= c.max_nodes <= MAX_WORLD_SIZES:
            raise PlanError(f"cluster.max_nodes: {c.max_nodes}; 1 to "
                            f"{MAX_WORLD_SIZES} with whole_nodes")
        if c.max_nodes * c.gpus_per_node > UINT32_MAX:
            raise PlanError(f"cluster.max_nodes: {c.max_nodes} nodes of "
                            f"{c.gpus_per_node} GPUs: a world size past "
                            "2^32-1")
        _check_margin(c)
        return
    if c.max_nodes:
        raise PlanError("cluster.max_nodes: only with whole_nodes")
    if not c.world_sizes:
        raise PlanError("cluster.world_sizes: empty; at least one world size")
    if len(c.world_sizes) > MAX_WORLD_SIZES:
        raise PlanError(f"cluster.world_sizes: {len(c.world_sizes)} entries;"
                        f" at most {MAX_WORLD_SIZES}")
    first = {}
    for i, w in enumerate(c.world_sizes):
        if w == 0:
            raise PlanError(f"cluster.world_sizes[{i}]: 0; a world size is "
                            "at least 1")
        if w in first:
            raise PlanError(f"cluster.world_sizes[{i}]: {w} repeats "
                            f"cluster.world_sizes[{first[w]}]")
        first[w] = i
    _check_margin(c)


def _check_margin(c):
    try:
        verdict_oracle.check_margin(c.margin)
    except verdict_oracle.VerdictError as exc:
        raise PlanError(str(exc)) from None


def world_sizes(c):
    """The world sizes a checked cluster asks for: the listed ones, or with
    whole_nodes every whole number of nodes, 1 to max_nodes, smallest
    first."""
    if not c.whole_nodes:
        return list(c.world_sizes)
    return [nodes * c.gpus_per_node for nodes in range(1, c.max_nodes + 1)]


def nodes_of(world_size, gpus_per_node):
    """The nodes `world_size` ranks occupy, gpus_per_node to a node."""
    return -(-world_size // gpus_per_node)


def _shape(config, description):
    """The activation oracle's shape and layer traits of a described
    decoder-only config (decoder_traits)."""
    model_type = config.get("model_type")
    keys = _SHAPE_KEYS.get(model_type, _DEFAULT_SHAPE_KEYS)
    # The family's config-class defaults for keys the file leaves out.
    cfg = HfConfig(config, models._BY_MODEL_TYPE[model_type].defaults)
    return decoder_traits.traits(config, description, cfg.size(keys[2]))


def parse(request):
    """A checked PlanRequest as Parsed (the search part is checked later,
    per world size). Raises PlanError or lo.LayoutError."""
    top = lo._fields(request, _TOP_FIELDS, "request")
    search, raw_model = _split_search(top.get("search"))
    frozen = top.get("frozen", [])
    gemini = _gemini(top.get("gemini"))
    cluster = _cluster(top.get("cluster"))
    max_options = lo._uint(top.get("max_options", 0), "max_options",
                           UINT32_MAX)
    workload = _workload(top.get("workload"))
    _check_cluster(cluster)
    if workload is not None:
        for name in ("micro_batch", "sequence_length"):
            if workload[name] == 0:
                raise PlanError(f"workload.{name} must be at least 1")
    model = None if raw_model is None else _describe(search, raw_model)
    raw_gemini = top.get("gemini") or {}
    sp = lo._bool(raw_gemini.get("enable_sequence_parallelism",
                                 raw_gemini.get("enableSequenceParallelism",
                                                False)),
                  "gemini.enable_sequence_parallelism")
    meshes = _meshes(top, raw_gemini, search, model, sp)
    extra_dp = _mesh_list(top.get("extra_dp_sizes", []), "extra_dp_sizes")
    if not extra_dp:
        extra_dp = [max(1, lo._uint(raw_gemini.get(
            "extra_dp_size", raw_gemini.get("extraDpSize", 0)),
            "gemini.extra_dp_size", UINT32_MAX))]
    if workload is not None:
        if model is None:
            raise PlanError("workload: the activation estimate needs "
                            "search.model of a decoder-only family")
        if model[1].model_type in _NOT_DECODER_ONLY:
            raise PlanError(f"workload: search.model is "
                            f"{model[1].model_type!r}, not a decoder-only "
                            "family")
        _attention_of(workload)
    return Parsed(search, frozen, gemini, cluster,
                  max_options or DEFAULT_MAX_OPTIONS, workload, model,
                  meshes, extra_dp, sp)


# ---------------------------------------------------------------------------
# The chunk sizes per world size.


def _layout(numels, degrees, frozen, configs, settings):
    return lo._layout(numels, degrees, frozen, configs, settings,
                      outcome=False)


def _peak(layout):
    return lo._layout_values(layout)[1]


def _next_change(layout, numels):
    """The smallest C' above the current one at which a next-fit decision
    of a swept group flips (docs/layout.md): a regular chunk k takes the
    tensor that opened chunk k + 1 once C' >= used_k + its numel; a tensor
    that opened an oversize chunk (numel > C') opens a regular one once
    C' >= its numel (an oversize chunk's size, so what joins it, depends on
    C' only through that). None when no decision can flip."""
    t = None
    for group in layout.groups:
        if group.config.keep_gathered:
            continue
        size = group.config.chunk_size
        chunks = group.chunks
        for k, chunk in enumerate(chunks):
            if chunk.size > size:
                flip = numels[chunk.first_param]
            elif k + 1 < len(chunks):
                flip = chunk.used + numels[chunks[k + 1].first_param]
            else:
                continue
            assert flip > size, (flip, size)
            t = flip if t is None else min(t, flip)
    return t


def _first_index_reaching(grid, index, t):
    """The first grid index after `index` whose C' is at least t."""
    # C' = C rounded up to the lcm L: C' >= t iff C > L * (ceil(t / L) - 1).
    least = grid.lcm * (-(-t // grid.lcm) - 1) + 1
    return max(index + 1, -(-(least - grid.start) // grid.interval))


def _peak_best(numels, degrees, frozen, settings, grid, brute=None):
    """The grid size C of the first candidate with the least peak rank
    bytes (static placement, nothing moved). brute: None chooses by the
    grid's size; True lays out every candidate; False jumps."""
    if brute is None:
        brute = grid.count * max(1, len(numels)) <= BRUTE_FORCE_WORK
    best = None
    index = 0
    while index < grid.count:
        chunk = lo._candidate_size(grid, index)
        layout = _layout(numels, degrees, frozen, lo._configs_at(grid, chunk),
                         settings)
        value = _peak(layout)
        if best is None or value < best[1]:
            best = (chunk, value)
        if brute:
            index += 1
            continue
        t = _next_change(layout, numels)
        if t is None:
            break
        index = _first_index_reaching(grid, index, t)
    return best[0]


def _divisible(configs, world_size):
    return all(c.keep_gathered or c.chunk_size % world_size == 0
               for c in configs)


World = collections.namedtuple("World", "size parsed grid seed_configs")
# size: W; parsed: the layout oracle's Parsed of {search with dp_degrees
# [W], frozen, gemini}; grid: its search grid; seed_configs: ColossalAI's
# search's configs at W.


def _worlds(parsed, numels, degrees):
    """A World per world size, in the request's order. The search part is
    checked once by the search oracle, at degree 1, and frozen by the
    layout oracle at every W: with one degree for every parameter, neither
    the checks nor the seed's sweep (its waste is computed at C, before its
    pick is rounded up to the lcm of the degrees) depend on that degree, so
    the pick at W is the pick at degree 1 rounded up to W."""
    def request(w):
        search = dict(parsed.search)
        search["numels"] = numels
        search["dp_degrees"] = [w]
        return {"search": search, "frozen": parsed.frozen,
                "gemini": dict(parsed.gemini)}

    at_one = lo._Request(request(1), need_search=True)
    picks = [int(c["chunk_size"]) for c in at_one.search_answer["configs"]
             if not c["keep_gathered"]]
    worlds = []
    for w in degrees:
        world = lo.parse(request(w))
        lo._check_frozen(world)
        grid = lo._grid(world.args)
        # Every group kept gathered: no pick (the configs do not depend on
        # the candidate).
        seed = lo._configs_at(grid, picks[0] if picks else grid.start)
        worlds.append(World(w, world, grid, seed))
    return worlds


def _divisible(configs, world_size):
    return all(c.keep_gathered or c.chunk_size % world_size == 0
               for c in configs)


def _chunk_sizes(world):
    """[(source index, configs)] for one world size, duplicates left out."""
    numels, degrees = world.parsed.args[0], world.parsed.args[1]
    frozen, settings = world.parsed.frozen, world.parsed.settings
    found = []
    if _divisible(world.seed_configs, world.size):
        found.append((0, world.seed_configs))
    best = _peak_best(numels, degrees, frozen, settings, world.grid)
    found.append((1, lo._configs_at(world.grid, best)))
    wide = dict(world.parsed.search_request)
    for key in ("search_range_m", "searchRangeM", "search_interval",
                "searchInterval"):
        wide.pop(key, None)
    wide["search_range_m"] = WIDE_RANGE_M
    wide["search_interval"] = min(WIDE_INTERVAL, world.grid.interval)
    wide_grid = lo._grid(lo.parse({"search": wide}).args)
    best = _peak_best(numels, degrees, frozen, settings, wide_grid)
    found.append((2, lo._configs_at(wide_grid, best)))
    out = []
    for source, configs in found:
        if all(configs != kept for _, kept in out):
            out.append((source, configs))
    return out


# ---------------------------------------------------------------------------
# The placements of one chunk size.


class _Evaluator:
    """One world size's chunk size under every placement: the layout once,
    the placement oracle per setting."""

    def __init__(self, parsed, world, configs, activation):
        self.parsed = parsed
        numels, degrees = world.parsed.args[0], world.parsed.args[1]
        frozen = world.parsed.frozen
        self.settings = world.parsed.settings
        self.layout = _layout(numels, degrees, frozen, configs, self.settings)
        self.frozen_numel = sum(n for i, n in enumerate(numels)
                                if frozen and frozen[i])
        self.fixed = parsed.cluster.reserve_bytes + sum(activation[:2])
        # The gathered chunks: gathered_oracle's replay of the model's
        # operations under each placement (what it changes: which shards
        # stay on the device), else the layout's largest chunk.
        self.operations = (None if parsed.model is None else
                           gathered_oracle.operations(parsed.model[1],
                                                      parsed.model[0]))
        # Under gradient checkpointing each decoder layer's operations run
        # again before its backward (gathered_oracle.replay's `layers`).
        self.layers = (
            gathered_oracle.layers(parsed.model[1], parsed.model[0])
            if self.operations is not None and parsed.workload is not None
            and parsed.workload["activation_checkpointing"] else None)
        self.placed = [
            [i for i, _ in lo._group_params(numels, degrees, frozen,
                                            g.config.dp_degree)]
            for g in self.layout.groups]
        self.flat = [(c, g.config.dp_degree, g.config.keep_gathered)
                     for g in self.layout.groups for c in g.chunks]
        # setup_grads_device's inflated total: each chunk's fp16 bytes once
        # per parameter it holds (docs/placement.md).
        self.total = sum(po.HALF * c.size * c.num_params
                         for c, _, _ in self.flat)
        self.cache = {}

    def settings_for(self, placement, optim=0.0, param=0.0):
        s = self.settings._asdict()
        s.update(placement=placement, offload_optim_frac=optim,
                 offload_param_frac=param, shard_param_frac=None,
                 device_memory_bytes=None)
        if placement == po.PLACEMENT_AUTO:
            s["device_memory_bytes"] = self.parsed.cluster.device_memory_bytes
        return s

    def place(self, placement, optim=0.0, param=0.0):
        """(most, most_least, outcome) from the placement oracle."""
        key = (placement, optim, param)
        if key not in self.cache:
            most, most_least, _, outcome = po.place(
                self.layout.groups, self.frozen_numel,
                self.settings_for(placement, optim, param),
                least_loaded=False)
            self.cache[key] = (most, most_least, outcome)
        return self.cache[key]

    def gathered(self, placement, optim=0.0, param=0.0):
        """(gathered_chunk_bytes, gathered_chunks) under the placement."""
        if self.operations is None:
            return (self.layout.gathered_chunk_bytes,
                    self.layout.gathered_chunks)
        elements, buffers = gathered_oracle.replay(
            self.layout.groups, self.placed, self.operations,
            lo.Settings(**self.settings_for(placement, optim, param)),
            self.layers)
        return lo.HALF_BYTES * elements, buffers

    def passes(self, device_bytes, optim=0.5, param=0.0):
        """The device check under static placement with these fractions
        (0.5: the partial optimizer search's, whose fractions the gathered
        chunks do not tell apart): the need leaves the margin free."""
        c = self.parsed.cluster
        budget = c.device_memory_bytes - verdict_oracle.margin_bytes(
            verdict_oracle.margin_of(c.margin), c.device_memory_bytes)
        gathered = self.gathered(po.PLACEMENT_STATIC, optim, param)[0]
        return device_bytes + gathered + self.fixed <= budget

    def static_passes(self, optim, param=0.0):
        return self.passes(self.place(po.PLACEMENT_STATIC, optim,
                                      param)[0]["device_bytes"], optim, param)


def _smallest_f_above(s, total_float):
    """The smallest double f > 0 with float(T) * f > s (s an integer)."""
    f = s / total_float
    for _ in range(1000):
        if not total_float * f > s:
            break
        f = math.nextafter(f, 0.0)
    for _ in range(1000):
        if total_float * f > s:
            return f
        f = math.nextafter(f, math.inf)
    raise AssertionError(f"no double f with {total_float} * f > {s} nearby")


def _bits(x):
    return struct.unpack("<q", struct.pack("<d", x))[0]


def _double(bits):
    return struct.unpack("<d", struct.pack("<q", bits))[0]


def _smallest_double(predicate, low, high):
    """The smallest double in [low, high] (both >= 0) where the monotone
    predicate (false, then true) holds; None when it fails at high. The
    bit patterns of non-negative doubles are ordered as their values."""
    a, b = _bits(low), _bits(high)
    if not predicate(_double(b)):
        return None
    while a < b:
        mid = (a + b) // 2
        if predicate(_double(mid)):
            b = mid
        else:
            a = mid + 1
    return _double(a)


class _CountVectors:
    """Rank 0's worst-order device bytes under an optimizer budget, from
    the count vectors of docs/placement.md, "Which chunks, over every
    order": a vector (k_w chunks of each fp16 size w) is what some order
    offloads iff sum - max < budget and (sum >= budget or it is every
    chunk); within a size the worst order offloads the chunks that free
    the least on rank 0. Used only to bisect: every answer is checked by
    the placement oracle."""

    def __init__(self, ev):
        s = ev.settings_for(po.PLACEMENT_STATIC)
        marks = [set() for _ in ev.flat]
        # Per size, the chunks that free the least on rank 0 first: prefix
        # sums of their (device, host) changes.
        per_size = po._sorted_changes(
            po._classes(ev.flat),
            lambda i: po._change(ev.flat, s, marks, lambda d: 0, i), True)
        self.base = ev.place(po.PLACEMENT_STATIC)[0]["device_bytes"]
        sizes = sorted(per_size)
        prefix = {w: [-change[0] for change in per_size[w][1]]
                  for w in sizes}
        self.count = math.prod(len(prefix[w]) for w in sizes)
        self.vectors = []  # (sum, largest, freed, is every chunk)
        if self.count > MAX_COUNT_VECTORS:
            return
        for counts in itertools.product(*(range(len(prefix[w]))
                                          for w in sizes)):
            self.vectors.append((
                sum(w * k for w, k in zip(sizes, counts)),
                max([w for w, k in zip(sizes, counts) if k], default=0),
                sum(prefix[w][k] for w, k in zip(sizes, counts)),
                all(k == len(prefix[w]) - 1 for w, k in zip(sizes, counts))))

    def breakpoints(self):
        return sorted({v[0] for v in self.vectors})

    def worst_device(self, budget):
        if budget <= 0:
            return self.base
        freed = min(f for total, largest, f, every in self.vectors
                    if total - largest < budget and (total >= budget or
                                                     every))
        return self.base - freed


def _partial_optim(ev):
    """f*: the smallest double in (0, 1) at which static placement with
    offload_optim_frac = f passes the device check; None if none does."""
    below_one = math.nextafter(1.0, 0.0)
    total = float(ev.total)
    vectors = _CountVectors(ev)
    sums = vectors.breakpoints()
    if vectors.count > MAX_COUNT_VECTORS:
        if not ev.static_passes(below_one):
            return None
        # Too many count vectors to list the breakpoints: bisect the
        # doubles in (0, 1) with the placement oracle (the device bytes
        # never grow with the fraction).
        f = _smallest_double(ev.static_passes, 5e-324, below_one)
    elif len(sums) <= LINEAR_BREAKPOINTS and len(ev.flat) <= LINEAR_CHUNKS:
        # The breakpoints in increasing order; the first that passes.
        if not ev.static_passes(below_one):
            return None
        f = None
        for s in sums:
            candidate = _smallest_f_above(s, total)
            if candidate >= 1.0:
                break
            if ev.static_passes(candidate):
                f = candidate
                break
    else:
        fits = [None] * len(sums)

        def passes_at(j):
            if fits[j] is None:
                candidate = _smallest_f_above(sums[j], total)
                fits[j] = (candidate, ev.passes(
                    vectors.worst_device(total * candidate)))
            return fits[j][1]

        # Rank 0's worst-order bytes just below 1 (the placement oracle's
        # own figure is asked only at f* and below it: each of its calls
        # walks every count vector anew).
        if not ev.passes(vectors.worst_device(total * below_one)):
            return None
        low, high = 0, len(sums) - 1
        assert passes_at(high), "f just below 1 passes, so every chunk does"
        while low < high:
            mid = (low + high) // 2
            if passes_at(mid):
                high = mid
            else:
                low = mid + 1
        f = fits[low][0]
        device = ev.place(po.PLACEMENT_STATIC, f)[0]["device_bytes"]
        assert device == vectors.worst_device(total * f), (f, device)
    # f just below 1 passes, so some breakpoint below 1 does.
    assert f is not None and f < 1.0, f
    # Self-check: f* passes and the double below it does not.
    assert ev.static_passes(f), f
    assert not ev.static_passes(math.nextafter(f, 0.0)), f
    return f


def _keep(total_float, g):
    """keep_cuda_chunk_mem = T * (1 - g), as ColossalAI computes it."""
    return total_float * (1 - g)


def _partial_params(ev):
    """g*: the smallest double in (0, 1] at which static placement with
    offload_optim_frac = 1 and offload_param_frac = g passes the device
    check; None if none does."""
    if not ev.static_passes(1.0, 1.0):
        return None
    total = float(ev.total)
    sizes = [po.HALF * c.size for c, _, kept in ev.flat if not kept]
    suffix = list(itertools.accumulate(reversed(sizes)))[::-1]
    # Candidate k moves (at least) the first k chunks: keep < suffix[k-1].
    candidates = []
    for bound in suffix:
        g = _smallest_double(lambda x, b=bound: _keep(total, x) < b,
                             5e-324, 1.0)
        if g is not None:
            candidates.append(g)
    candidates = sorted(set(candidates))
    assert candidates, "g = 1 passes, so some prefix is moved"
    low, high = 0, len(candidates) - 1
    assert ev.static_passes(1.0, candidates[high])
    while low < high:
        mid = (low + high) // 2
        if ev.static_passes(1.0, candidates[mid]):
            high = mid
        else:
            low = mid + 1
    g = candidates[low]
    # Self-check: g* passes and the double below it does not.
    assert ev.static_passes(1.0, g), g
    assert not ev.static_passes(1.0, math.nextafter(g, 0.0)), g
    return g


# ---------------------------------------------------------------------------
# The options.


def _python_bool(b):
    return "True" if b else "False"


def _colossalai(gemini, configs, placement, optim, param, mesh, sp):
    parts = []
    if placement == po.PLACEMENT_AUTO:
        parts.append('placement_policy="auto"')
    else:
        parts += ['placement_policy="static"', "shard_param_frac=1.0",
                  f"offload_optim_frac={optim!r}",
                  f"offload_param_frac={param!r}"]
    precision = "bf16" if gemini["precision"] == "PRECISION_BF16" else "fp16"
    parts += [f'precision="{precision}"',
              f"master_weights={_python_bool(gemini['master_weights'])}",
              "enable_gradient_accumulation="
              f"{_python_bool(gemini['gradient_accumulation'])}",
              f"pin_memory={_python_bool(gemini['pin_memory'])}"]
    if gemini["max_prefetch"]:
        parts.append(f"max_prefetch={gemini['max_prefetch']}")
    if mesh.tp > 1:
        parts.append(f"tp_size={mesh.tp}")
        if sp:
            parts.append("enable_sequence_parallelism=True")
    if mesh.extra_dp > 1:
        parts.append(f"extra_dp_size={mesh.extra_dp}")
    entries = ", ".join(
        f'{c.dp_degree}: {{"chunk_size": {c.chunk_size}, "keep_gathered": '
        f'{_python_bool(c.keep_gathered)}}}' for c in configs)
    parts.append(f"chunk_config_dict={{{entries}}}")
    return ", ".join(parts)


Mesh = collections.namedtuple("Mesh", "world zero tp extra_dp")
# GeminiPlugin's (zero, extra_dp, tp) of a whole world.


def _option(parsed, mesh, source, configs, ev, rank, placement,
            optim, param, activation):
    world_size = mesh.world
    most, most_least, outcome = ev.place(placement, optim, param)
    cluster = parsed.cluster
    where = (f"options (world size {world_size}, {SOURCES[source]}, "
             f"placement rank {rank})")
    gathered, buffers = ev.gathered(placement, optim, param)
    need = (most["device_bytes"] + gathered + cluster.reserve_bytes +
            sum(activation[:2]))
    if need > UINT64_MAX:
        raise PlanError(f"{where}: device_need_bytes {need} exceeds 2^64-1")
    host = min(cluster.gpus_per_node, world_size) * max(
        most["host_bytes"], most_least["host_bytes"])
    if host > UINT64_MAX:
        raise PlanError(f"{where}: host_bytes_per_node {host} exceeds 2^64-1")
    lo._check_uint64(most, "most_loaded_rank")
    verdict = verdict_oracle.judge(
        need, host, cluster.device_memory_bytes, cluster.reserve_bytes,
        cluster.margin, cluster.host_memory_bytes)
    notes = list(outcome["notes"])
    if rank != NOTHING_MOVED:
        notes.append(OPTIMIZER_NOTE)
    if parsed.workload is not None:
        notes.append(ESTIMATE_NOTE)
        if activation[2] is not None:
            notes.append(activation[2])
    if parsed.model is not None and ev.operations is None:
        notes.append(lo.unsequenced_note(parsed.model[1].model_type))
    gemini = collections.OrderedDict(parsed.gemini)
    # The mesh as the wire prints it: 0 for none (1), every field present.
    gemini["tp_size"] = mesh.tp if mesh.tp > 1 else 0
    gemini["extra_dp_size"] = mesh.extra_dp if mesh.extra_dp > 1 else 0
    gemini["enable_sequence_parallelism"] = parsed.sequence_parallelism
    gemini["placement"] = _PLACEMENT_NAMES[placement]
    gemini["offload_optim_frac"] = optim
    gemini["offload_param_frac"] = param
    if placement == po.PLACEMENT_AUTO:
        gemini["device_memory_bytes"] = str(cluster.device_memory_bytes)
    option = collections.OrderedDict([
        ("world_size", world_size),
        ("gemini", gemini),
        ("configs", [collections.OrderedDict([
            ("dp_degree", c.dp_degree), ("chunk_size", str(c.chunk_size)),
            ("keep_gathered", c.keep_gathered)]) for c in configs]),
        ("objective", OBJECTIVE_NAMES[lo.OBJECTIVE_SEED_WASTE if source == 0
                                      else lo.OBJECTIVE_PEAK_RANK_BYTES]),
        ("most_loaded_rank", collections.OrderedDict(
            (k, str(v)) for k, v in most.items())),
        ("gathered_chunk_bytes", str(gathered)),
        ("host_bytes_per_node", str(host)),
        ("layout_padding", str(ev.layout.layout_padding)),
        ("fits", verdict["fits"]),
        ("why_not", verdict["why_not"]),
        ("colossalai", _colossalai(parsed.gemini, configs, placement, optim,
                                   param, mesh,
                                   parsed.sequence_parallelism)),
        ("activation_bytes", str(activation[0])),
        ("chunk_size_from", SOURCES[source]),
        ("notes", notes),
        ("device_need_bytes", str(need)),
        ("verdict", verdict),
        ("zero_size", mesh.zero),
        ("gathered_chunks", str(buffers)),
        ("nodes", nodes_of(world_size, cluster.gpus_per_node)),
        ("transient_bytes", str(activation[1])),
    ])
    # Those that fit, then the tight ones, each by world size, placement
    # rank, need and source; then the rest by device excess, host excess,
    # world size, placement rank and source.
    klass, device_excess, host_excess = verdict_oracle.rank_key(verdict)
    key = ((klass, 0, 0, world_size, rank, need, source) if klass < 2 else
           (klass, device_excess, host_excess, world_size, rank, 0, source))
    return key, option


def _options_of(parsed, mesh, source, configs, ev, activation):
    """Every present placement of one chunk size, as (key, option)."""
    static = po.PLACEMENT_STATIC
    chosen = [(NOTHING_MOVED, static, 0.0, 0.0)]
    if not ev.static_passes(0.0):
        f = _partial_optim(ev)
        if f is not None:
            chosen.append((PARTIAL_OPTIMIZER, static, f, 0.0))
    chosen.append((FULL_OPTIMIZER, static, 1.0, 0.0))
    if not ev.static_passes(1.0):
        g = _partial_params(ev)
        if g is not None:
            chosen.append((OPTIMIZER_AND_PARAMS, static, 1.0, g))
    chosen.append((AUTO, po.PLACEMENT_AUTO, 0.0, 0.0))
    return [_option(parsed, mesh, source, configs, ev, rank, placement,
                    optim, param, activation)
            for rank, placement, optim, param in chosen]


def _tp_split(parsed, tp):
    """(the activation oracle's tp request or None, the note or None) of
    tp rank 0 at `tp` (tp_activation_oracle.FAMILIES: the policies whose
    causal-LM forward is modelled)."""
    if tp == 1:
        return None, None
    model_type = parsed.model[1].model_type
    policy = tp_oracle.POLICIES[model_type]
    family = tp_activation_oracle.FAMILIES.get(model_type)
    if family is None:
        return None, not_split_note(
            f'model_type "{model_type}": ShardFormer\'s forward for it '
            f"(policy {policy.file}) is not modelled")
    if parsed.sequence_parallelism and not policy.sp_ignored:
        if model_type not in tp_activation_oracle.SEQUENCE_PARALLEL:
            return None, not_split_note(
                tp_activation_oracle.SEQUENCE_PARALLEL_WHY)
        return dict(family, tp_size=tp, sequence_parallel=True,
                    model_type=model_type), None
    shape = _shape(parsed.model[0], parsed.model[1])
    if (family.get("gathered_head") and family["lm_head"] == "column" and
            shape["tied_embeddings"] and
            tp_activation_oracle.padded(shape["vocab_size"], tp) !=
            shape["vocab_size"]):
        return None, not_split_note(
            f'model_type "{model_type}": lm_head (Linear1D_Col) tied to the '
            "vocab-parallel embedding gathers its padded rows, which "
            "transformers' loss does not take")
    return dict(family, tp_size=tp), None


def _activation(parsed, tp=1):
    """(activation_bytes, transient_bytes, the not-split note or None) of
    the workload on tp rank 0 at `tp`, (0, 0, None) without one."""
    if parsed.workload is None:
        return 0, 0, None
    work = dict(parsed.workload, attention=_attention_of(parsed.workload))
    split, note = _tp_split(parsed, tp)
    try:
        parts = activation_oracle.estimate(
            _shape(parsed.model[0], parsed.model[1]), work, None, split)
    except activation_oracle.ActivationError as exc:
        raise PlanError(str(exc), exc.code) from None
    return parts["total_bytes"], parts["transient_bytes"], note


def plan(request):
    """The PlanResponse dict for a PlanRequest dict, or {"error": ...}."""
    try:
        parsed = parse(request)
        # Every mesh's layouts first (their refusals come before the
        # activation estimate's), in the order tp, world, extra_dp.
        plans = []
        refused = None  # the first mesh sequence parallelism fails on
        model_type = (None if parsed.model is None
                      else parsed.model[1].model_type)
        for tp, numels in parsed.meshes:
            if tp > parsed.cluster.gpus_per_node:
                continue  # tp stays within a node
            pairs = []
            for w in world_sizes(parsed.cluster):
                for e in parsed.extra_dp_sizes:
                    if w % (tp * e) != 0:
                        continue
                    try:  # zero x extra_dp = w / tp
                        tp_oracle.sequence_parallel_mesh(
                            model_type, tp, w // tp,
                            parsed.sequence_parallelism)
                    except tp_oracle.SpRefused as exc:
                        refused = refused or (
                            "gemini.enable_sequence_parallelism: "
                            f"{exc}")
                        continue
                    pairs.append((w, e))
            if not pairs:
                continue
            worlds = _worlds(parsed, numels,
                             [w // (tp * e) for w, e in pairs])
            plans += [(Mesh(w, w // (tp * e), tp, e), world)
                      for (w, e), world in zip(pairs, worlds)]
        # the workload's own refusal first, at the first degree described
        _activation(parsed, parsed.meshes[0][0] if parsed.meshes else 1)
        if not plans and refused:
            raise PlanError(refused)  # every mesh left was refused
        keyed = []
        for mesh, world in plans:
            for source, configs in _chunk_sizes(world):
                activation = _activation(parsed, mesh.tp)
                ev = _Evaluator(parsed, world, configs, activation)
                keyed += _options_of(parsed, mesh, source, configs, ev,
                                     activation)
    except (PlanError, lo.LayoutError) as exc:
        if getattr(exc, "code", "INVALID_ARGUMENT") != "INVALID_ARGUMENT":
            return {"error": str(exc), "code": exc.code}
        return {"error": str(exc)}
    keyed.sort(key=lambda pair: pair[0])
    return collections.OrderedDict([
        ("options", [o for _, o in keyed[:parsed.max_options]]),
        ("options_considered", str(len(keyed)))])


def _answer_line(line):
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    return plan(request)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", "--jsonl", action="store_true",
                        dest="lines", help="one request per input line, one "
                        "answer per output line")
    args = parser.parse_args(argv)
    if args.lines:
        for line in sys.stdin:
            sys.stdout.write(json.dumps(_answer_line(line),
                                        separators=(",", ":")) + "\n")
            sys.stdout.flush()
        return 0
    sys.stdout.write(json.dumps(_answer_line(sys.stdin.read())) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
