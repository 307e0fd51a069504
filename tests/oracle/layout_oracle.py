#!/usr/bin/python3
"""The layout oracle: what Gemini really allocates, and the objectives' frontier.

An independent Python statement of the rules in issue 12 (the chunk layout,
the shards and every rank's bytes) and issue 13 (the objectives and the
frontier), written from the issue texts and checked against ColossalAI's own
code in /work/shared/reference/colossalai/*.txt (cited below as
chunk.py, manager.py, gemini_ddp.py, gemini_optimizer.py, placement_policy.py
and gemini_plugin.py). Nothing here comes from the C++ side. The search part
is the search oracle's (chunk_search_oracle.search, imported); the search grid
(start, interval, count, the filtered sizes and the kept-gathered groups),
which that module does not expose, is restated below from the seed text
(/work/shared/seed/search_utils.py.txt) with the seed's arithmetic, and its
pick is checked against chunk_search_oracle.search on every searched request.

Input: a chunkplan.v1 LayoutRequest in protobuf's JSON mapping (proto field
names or lowerCamelCase; uint64 as numbers or decimal strings; enums as names
or numbers):
  {"search": <ChunkSearchRequest, as chunk_search_oracle takes it>,
   "configs": [{"dp_degree": D, "chunk_size": C, "keep_gathered": B}, ...],
   "frozen": [B, ...],                       # empty, or one per numel
   "gemini": {"precision": "PRECISION_FP16" | "PRECISION_BF16",
              "master_weights": B,           # optional, default true
              "gradient_accumulation": B,    # default false
              "pin_memory": B,               # optional, default true
              "optimizer": "OPTIMIZER_ADAM" | "OPTIMIZER_NONE"},
   "objective": "OBJECTIVE_SEED_WASTE" | "OBJECTIVE_LAYOUT_PADDING"
                | "OBJECTIVE_PEAK_RANK_BYTES",
   "cluster": {"device_memory_bytes": N, "host_memory_bytes": N,
               "gpus_per_node": N, "reserve_bytes": N, "margin": F}}
                                             # optional (issue 41)

Output: protobuf JSON as the C++ server would print it with field names
preserved and every primitive field printed: every uint64 as a decimal
string, uint32 and bool as JSON values. On invalid input: {"error": "..."}
with the message naming the field (and index) at fault.

  layout(request)   -> LayoutResponse dict
      {"search": {...},   # chunk_search_oracle's answer shape; only when the
                          # search ran (absent with given configs)
       "groups": [{"dp_degree": D, "chunk_size": "C", "keep_gathered": B,
                   "chunks": [{"size": "S", "used": "U", "first_param": "I",
                               "num_params": "K"}, ...],
                   "padding": "N"}, ...],
       "layout_padding": "N",
       "most_loaded_rank": RANK, "least_loaded_rank": RANK,
       "gathered_chunk_bytes": "N",
       "verdict": VERDICT}  # with a cluster only: verdict_oracle.judge of
                            # the most loaded rank (docs/plan.md, "The
                            # verdict"; the world size is the largest dp
                            # degree; host bytes per node 0 without
                            # gpus_per_node)
      RANK = {"param_bytes", "master_bytes", "grad_bytes", "optimizer_bytes",
              "frozen_bytes", "device_bytes", "pinned_host_bytes"} (strings)
  frontier(request, point_chunk_size="rounded") -> FrontierResponse dict
      {"points": [{"candidate": "I", "chunk_size": "C'", "value": "V",
                   "seed_waste": "W", "layout_padding": "P",
                   "peak_rank_bytes": "B"}, ...],
       "candidates": "N"}
  best(request)     -> the objective's best candidate as one such point
  objective_values(request, chunk) -> (seed_waste at C, layout_padding at C',
                                       peak_rank_bytes at C') as ints;
                                       raises LayoutError

Not printed (they are not functions of the request): the search response's
engine, candidates and search_nanos, and the frontier's engine and
search_nanos. A comparison with the server drops those keys.

Usage:
  /usr/bin/python3 layout_oracle.py [--frontier | --best] [--jsonl] < request.json
With --jsonl every input line is one request and gets one answer line.
"""

import argparse
import collections
import copy
import json
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import chunk_search_oracle as search_oracle  # noqa: E402
import gathered_oracle  # noqa: E402
import layout_sweep  # noqa: E402
import models  # noqa: E402
import placement_oracle  # noqa: E402
import verdict_oracle  # noqa: E402

UINT64_MAX = (1 << 64) - 1
UINT32_MAX = (1 << 32) - 1

OBJECTIVE_SEED_WASTE = 0
OBJECTIVE_LAYOUT_PADDING = 1
OBJECTIVE_PEAK_RANK_BYTES = 2
_OBJECTIVES = {"OBJECTIVE_SEED_WASTE": 0, "OBJECTIVE_LAYOUT_PADDING": 1,
               "OBJECTIVE_PEAK_RANK_BYTES": 2}
_PRECISIONS = {"PRECISION_FP16": 0, "PRECISION_BF16": 1}
_OPTIMIZERS = {"OPTIMIZER_ADAM": 0, "OPTIMIZER_NONE": 1}
OPTIMIZER_NONE = 1

# Bytes per element. Reading: fp16 and bf16 are both 2-byte dtypes
# (gemini_ddp.py GeminiDDP.__init__ asserts mixed_precision in (float16,
# bfloat16); _init_chunks casts every placed parameter, and every ignored one,
# to mixed_precision), so precision changes no figure. Master weights are
# float32: gemini_ddp.py _init_chunks, `fp32_p.data = fp32_p.data.float()`.
HALF_BYTES = 2
MASTER_BYTES = 4


class LayoutError(ValueError):
    """An invalid LayoutRequest; the message names the field at fault."""


# ---------------------------------------------------------------------------
# Reading the request.

_TOP_FIELDS = {"search": "search", "configs": "configs", "frozen": "frozen",
               "gemini": "gemini", "objective": "objective",
               "cluster": "cluster", "workload": "workload"}
_CLUSTER_FIELDS = {"device_memory_bytes": "device_memory_bytes",
                   "deviceMemoryBytes": "device_memory_bytes",
                   "host_memory_bytes": "host_memory_bytes",
                   "hostMemoryBytes": "host_memory_bytes",
                   "gpus_per_node": "gpus_per_node",
                   "gpusPerNode": "gpus_per_node",
                   "world_sizes": "world_sizes", "worldSizes": "world_sizes",
                   "reserve_bytes": "reserve_bytes",
                   "reserveBytes": "reserve_bytes", "margin": "margin",
                   "whole_nodes": "whole_nodes", "wholeNodes": "whole_nodes",
                   "max_nodes": "max_nodes", "maxNodes": "max_nodes"}
_CONFIG_FIELDS = {"dp_degree": "dp_degree", "dpDegree": "dp_degree",
                  "chunk_size": "chunk_size", "chunkSize": "chunk_size",
                  "keep_gathered": "keep_gathered",
                  "keepGathered": "keep_gathered"}
_GEMINI_FIELDS = {"precision": "precision",
                  "master_weights": "master_weights",
                  "masterWeights": "master_weights",
                  "gradient_accumulation": "gradient_accumulation",
                  "gradientAccumulation": "gradient_accumulation",
                  "pin_memory": "pin_memory", "pinMemory": "pin_memory",
                  "optimizer": "optimizer", "placement": "placement",
                  "shard_param_frac": "shard_param_frac",
                  "shardParamFrac": "shard_param_frac",
                  "offload_optim_frac": "offload_optim_frac",
                  "offloadOptimFrac": "offload_optim_frac",
                  "offload_param_frac": "offload_param_frac",
                  "offloadParamFrac": "offload_param_frac",
                  "device_memory_bytes": "device_memory_bytes",
                  "deviceMemoryBytes": "device_memory_bytes",
                  "tp_size": "tp_size", "tpSize": "tp_size",
                  "extra_dp_size": "extra_dp_size",
                  "extraDpSize": "extra_dp_size",
                  "enable_sequence_parallelism":
                      "enable_sequence_parallelism",
                  "enableSequenceParallelism":
                      "enable_sequence_parallelism",
                  "max_prefetch": "max_prefetch",
                  "maxPrefetch": "max_prefetch"}
_PLACEMENTS = {"PLACEMENT_STATIC": 0, "PLACEMENT_AUTO": 1}

Settings = collections.namedtuple(
    "Settings", "precision master_weights gradient_accumulation pin_memory "
    "optimizer placement shard_param_frac offload_optim_frac "
    "offload_param_frac device_memory_bytes max_prefetch")
Config = collections.namedtuple("Config", "dp_degree chunk_size keep_gathered")
Parsed = collections.namedtuple(
    "Parsed", "search_request args configs frozen settings objective cluster "
    "model")
# cluster: None, or a dict of the Cluster's fields (margin None where unset)
# model: None, or (model_type, operations or None, frozen mask or None) of
# search.model (the mask: the LoRA adapters' base frozen, _model)


def _fields(obj, names, where):
    if not isinstance(obj, dict):
        raise LayoutError(f"{where}: expected a JSON object, got {obj!r}")
    out = {}
    for key, value in obj.items():
        name = names.get(key)
        if name is None:
            raise LayoutError(f"{where}: unknown field {key!r}")
        if name in out:
            raise LayoutError(f"{where}: field {name!r} given twice")
        if value is not None:  # protobuf JSON: null means unset
            out[name] = value
    return out


def _uint(value, where, limit):
    """An unsigned protobuf integer: a JSON number or a decimal string."""
    if isinstance(value, bool):
        raise LayoutError(f"{where}: expected an integer, got {value!r}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        try:
            value = int(value.strip(), 10)
        except ValueError:
            raise LayoutError(
                f"{where}: expected an integer, got {value!r}") from None
    if not isinstance(value, int):
        raise LayoutError(f"{where}: expected an integer, got {value!r}")
    result = value
    if result < 0 or result > limit:
        raise LayoutError(f"{where}: {result} is out of range")
    return result


def _frac(value, where):
    """A protobuf double (JSON number or "NaN"/"Infinity" strings)."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise LayoutError(f"{where}: expected a number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise LayoutError(f"{where}: expected a number, got {value!r}")
    return float(value)


def _bool(value, where):
    if not isinstance(value, bool):
        raise LayoutError(f"{where}: expected true or false, got {value!r}")
    return value


def _enum(value, names, where):
    if isinstance(value, bool):
        raise LayoutError(f"{where}: expected an enum, got {value!r}")
    if isinstance(value, str) and value in names:
        return names[value]
    if isinstance(value, int) and value in names.values():
        return value
    raise LayoutError(f"{where}: unknown value {value!r}")


def _list(value, where):
    if not isinstance(value, list):
        raise LayoutError(f"{where}: expected a list, got {value!r}")
    return value


def _cluster(raw):
    """Layout's cluster (issue 41), checked in this order: device memory 0,
    gpus_per_node 0 with a host memory to check, world_sizes not empty
    (Layout's world size is its largest dp degree), whole_nodes or
    max_nodes set (Plan's only), the margin outside [0, 1)."""
    f = _fields(raw, _CLUSTER_FIELDS, "cluster")
    c = {"device_memory_bytes": _uint(f.get("device_memory_bytes", 0),
                                      "cluster.device_memory_bytes",
                                      UINT64_MAX),
         "host_memory_bytes": _uint(f.get("host_memory_bytes", 0),
                                    "cluster.host_memory_bytes", UINT64_MAX),
         "gpus_per_node": _uint(f.get("gpus_per_node", 0),
                                "cluster.gpus_per_node", UINT32_MAX),
         "world_sizes": _list(f.get("world_sizes", []),
                              "cluster.world_sizes"),
         "reserve_bytes": _uint(f.get("reserve_bytes", 0),
                                "cluster.reserve_bytes", UINT64_MAX),
         "margin": _frac(f.get("margin"), "cluster.margin")}
    if c["device_memory_bytes"] == 0:
        raise LayoutError("cluster.device_memory_bytes: 0; a GPU's memory "
                          "is required")
    if c["host_memory_bytes"] and not c["gpus_per_node"]:
        raise LayoutError("cluster.gpus_per_node: 0; at least 1 to check "
                          "host_memory_bytes")
    if c["world_sizes"]:
        raise LayoutError("cluster.world_sizes: Layout's world size is its "
                          "largest dp degree")
    for name in ("whole_nodes", "max_nodes"):
        if f.get(name):
            raise LayoutError(f"cluster.{name}: Plan's only")
    try:
        verdict_oracle.check_margin(c["margin"])
    except verdict_oracle.VerdictError as exc:
        raise LayoutError(str(exc)) from None
    return c


def parse(request):
    """A LayoutRequest dict as a Parsed tuple. The search part is parsed by
    the search oracle's parse_request (args). Raises LayoutError; a bad
    cluster first (the service checks it before the search part)."""
    top = _fields(request, _TOP_FIELDS, "request")
    cluster = None if top.get("cluster") is None else _cluster(top["cluster"])
    raw_gemini = top.get("gemini") or {}
    search_request, model = _model(top.get("search", {}), raw_gemini,
                                   _checkpointing(top.get("workload")))
    try:
        args = search_oracle.parse_request(search_request)
    except search_oracle.RequestError as exc:
        raise LayoutError(f"search: {exc}") from None
    configs = None
    raw_configs = _list(top.get("configs", []), "configs")
    if raw_configs:
        configs = []
        for i, raw in enumerate(raw_configs):
            where = f"configs[{i}]"
            f = _fields(raw, _CONFIG_FIELDS, where)
            configs.append(Config(
                _uint(f.get("dp_degree", 0), f"{where}.dp_degree", UINT32_MAX),
                _uint(f.get("chunk_size", 0), f"{where}.chunk_size",
                      UINT64_MAX),
                _bool(f.get("keep_gathered", False),
                      f"{where}.keep_gathered")))
    frozen = [_bool(v, f"frozen[{i}]")
              for i, v in enumerate(_list(top.get("frozen", []), "frozen"))]
    if model is not None and model[2] is not None:
        if frozen:
            raise LayoutError("frozen: the model's lora adapters give the "
                              "frozen parameters")
        frozen = model[2]
    g = _fields(top.get("gemini", {}), _GEMINI_FIELDS, "gemini")
    # The wire defaults are GeminiPlugin's (gemini_plugin.py
    # GeminiPlugin.__init__): precision fp16, master_weights=True,
    # enable_gradient_accumulation=False; pin_memory defaults to False there
    # but `if enable_async_reduce and not pin_memory: ... pin_memory = True`
    # with enable_async_reduce=True by default, hence true here.
    settings = Settings(
        _enum(g.get("precision", 0), _PRECISIONS, "gemini.precision"),
        _bool(g.get("master_weights", True), "gemini.master_weights"),
        _bool(g.get("gradient_accumulation", False),
              "gemini.gradient_accumulation"),
        _bool(g.get("pin_memory", True), "gemini.pin_memory"),
        _enum(g.get("optimizer", 0), _OPTIMIZERS, "gemini.optimizer"),
        _enum(g.get("placement", 0), _PLACEMENTS, "gemini.placement"),
        _frac(g.get("shard_param_frac"), "gemini.shard_param_frac"),
        _frac(g.get("offload_optim_frac", 0.0), "gemini.offload_optim_frac"),
        _frac(g.get("offload_param_frac", 0.0), "gemini.offload_param_frac"),
        None if g.get("device_memory_bytes") is None else _uint(
            g["device_memory_bytes"], "gemini.device_memory_bytes",
            UINT64_MAX),
        _uint(g.get("max_prefetch", 0), "gemini.max_prefetch", UINT32_MAX))
    # GeminiPlugin's mesh (zero, extra_dp, tp): the chunks spread over the
    # zero group (the dp degrees), and every rank of a node holds its own
    # shards, so a node holds min(gpus_per_node, zero x extra_dp x tp)
    # ranks' host bytes (0 means 1 on the wire).
    if cluster is not None:
        cluster["mesh_ranks"] = (
            max(1, _uint(g.get("tp_size", 0), "gemini.tp_size", UINT32_MAX)) *
            max(1, _uint(g.get("extra_dp_size", 0), "gemini.extra_dp_size",
                         UINT32_MAX)))
    error = placement_oracle.check(settings._asdict())
    if error is not None:
        raise LayoutError(error)
    objective = _enum(top.get("objective", 0), _OBJECTIVES, "objective")
    # Issue 27: the peak objective is answered under every placement: each
    # candidate is laid out and placed (_layout_values: the most loaded
    # rank under the worst chunk order, plus the gathered buffer).
    return Parsed(search_request, args, configs, frozen, settings, objective,
                  cluster, model)


_MODEL_FIELDS = {"hf_config_json": "hf_config_json",
                 "hfConfigJson": "hf_config_json",
                 "architecture": "architecture", "lora": "lora",
                 "freeze": "freeze", "train": "train",
                 "param_list_json": "param_list_json",
                 "paramListJson": "param_list_json",
                 # Describe's own; Layout and Plan take gemini.tp_size.
                 "tp_size": "tp_size", "tpSize": "tp_size",
                 "enable_sequence_parallelism": "enable_sequence_parallelism",
                 "enableSequenceParallelism": "enable_sequence_parallelism"}
MODEL_DEFAULT_INTERVAL = 1024  # GeminiPlugin's without a hidden_dim


def describe_model(search, raw_model, error=LayoutError):
    """Puts the numels the models oracle describes for search.model (and
    interval 1024 for 0) in the dict `search`; returns (config dict,
    Description). Errors (`error`) name search.model."""
    f = _fields(raw_model, _MODEL_FIELDS, "search.model")
    text = f.get("hf_config_json", "")
    if not isinstance(text, str):
        raise error("search.model.hf_config_json: expected a string")
    architecture = f.get("architecture", "")
    if not isinstance(architecture, str):
        raise error("search.model.architecture: expected a string")
    # LoRA adapters and trainable patterns are the LoRA oracle's
    # (tests/oracle/lora_oracle_test.py), a parameter list the params
    # tests', not this one's: only unset (Layout's _model takes lora off
    # first and adds the adapters itself).
    for key in ("lora", "freeze", "train", "param_list_json"):
        if f.get(key):
            raise error(f"search.model.{key}: not modelled by this oracle")
    if search.get("numels"):
        raise error("search: exactly one of numels and model may be set")
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise error(f"search.model.hf_config_json: not JSON: {exc}") from None
    if not isinstance(config, dict):
        raise error("search.model.hf_config_json: not a JSON object")
    try:
        description = models.describe(config, architecture or None)
    except (ValueError, TypeError) as exc:
        raise error(f"search.model: {exc}") from None
    search.pop("numels", None)
    search["numels"] = description.numels
    key = "searchInterval" if "searchInterval" in search else "search_interval"
    if _uint(search.get(key, 0), "search.search_interval", UINT64_MAX) == 0:
        search[key] = MODEL_DEFAULT_INTERVAL
    return config, description


def _checkpointing(raw_workload):
    """Whether the workload turns gradient checkpointing on. Only this is
    read of a Layout's workload here: its activation estimate is the
    activation oracle's (activation_oracle.py, through plan_oracle.py)."""
    if not isinstance(raw_workload, dict):
        return False
    return _bool(raw_workload.get(
        "activation_checkpointing",
        raw_workload.get("activationCheckpointing", False)),
        "workload.activation_checkpointing")


def _model(search, raw_gemini=None, checkpointing=False):
    """(the search part with search.model's numels in place of the model,
    (model_type, its operations or None, the frozen flags its LoRA adapters
    give or None, the decoder layer of each operation where
    `checkpointing` re-runs the layers, else None)), or
    (search, None) without a model: the models oracle describes it,
    gathered_oracle gives its operations and layers; at gemini.tp_size > 1
    the numels are tp rank 0's shards (tp_oracle.py; the names, hence the
    operations, unchanged)."""
    if not isinstance(search, dict) or search.get("model") is None:
        return search, None
    raw_model = search["model"]
    search = {k: v for k, v in search.items() if k != "model"}
    # LoRA adapters (models/lora.py, PEFT's rules) on the described model:
    # only a rank and targets that adapt something, with tp_size 1.
    lora = raw_model.get("lora") if isinstance(raw_model, dict) else None
    if lora:
        raw_model = {k: v for k, v in raw_model.items() if k != "lora"}
    config, description = describe_model(search, raw_model)
    raw_gemini = raw_gemini if isinstance(raw_gemini, dict) else {}
    tp = raw_gemini.get("tp_size", raw_gemini.get("tpSize", 0))
    if isinstance(tp, int) and not isinstance(tp, bool) and tp > 1:
        import tp_oracle  # noqa: E402  (the policies, here only)
        try:
            search["numels"] = tp_oracle.shard(
                description, config, tp,
                bool(raw_gemini.get("enable_sequence_parallelism"))).numels
        except tp_oracle.TpRefused as exc:
            raise LayoutError(f"search.model: gemini.tp_size: {tp}: "
                              f"{exc}") from None
    if lora:
        if isinstance(tp, int) and not isinstance(tp, bool) and tp > 1:
            raise LayoutError(f"gemini.tp_size: {tp}: LoRA adapters on "
                              "tensor-parallel shards are not modelled")
        from models.lora import adapt  # noqa: E402  (here only)
        try:
            adapted = adapt(description, int(lora.get("rank", 0)),
                            list(lora.get("targets", [])))
        except ValueError as exc:
            raise LayoutError(f"search.model: {exc}") from None
        search["numels"] = adapted.numels
        ops = gathered_oracle.adapted_operations(description, config,
                                                 adapted)
        return search, (description.model_type, ops,
                        [not t for t in adapted.trainable],
                        gathered_oracle.layers_of(ops or [], adapted.names)
                        if checkpointing else None)
    return search, (description.model_type,
                    gathered_oracle.operations(description, config), None,
                    gathered_oracle.layers(description, config)
                    if checkpointing else None)


def unsequenced_note(model_type):
    """The note of an answer whose model's family has no operation
    sequence (the one-chunk count stands)."""
    return (f"gathered_chunk_bytes counts one chunk, the largest: model_type "
            f"{model_type} has no operation sequence yet (docs/plan.md, "
            '"Gathered chunks")')


# ---------------------------------------------------------------------------
# The search grid (restated from the seed's search_chunk_configuration).

Grid = collections.namedtuple(
    "Grid", "order gathered swept start interval count lcm total")
# order: degrees in the seed's config order (config_dict insertion order:
#        kept-gathered degrees first, then the swept ones, each first-seen)
# gathered: degree -> chunk size (the group's total) for kept-gathered groups
# swept: degree -> its sizes after the 3-sigma filter (possibly emptied)
# start, interval, count: candidate i is start + i * interval, i < count
# lcm: np.lcm.reduce of all degrees; total: total_param_size


def _grid(args):
    numels, degrees, search_range_m, interval, min_chunk_size_m, filt = args
    search_range = round(search_range_m * 1024**2)
    min_chunk_size = round(min_chunk_size_m * 1024**2)
    by_degree = {}
    for numel, degree in zip(numels, degrees):
        by_degree.setdefault(degree, []).append(numel)
    size_lcm = int(np.lcm.reduce(list(by_degree.keys())))
    gathered, swept = {}, {}
    for degree, sizes in by_degree.items():
        total = sum(sizes)
        if total < min_chunk_size:
            gathered[degree] = total
        else:
            swept[degree] = list(sizes)
    if filt:
        pooled = [s for sizes in swept.values() for s in sizes]
        if pooled:
            arr = np.array(pooled)
            upper_limit = np.mean(arr) + 3 * np.std(arr)
            for degree in swept:
                swept[degree] = [s for s in swept[degree] if s <= upper_limit]
    max_size = min_chunk_size
    for sizes in swept.values():
        if sizes:  # the search oracle's extension: an emptied group is skipped
            max_size = max(max_size, max(sizes))
    start = int(math.ceil(max_size / interval) * interval)
    count = len(range(start, start + search_range + 1, interval))
    order = ([d for d in by_degree if d in gathered] +
             [d for d in by_degree if d not in gathered])
    return Grid(order, gathered, swept, start, interval, count, size_lcm,
                sum(numels))


def _candidate_size(grid, index):
    return grid.start + index * grid.interval


def _rounded(grid, chunk):
    """C' = C rounded up to the lcm of the degrees, as the seed does after
    its pick."""
    return chunk + (-chunk % grid.lcm)


def _seed_waste(grid, chunk):
    """The seed's _get_unused_byte summed over the swept groups."""
    waste = 0
    for sizes in grid.swept.values():
        acc = 0
        left = 0
        for s in sizes:
            if s > left:
                acc += left
                left = chunk
            left -= s
        waste += left + acc
    return waste


def _configs_at(grid, chunk):
    """The configs the search gives when it picks candidate size C: the
    kept-gathered groups as the search decides them, every other group at
    C'."""
    rounded = _rounded(grid, chunk)
    return [Config(d, grid.gathered[d], True) if d in grid.gathered
            else Config(d, rounded, False) for d in grid.order]


# ---------------------------------------------------------------------------
# The layout (issue 12).

Chunk = collections.namedtuple("Chunk", "size used first_param num_params")


def _place(params, chunk_size, degree):
    """Next-fit with no alignment over (index, numel) in visit order.

    manager.py ChunkManager.register_tensor: `chunk_group[-1].append_tensor`
    raises IndexError for the first tensor (so it always opens a chunk, even
    with 0 elements) and ChunkFullError when `utilized_size + numel >
    chunk_size` (chunk.py Chunk.append_tensor); then the open chunk is closed
    for good and a new one of `chunk_size` opens, or, for `numel >
    chunk_size`, of numel rounded up to the world size of the zero group (the
    group's degree, not the lcm). Nothing closes an oversize chunk early, so
    later tensors fit into its slack. Sizes are never shrunk."""
    chunks = []
    for index, numel in params:
        if chunks:
            size, used, first, num = chunks[-1]
            if used + numel <= size:
                chunks[-1] = [size, used + numel, first, num + 1]
                continue
        size = chunk_size
        if numel > chunk_size:
            size = numel + (-numel % degree)
        chunks.append([size, numel, index, 1])
    return [Chunk(*c) for c in chunks]


def _real_on_rank(chunk, degree, rank):
    """Real elements of a non-gathered chunk on rank r: shards of size/P fill
    from offset 0, clamp(used - r*size/P, 0, size/P). chunk.py Chunk.__init__
    (shard_begin = shard_size * pg_rank, valid_end = shard_size) and
    close_chunk (valid_end 0 when utilized_size <= shard_begin, else
    utilized_size - shard_begin when below shard_end)."""
    shard = chunk.size // degree
    return min(max(chunk.used - rank * shard, 0), shard)


Group = collections.namedtuple("Group", "config chunks padding")


def _rank_memory(groups, frozen_numel, settings, rank_of):
    """One rank's bytes, summing for every group its rank rank_of(P).

    Readings (issue 12's table, checked against the reference):
    - Every part below is device memory at steady state under GeminiPlugin's
      static placement with offload_optim_frac = offload_param_frac = 0:
      gemini_ddp.py __init__ passes cpu_offload = False to _init_chunks, so
      each shard lives on CUDA (chunk.py close_chunk keeps cuda_shard when
      shard_device is CUDA); placement_policy.py
      StaticPlacementPolicy.setup_grads_device puts every chunk's grads (and
      so the fp32 master chunk, moved there in gemini_ddp.py _init_chunks, and
      the optimizer states, allocated on grad_device in gemini_optimizer.py
      __init__optimizer) on CUDA since offloaded (0) >= offload target (0).
    - params: 2 x (sum of shards size/P + sum of gathered chunk sizes). A
      kept-gathered chunk is held whole (chunk.py __scatter returns early for
      keep_gathered), a non-gathered one as its shard of size/P.
    - master weights: the fp32_param group is registered tensor by tensor
      with the same config key (gemini_ddp.py _init_chunks), so its layout is
      the fp16 layout: 4 x the same elements; 0 with master weights off.
    - gradients: gemini_ddp.py __init__: reuse_fp16_chunk = master_weights if
      not enable_gradient_accumulation else False; reused, the gradient is
      written into the fp16 chunk (0 extra bytes); otherwise chunk.py
      init_grad_chunk makes a chunk of the same size, keep_gathered and
      pin_memory: 2 x the same elements.
    - optimizer: gemini_optimizer.py __init__optimizer gives the inner
      optimizer one fake parameter per tensor over its range on this rank
      (get_range_pair: whole offset..end for a kept-gathered chunk, clipped
      to the shard otherwise), so Adam's two states (exp_avg, exp_avg_sq)
      cover the real elements on rank r plus every gathered chunk's used
      elements; 4 bytes each with master weights (the states follow the fp32
      master), else 2. OPTIMIZER_NONE: no states, 0 bytes.
    - frozen: gemini_ddp.py _init_chunks sets requires_grad=False params to
      ignore and moves them `to(device=current device,
      dtype=mixed_precision)`: whole, 2 bytes each, on every rank, on the
      device, with no master, grads or optimizer state.
    - device_bytes = params + master + grads + optimizer + frozen.
    - pinned host (not in device_bytes): chunk.py close_chunk allocates a
      pinned cpu_shard of shard_size when pin_memory, for the fp16 and the
      fp32 groups alike, and init_grad_chunk one for a separate grad chunk;
      Chunk.__init__ turns pin_memory off for keep_gathered chunks. So
      (2 + 4 with master weights + 2 with separate grads) x sum of shards;
      0 with pin_memory off.
    """
    shard_elems = 0        # sum over non-gathered chunks of size / P
    gathered_elems = 0     # sum of kept-gathered chunk sizes
    gathered_used = 0      # sum of kept-gathered chunk used elements
    real = 0               # real elements of this rank's shards
    for group in groups:
        degree = group.config.dp_degree
        rank = rank_of(degree)
        for chunk in group.chunks:
            if group.config.keep_gathered:
                gathered_elems += chunk.size
                gathered_used += chunk.used
            else:
                shard_elems += chunk.size // degree
                real += _real_on_rank(chunk, degree, rank)
    return _rank_bytes(shard_elems, gathered_elems, gathered_used, real,
                       frozen_numel, settings)


def _rank_bytes(shard_elems, gathered_elems, gathered_used, real,
                frozen_numel, settings):
    """One rank's bytes (the dict _rank_memory returns) from its element
    counts: shard_elems (sum of size/P over non-gathered chunks),
    gathered_elems and gathered_used (sizes and used elements of the
    kept-gathered chunks), real (real elements of the rank's shards)."""
    held = shard_elems + gathered_elems
    master = settings.master_weights
    separate_grads = not (master and not settings.gradient_accumulation)
    param_bytes = HALF_BYTES * held
    master_bytes = MASTER_BYTES * held if master else 0
    grad_bytes = HALF_BYTES * held if separate_grads else 0
    if settings.optimizer == OPTIMIZER_NONE:
        optimizer_bytes = 0
    else:
        state_bytes = MASTER_BYTES if master else HALF_BYTES
        optimizer_bytes = 2 * state_bytes * (real + gathered_used)
    frozen_bytes = HALF_BYTES * frozen_numel
    device_bytes = (param_bytes + master_bytes + grad_bytes +
                    optimizer_bytes + frozen_bytes)
    pinned = 0
    if settings.pin_memory:
        per_elem = HALF_BYTES + (MASTER_BYTES if master else 0) + (
            HALF_BYTES if separate_grads else 0)
        pinned = per_elem * shard_elems
    return collections.OrderedDict([
        ("param_bytes", param_bytes), ("master_bytes", master_bytes),
        ("grad_bytes", grad_bytes), ("optimizer_bytes", optimizer_bytes),
        ("frozen_bytes", frozen_bytes), ("device_bytes", device_bytes),
        ("pinned_host_bytes", pinned)])


Layout = collections.namedtuple(
    "Layout", "groups layout_padding most least gathered_chunk_bytes "
    "most_least placement gathered_chunks")


def _group_params(numels, degrees, frozen, degree):
    """(index, numel) of the group's placed parameters (of that degree, not
    frozen), in visit order."""
    return [(i, n) for i, (n, d) in enumerate(zip(numels, degrees))
            if d == degree and not (frozen and frozen[i])]


def _frozen_numel(numels, frozen):
    return sum(n for i, n in enumerate(numels) if frozen and frozen[i])


def _layout(numels, degrees, frozen, configs, settings, outcome=True,
            model=None):
    """The layout of every group (in the order of configs) and the most and
    least loaded ranks. Frozen parameters are never placed. outcome=False:
    where the settings move nothing, the placement's outcome and extremes
    are left None (a sweep's values need only the ranks' bytes), and where
    they move something, the least loaded rank is left None (a sweep's
    values need rank 0's worst order only)."""
    groups = []
    for config in configs:
        params = _group_params(numels, degrees, frozen, config.dp_degree)
        chunks = _place(params, config.chunk_size, config.dp_degree)
        padding = sum(c.size - c.used for c in chunks)
        groups.append(Group(config, chunks, padding))
    frozen_numel = _frozen_numel(numels, frozen)
    # Most loaded: rank 0 of every group (its shards hold the most real
    # elements, padding sits on the highest ranks); least loaded: rank P-1.
    most = _rank_memory(groups, frozen_numel, settings, lambda p: 0)
    least = _rank_memory(groups, frozen_numel, settings, lambda p: p - 1)
    # Issue 27: the placement policy moves parts to the host; with default
    # settings it moves nothing and the figures above stand.
    most_least = placed = None
    if outcome or _moves(settings):
        p_most, most_least, p_least, placed = placement_oracle.place(
            groups, frozen_numel, settings._asdict(), least_loaded=outcome)
        for mine, theirs in ((most, p_most), (least, p_least)):
            if not _moves(settings):
                assert all(theirs[k] == v for k, v in mine.items()), (mine,
                                                                      theirs)
        most, least = p_most, p_least
    # The gathered buffers. With the model's operations (model: (model_type,
    # operations)), gathered_oracle's replay of an iteration; else the
    # largest non-gathered chunk gathered whole in the 2-byte dtype
    # (chunk.py __gather allocates cuda_global_chunk of chunk_size
    # elements): one buffer, none when every group is kept gathered.
    operations = None if model is None else model[1]
    if operations is not None:
        placed_params = [
            [i for i, _ in _group_params(numels, degrees, frozen,
                                         g.config.dp_degree)]
            for g in groups]
        elements, buffers = gathered_oracle.replay(
            groups, placed_params, operations, settings, model[3])
    else:
        sizes = [c.size for g in groups if not g.config.keep_gathered
                 for c in g.chunks]
        elements, buffers = max(sizes, default=0), min(len(sizes), 1)
        if model is not None and placed is not None:
            placed["notes"].append(unsequenced_note(model[0]))
    return Layout(groups, sum(g.padding for g in groups), most, least,
                  HALF_BYTES * elements, most_least, placed, buffers)


def _moves(settings):
    return (settings.placement == 1 or settings.offload_optim_frac > 0 or
            (settings.shard_param_frac is not None and
             settings.shard_param_frac < 1))


def _layout_values(layout):
    """(layout_padding, peak_rank_bytes) of a layout: peak = the most loaded
    rank's device bytes + the largest non-gathered chunk's gathered bytes."""
    return (layout.layout_padding,
            layout.most["device_bytes"] + layout.gathered_chunk_bytes)


# ---------------------------------------------------------------------------
# Checks.


def _check_frozen(parsed):
    numels = parsed.args[0]
    if parsed.frozen and len(parsed.frozen) != len(numels):
        raise LayoutError(
            f"frozen: {len(parsed.frozen)} entries; expected 0 or "
            f"{len(numels)} (one per numel)")


def _check_configs(parsed):
    numels, degrees = parsed.args[0], parsed.args[1]
    first_of = {}
    for i, d in enumerate(degrees):
        first_of.setdefault(d, i)
    seen = {}
    for i, c in enumerate(parsed.configs):
        where = f"configs[{i}]"
        if c.dp_degree not in first_of:
            raise LayoutError(f"{where}.dp_degree: degree {c.dp_degree} is "
                              "not a degree of any parameter")
        if c.dp_degree in seen:
            raise LayoutError(
                f"{where}.dp_degree: a second config for degree "
                f"{c.dp_degree} (the first is configs[{seen[c.dp_degree]}])")
        seen[c.dp_degree] = i
        if c.chunk_size == 0:
            raise LayoutError(f"{where}.chunk_size: 0")
        if not c.keep_gathered and c.chunk_size % c.dp_degree:
            raise LayoutError(
                f"{where}.chunk_size: {c.chunk_size} is not a multiple of "
                f"dp_degree {c.dp_degree} (a non-gathered chunk is split "
                "into dp_degree shards)")
    for d, i in first_of.items():
        if d not in seen:
            raise LayoutError(f"configs: no config for degree {d} (the "
                              f"degree of search.numels[{i}])")
    del numels


def _check_uint64(obj, where):
    """Every integer in an answer fits in a uint64; else LayoutError naming
    the first field that does not."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            _check_uint64(value, f"{where}.{key}" if where else key)
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            _check_uint64(value, f"{where}[{i}]")
    elif isinstance(obj, int) and not isinstance(obj, bool):
        if obj > UINT64_MAX:
            raise LayoutError(f"{where}: {obj} exceeds 2^64-1")


# ---------------------------------------------------------------------------
# Evaluation per candidate (issue 13).


_LAST_SEARCH = [None, None]  # the last search request and its answer


def _search(search_request):
    """search_oracle.search(search_request), once for a run of equal
    requests (a JSONL stream asks the same search under several
    objectives, one after another). Nothing here changes a request."""
    if _LAST_SEARCH[1] is None or _LAST_SEARCH[0] != search_request:
        _LAST_SEARCH[:] = [search_request,
                           search_oracle.search(search_request)]
    return copy.deepcopy(_LAST_SEARCH[1])


# The least grids that sweep(method="auto") sweeps at once, by measure
# (timed on random requests: below these the per-candidate loop is faster).
_ALL_AT_ONCE = {"waste": 512, "layout": 32}


def _check_measures(i, chunk, padding, peak):
    """LayoutError when candidate i's layout padding or peak exceeds
    2^64-1."""
    for name, v in (("layout_padding", padding), ("peak_rank_bytes", peak)):
        if v > UINT64_MAX:
            raise LayoutError(f"candidate {i} (chunk size {chunk}): {name} "
                              f"{v} exceeds 2^64-1")


class _Request:
    """A checked, searched request, ready for per-candidate evaluation."""

    def __init__(self, request, need_search):
        self.parsed = parse(request)
        if need_search and self.parsed.cluster is not None:
            raise LayoutError("cluster: Frontier compares chunk sizes and "
                              "judges none")
        _check_frozen(self.parsed)
        # The search part is checked as a ChunkSearchRequest whether or not
        # configs are given (Layout has the same limits and checks as
        # Search): the search oracle's error is the answer.
        self.search_answer = _search(self.parsed.search_request)
        if "error" in self.search_answer:
            raise LayoutError(f"search: {self.search_answer['error']}")
        if self.parsed.configs is not None:
            if need_search:
                raise LayoutError(
                    "configs: Frontier chooses among the search's candidates;"
                    " with given configs there is nothing to choose")
            if self.parsed.objective != OBJECTIVE_SEED_WASTE:
                name = [k for k, v in _OBJECTIVES.items()
                        if v == self.parsed.objective][0]
                raise LayoutError(
                    f"objective: {name} chooses among the search's "
                    "candidates; with given configs there is nothing to "
                    "choose")
            _check_configs(self.parsed)
            self.grid = None
        else:
            self.grid = _grid(self.parsed.args)

    def layout_at(self, configs, outcome=True, model=None):
        numels, degrees = self.parsed.args[0], self.parsed.args[1]
        return _layout(numels, degrees, self.parsed.frozen, configs,
                       self.parsed.settings, outcome, model)

    def values(self, chunk):
        """(seed_waste at C, layout_padding at C', peak at C')."""
        padding, peak = _layout_values(
            self.layout_at(_configs_at(self.grid, chunk), outcome=False))
        return _seed_waste(self.grid, chunk), padding, peak

    def measured_row(self, row):
        """`row` (from sweep(False)) with its layout measures; LayoutError
        when one exceeds 2^64-1."""
        i, chunk, rounded, waste, _, _ = row
        _, padding, peak = self.values(chunk)
        _check_measures(i, chunk, padding, peak)
        return (i, chunk, rounded, waste, padding, peak)

    def sweep(self, layout_measures, method="auto"):
        """Every candidate's values, in grid order: (index, C, C', waste,
        padding, peak), padding and peak None when not asked for. A layout
        measure above 2^64-1 at any candidate is an error.
        method: "reference", each candidate by _seed_waste and values(),
        one at a time; "all_at_once", every candidate at once (layout_sweep)
        where that applies; "auto", all at once on grids of at least
        _ALL_AT_ONCE[measure] candidates (where numpy's cost per step pays
        off)."""
        chunks = [_candidate_size(self.grid, i)
                  for i in range(self.grid.count)]

        def at_once(measure):
            wanted = method == "all_at_once" or (
                method == "auto" and len(chunks) >= _ALL_AT_ONCE[measure])
            return wanted and self._fits_int64(chunks)

        wastes = measures = None
        if at_once("waste"):
            wastes = layout_sweep.seed_waste(
                list(self.grid.swept.values()), np.array(chunks, np.int64))
        if layout_measures and at_once("layout"):
            measures = self._swept_measures(chunks)
        if wastes is None:
            wastes = [_seed_waste(self.grid, chunk) for chunk in chunks]
        if layout_measures and measures is None:
            measures = [self.values(chunk)[1:] for chunk in chunks]
        out = []
        for i, chunk in enumerate(chunks):
            padding, peak = measures[i] if layout_measures else (None, None)
            if layout_measures:
                _check_measures(i, chunk, padding, peak)
            out.append((i, chunk, _rounded(self.grid, chunk), wastes[i],
                        padding, peak))
        return out

    def _fits_int64(self, chunks):
        """Whether every total layout_sweep keeps stays below 2^62: at most
        one chunk per parameter, each at most C' or a numel rounded up."""
        numels, degrees = self.parsed.args[0], self.parsed.args[1]
        if not chunks:
            return False
        widest = (_rounded(self.grid, chunks[-1]) + max(numels, default=0) +
                  max(degrees, default=1))
        return (len(numels) + 1) * widest < 1 << 62

    def _swept_measures(self, chunks):
        """(layout_padding, peak) at every candidate as values() gives them,
        from layout_sweep's totals; None where settings move parts (the
        placement oracle places one layout at a time)."""
        if _moves(self.parsed.settings):
            return None
        numels, degrees, frozen = (self.parsed.args[0], self.parsed.args[1],
                                   self.parsed.frozen)
        rounded = np.array([_rounded(self.grid, c) for c in chunks], np.int64)
        zeros = np.zeros(len(chunks), dtype=np.int64)
        padding, shards, real, largest = (zeros.copy() for _ in range(4))
        gathered = [0, 0, 0]  # sizes, used elements, padding
        for config in _configs_at(self.grid, chunks[0]):
            params = _group_params(numels, degrees, frozen, config.dp_degree)
            if config.keep_gathered:  # the same at every candidate
                for c in _place(params, config.chunk_size, config.dp_degree):
                    gathered = [gathered[0] + c.size, gathered[1] + c.used,
                                gathered[2] + c.size - c.used]
                continue
            totals = layout_sweep.next_fit([n for _, n in params], rounded,
                                           config.dp_degree)
            padding += totals.padding
            shards += totals.shards
            real += totals.real_first
            largest = np.maximum(largest, totals.largest)
        frozen_numel = _frozen_numel(numels, frozen)
        out = []
        for i in range(len(chunks)):
            most = _rank_bytes(int(shards[i]), gathered[0], gathered[1],
                               int(real[i]), frozen_numel,
                               self.parsed.settings)
            out.append((gathered[2] + int(padding[i]),
                        most["device_bytes"] + HALF_BYTES * int(largest[i])))
        return out


def _value(row, objective):
    return row[3 + objective]


def _best_row(req, objective):
    """The first candidate with the least value (strict <, as the seed)."""
    rows = req.sweep(objective != OBJECTIVE_SEED_WASTE)
    best = None
    for row in rows:
        if best is None or _value(row, objective) < _value(best, objective):
            best = row
    return best


def _point(row, objective, point_chunk_size):
    i, chunk, rounded, waste, padding, peak = row
    return collections.OrderedDict([
        ("candidate", str(i)),
        ("chunk_size", str(rounded if point_chunk_size == "rounded"
                           else chunk)),
        ("value", str(_value(row, objective))),
        ("seed_waste", str(waste)),
        ("layout_padding", str(padding)),
        ("peak_rank_bytes", str(peak)),
    ])


# ---------------------------------------------------------------------------
# The public functions.


def _error(exc):
    return {"error": str(exc)}


def objective_values(request, chunk):
    """For candidate size C of the request's search grid: (the seed's waste
    at C, the layout's real padding at C', the most loaded rank's device
    bytes plus the largest non-gathered chunk's gathered bytes at C'), where
    C' is C rounded up to the lcm of the degrees and the layout at C' keeps
    the search's kept-gathered groups as the search decides them and puts
    every other group at C'. Any C >= 0 is evaluated (grid points are
    start + i * interval). Raises LayoutError for an invalid request or one
    with given configs."""
    req = _Request(request, need_search=True)
    return req.values(int(chunk))


def _layout_answer(req, configs, search):
    layout = req.layout_at(configs, model=req.parsed.model)
    answer = collections.OrderedDict()
    if search is not None:
        answer["search"] = search
    answer["groups"] = [collections.OrderedDict([
        ("dp_degree", g.config.dp_degree),
        ("chunk_size", g.config.chunk_size),
        ("keep_gathered", g.config.keep_gathered),
        ("chunks", [collections.OrderedDict([
            ("size", c.size), ("used", c.used),
            ("first_param", c.first_param), ("num_params", c.num_params)])
            for c in g.chunks]),
        ("padding", g.padding)]) for g in layout.groups]
    answer["layout_padding"] = layout.layout_padding
    answer["most_loaded_rank"] = layout.most
    answer["least_loaded_rank"] = layout.least
    answer["gathered_chunk_bytes"] = layout.gathered_chunk_bytes
    answer["gathered_chunks"] = layout.gathered_chunks
    answer["placement"] = layout.placement
    answer["most_loaded_rank_least"] = layout.most_least
    body = {k: v for k, v in answer.items() if k != "search"}
    _check_uint64(body, "")
    answer = _stringify(answer)
    if req.parsed.cluster is not None:
        answer["verdict"] = _verdict(req.parsed.cluster, layout)
    return answer


def _verdict(cluster, layout):
    """The verdict oracle's judgement of the most loaded rank (worst order):
    its device bytes + the gathered chunk + the reserve; host bytes per node
    min(gpus_per_node, the largest dp degree) x the larger host bytes of the
    two extreme orders."""
    need = (layout.most["device_bytes"] + layout.gathered_chunk_bytes +
            cluster["reserve_bytes"])
    if need > UINT64_MAX:
        raise LayoutError(f"device_need_bytes: {need} exceeds 2^64-1")
    world = max([g.config.dp_degree for g in layout.groups],
                default=0) * cluster.get("mesh_ranks", 1)
    host = min(cluster["gpus_per_node"], world) * max(
        layout.most["host_bytes"], layout.most_least["host_bytes"])
    if host > UINT64_MAX:
        raise LayoutError(f"host_bytes_per_node: {host} exceeds 2^64-1")
    return verdict_oracle.judge(
        need, host, cluster["device_memory_bytes"], cluster["reserve_bytes"],
        cluster["margin"], cluster["host_memory_bytes"])


def _stringify(obj):
    """uint64 fields as decimal strings; dp_degree (uint32) stays a number."""
    if isinstance(obj, dict):
        return collections.OrderedDict(
            (k, v if k == "dp_degree" or isinstance(v, (bool, str))
             else _stringify(v)) for k, v in obj.items())
    if isinstance(obj, list):
        return [_stringify(v) for v in obj]
    if isinstance(obj, int) and not isinstance(obj, bool):
        return str(obj)
    return obj  # floats (effective_offload_optim_frac) stay numbers


def layout(request):
    """The LayoutResponse dict for a LayoutRequest dict (see the module
    docstring), or {"error": "..."}."""
    try:
        req = _Request(request, need_search=False)
        if req.grid is None:
            return _layout_answer(req, req.parsed.configs, None)
        objective = req.parsed.objective
        row = _best_row(req, objective)
        configs = _configs_at(req.grid, row[1])
        if objective == OBJECTIVE_SEED_WASTE:
            # The restated grid must pick what the search oracle picked.
            picked = [(c["dp_degree"], int(c["chunk_size"]),
                       c["keep_gathered"])
                      for c in req.search_answer["configs"]]
            assert picked == [tuple(c) for c in configs], (picked, configs)
            assert int(req.search_answer["min_chunk_waste"]) == row[3]
            search = req.search_answer
        else:
            # Reading: with another objective the `search` field describes
            # the search that ran with that objective: the configs laid out
            # (the objective's best candidate) and that candidate's seed
            # waste as min_chunk_waste.
            search = collections.OrderedDict([
                ("configs", [collections.OrderedDict([
                    ("dp_degree", c.dp_degree),
                    ("chunk_size", str(c.chunk_size)),
                    ("keep_gathered", c.keep_gathered)]) for c in configs]),
                ("total_param_size", str(req.grid.total)),
                ("min_chunk_waste", str(row[3]))])
        return _layout_answer(req, configs, search)
    except LayoutError as exc:
        return _error(exc)


def frontier(request, point_chunk_size="rounded"):
    """The FrontierResponse dict: every grid candidate whose objective value
    is a new strict minimum, in grid order, each with all three measures;
    or {"error": "..."}. Brute force: small requests only.

    point_chunk_size: "rounded" (default) reports C', the size Gemini
    allocates and that Layout would lay out; "grid" reports the candidate's
    own grid size C = start + candidate * interval. The points are exactly
    the Pareto front of (C, value) always, and of (C', value) for the layout
    objectives (their value depends on C' alone); with OBJECTIVE_SEED_WASTE
    two points may share one C' when the lcm exceeds the interval."""
    if point_chunk_size not in ("rounded", "grid"):
        raise ValueError(point_chunk_size)
    try:
        req = _Request(request, need_search=True)
        objective = req.parsed.objective
        # Every candidate's value is needed for the layout objectives; for
        # the seed's, only the points need their layout measures (a point
        # carries all three; a candidate that is no point carries none).
        rows = req.sweep(objective != OBJECTIVE_SEED_WASTE)
        points = []
        least = None
        for row in rows:
            if least is None or _value(row, objective) < least:
                least = _value(row, objective)
                if row[4] is None:
                    row = req.measured_row(row)
                points.append(_point(row, objective, point_chunk_size))
        return collections.OrderedDict([("points", points),
                                        ("candidates", str(req.grid.count))])
    except LayoutError as exc:
        return _error(exc)


def best(request, point_chunk_size="rounded"):
    """The objective's best candidate (the first with the least value) as a
    FrontierPoint dict, or {"error": "..."}."""
    try:
        req = _Request(request, need_search=True)
        objective = req.parsed.objective
        row = _best_row(req, objective)
        i = row[0]
        waste, padding, peak = req.values(row[1])
        return _point((i, row[1], row[2], waste, padding, peak), objective,
                      point_chunk_size)
    except LayoutError as exc:
        return _error(exc)


def _answer_line(line, mode):
    try:
        request = json.loads(line)
    except ValueError as exc:
        return {"error": f"{type(exc).__name__}: {exc}"}
    if mode == "frontier":
        return frontier(request)
    if mode == "best":
        return best(request)
    return layout(request)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--frontier", action="store_true",
                       help="answer a FrontierResponse instead")
    group.add_argument("--best", action="store_true",
                       help="answer the objective's best candidate")
    parser.add_argument("--jsonl", action="store_true",
                        help="one request per input line, one answer per "
                        "output line")
    args = parser.parse_args(argv)
    mode = "frontier" if args.frontier else "best" if args.best else "layout"
    if args.jsonl:
        for line in sys.stdin:
            answer = _answer_line(line, mode)
            sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
            sys.stdout.flush()
        return 0
    sys.stdout.write(json.dumps(_answer_line(sys.stdin.read(), mode)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
