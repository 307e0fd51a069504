"""Client.layout's arguments as a LayoutRequest.

The parameters and the search settings travel as for Search
(request.build_request); `configs` replace the search, `frozen` marks the
parameters that get no chunk, and GeminiPlugin's settings say what a rank
holds. As in request.py, values that fit the wire are sent as they are and
judged by the server (a config for an absent degree, a chunk size of 0,
frozen of the wrong length); values that do not fit raise
InvalidArgumentError here, named as the server names them
("configs[1].chunk_size").
"""

import collections.abc

from chunkplan.cluster_request import layout_cluster
from chunkplan.request import (UINT32_MAX, UINT64_MAX, build_request,
                               enum_value, invalid_argument, is_module,
                               module_parameters, unsigned)
from chunkplan.v1 import chunk_search_pb2

# The search part when configs are given: checked by the server as a
# ChunkSearchRequest, never swept (one candidate, at interval 1).
_UNSWEPT_RANGE_M = 0
_UNSWEPT_INTERVAL = 1

PRECISIONS = ("fp16", "bf16")
# GeminiPlugin's placement_policy names, in chunkplan.v1.Placement order.
PLACEMENTS = ("static", "auto")
OPTIMIZERS = ("adam", "none")
# The chunkplan.v1.Objective names without "OBJECTIVE_", in enum order.
OBJECTIVES = ("seed_waste", "layout_padding", "peak_rank_bytes")
# Workload's keys, as Client.layout and Client.plan take them in a dict.
WORKLOAD_KEYS = ("micro_batch", "sequence_length",
                 "activation_checkpointing", "flash_attention")


def workload_message(value):
    """The Workload message of a dict with WORKLOAD_KEYS (micro_batch and
    sequence_length ints, the two flags bools, default False), or of a
    Workload message (sent as it is). Raises InvalidArgumentError for an
    unknown key or a value that does not fit."""
    if isinstance(value, chunk_search_pb2.Workload):
        return value
    if not isinstance(value, dict) or set(value) - set(WORKLOAD_KEYS):
        raise invalid_argument(
            f"workload: expected a dict of {', '.join(WORKLOAD_KEYS)}, got "
            f"{value!r}")
    flags = {}
    for key in WORKLOAD_KEYS[2:]:
        flag = value.get(key, False)
        if not isinstance(flag, bool):
            raise invalid_argument(f"workload.{key}: expected True or "
                                   f"False, got {flag!r}")
        flags[key] = flag
    return chunk_search_pb2.Workload(
        micro_batch=unsigned(value.get("micro_batch", 0), UINT32_MAX,
                             "workload.micro_batch"),
        sequence_length=unsigned(value.get("sequence_length", 0), UINT32_MAX,
                                 "workload.sequence_length"),
        **flags)


def build_search(model_or_params, search_range_m, search_interval,
                 min_chunk_size_m=32, filter_exlarge_params=True, *,
                 dp_degree=1, engine="auto"):
    """request.build_request's ChunkSearchRequest or, for a
    chunkplan.v1.ModelConfig (e.g. chunkplan.models.model_config(...): the
    server describes it), one with `model` and dp_degree as its one
    degree."""
    if not isinstance(model_or_params, chunk_search_pb2.ModelConfig):
        return build_request(model_or_params, search_range_m,
                             search_interval, min_chunk_size_m,
                             filter_exlarge_params, dp_degree=dp_degree,
                             engine=engine)
    search = build_request([], search_range_m, search_interval,
                           min_chunk_size_m, filter_exlarge_params,
                           engine=engine)
    search.model.CopyFrom(model_or_params)
    search.dp_degrees.append(unsigned(dp_degree, UINT32_MAX, "dp_degree"))
    return search


def _flag(value, where):
    """A bool; InvalidArgumentError naming `where` for anything else (a
    string "no" is not False)."""
    if not isinstance(value, bool):
        raise invalid_argument(
            f"{where}: expected True or False, got {value!r}")
    return value


def _config(i, item):
    """A ChunkConfig from (dp_degree, chunk_size[, keep_gathered])."""
    where = f"configs[{i}]"
    if not isinstance(item, (tuple, list)) or len(item) not in (2, 3):
        raise invalid_argument(
            f"{where}: expected (dp_degree, chunk_size[, keep_gathered]), "
            f"got {item!r}")
    keep_gathered = item[2] if len(item) == 3 else False
    return chunk_search_pb2.ChunkConfig(
        dp_degree=unsigned(item[0], UINT32_MAX,
                                     f"{where}.dp_degree"),
        chunk_size=unsigned(item[1], UINT64_MAX,
                                      f"{where}.chunk_size"),
        keep_gathered=_flag(keep_gathered, f"{where}.keep_gathered"))


def chunk_configs(configs):
    """ChunkConfig messages, in order, from the seed's config_dict
    ({dp_degree: {"chunk_size": C, "keep_gathered": B}}, keep_gathered
    optional, default False: what GeminiDDP's chunk_config_dict takes) or
    from an iterable of (dp_degree, chunk_size[, keep_gathered]) tuples,
    which may name a degree twice (for the server to refuse). Raises
    InvalidArgumentError for what does not fit the wire."""
    if isinstance(configs, collections.abc.Mapping):
        items = []
        for i, (degree, config) in enumerate(configs.items()):
            if not isinstance(config, collections.abc.Mapping) or (
                    set(config) - {"chunk_size", "keep_gathered"}) or (
                    "chunk_size" not in config):
                raise invalid_argument(
                    f"configs[{i}]: expected {{\"chunk_size\": int, "
                    f"\"keep_gathered\": bool}}, got {config!r}")
            items.append((degree, config["chunk_size"],
                          config.get("keep_gathered", False)))
    elif isinstance(configs, (str, bytes)):
        raise invalid_argument("configs: expected a config_dict or a list "
                               "of (dp_degree, chunk_size, keep_gathered)")
    else:
        try:
            items = list(configs)
        except TypeError:
            raise invalid_argument(
                "configs: expected a config_dict or a list of (dp_degree, "
                f"chunk_size, keep_gathered), got {configs!r}") from None
    return [_config(i, item) for i, item in enumerate(items)]


def frozen_flags(model_or_params, frozen):
    """The frozen list to send. frozen: None (from a torch.nn.Module, `not
    p.requires_grad` of every parameter the seed visits, sent empty when
    none is frozen; for numels, none frozen) or an iterable of bools, one
    per parameter, sent as given. Raises InvalidArgumentError for a value
    that is not a bool."""
    if frozen is None:
        if not is_module(model_or_params):
            return []
        flags = [not p.requires_grad
                 for p in module_parameters(model_or_params)]
        return flags if any(flags) else []
    if isinstance(frozen, (str, bytes)):
        raise invalid_argument("frozen: expected a list of bools")
    try:
        values = list(frozen)
    except TypeError:
        raise invalid_argument(
            f"frozen: expected a list of bools, got {frozen!r}") from None
    return [_flag(v, f"frozen[{i}]") for i, v in enumerate(values)]


def _fraction(value, where):
    """A float for a double field (the server judges its range); an
    InvalidArgumentError naming `where` for what is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise invalid_argument(f"{where}: expected a number, got {value!r}")
    return float(value)


def gemini_settings(precision="fp16", master_weights=True,
                    gradient_accumulation=False, pin_memory=True,
                    optimizer="adam", placement="static",
                    shard_param_frac=None, offload_optim_frac=0.0,
                    offload_param_frac=0.0, device_memory_bytes=None,
                    tp_size=1, extra_dp_size=1, sequence_parallelism=False):
    """The GeminiSettings message. precision: "fp16" or "bf16" (any case,
    "PRECISION_" optional) or a Precision number; optimizer: "adam" or
    "none" likewise; placement: "static" or "auto" likewise
    (GeminiPlugin's placement_policy); the flags are bools (GeminiPlugin's
    master_weights, enable_gradient_accumulation, pin_memory); the
    fractions are GeminiPlugin's (shard_param_frac None: unset, 1.0);
    device_memory_bytes (auto) None or an int. The server judges the
    fractions' range and which policy they belong to. tp_size,
    extra_dp_size, sequence_parallelism: GeminiPlugin's mesh and
    enable_sequence_parallelism (docs/tensor-parallelism.md; the server
    shards a described model and judges them). Raises InvalidArgumentError
    naming the field."""
    message = gemini_base(precision, master_weights, gradient_accumulation,
                          pin_memory, optimizer, tp_size, extra_dp_size,
                          sequence_parallelism)
    message.placement = enum_value(chunk_search_pb2.Placement, "PLACEMENT_",
                                   placement, "placement")
    if shard_param_frac is not None:
        message.shard_param_frac = _fraction(shard_param_frac,
                                             "shard_param_frac")
    message.offload_optim_frac = _fraction(offload_optim_frac,
                                           "offload_optim_frac")
    message.offload_param_frac = _fraction(offload_param_frac,
                                           "offload_param_frac")
    if device_memory_bytes is not None:
        message.device_memory_bytes = unsigned(
            device_memory_bytes, UINT64_MAX, "device_memory_bytes")
    return message


def gemini_base(precision, master_weights, gradient_accumulation,
                pin_memory, optimizer, tp_size=1, extra_dp_size=1,
                sequence_parallelism=False):
    """The GeminiSettings of the fixed choices alone (no placement field
    set), as gemini_settings judges them."""
    return chunk_search_pb2.GeminiSettings(
        tp_size=unsigned(tp_size, UINT32_MAX, "tp_size"),
        extra_dp_size=unsigned(extra_dp_size, UINT32_MAX, "extra_dp_size"),
        enable_sequence_parallelism=_flag(sequence_parallelism,
                                          "sequence_parallelism"),
        precision=enum_value(chunk_search_pb2.Precision,
                                      "PRECISION_", precision, "precision"),
        master_weights=_flag(master_weights, "master_weights"),
        gradient_accumulation=_flag(gradient_accumulation,
                                    "gradient_accumulation"),
        pin_memory=_flag(pin_memory, "pin_memory"),
        optimizer=enum_value(chunk_search_pb2.Optimizer,
                                      "OPTIMIZER_", optimizer, "optimizer"))


def build_layout_request(model_or_params, search_range_m=None,
                         search_interval=None, min_chunk_size_m=32,
                         filter_exlarge_params=True, *, configs=None,
                         frozen=None, dp_degree=1, engine="auto",
                         objective="seed_waste", workload=None, cluster=None,
                         **settings):
    """The LayoutRequest for Client.layout's (and Client.frontier's)
    arguments.

    model_or_params, dp_degree and the search settings: as build_search
    (numels, a torch.nn.Module or a chunkplan.v1.ModelConfig).
    search_range_m and search_interval are needed to search; with
    `configs` (see chunk_configs; empty means search) nothing is swept and,
    left None, they travel as 0 and 1. frozen: see frozen_flags. objective:
    one of OBJECTIVES (any case, "OBJECTIVE_" optional) or an Objective
    number; any objective with configs is sent, for the server to judge.
    workload: None, or workload_message's dict (the activation ESTIMATE;
    the model given as a ModelConfig). cluster: None, or
    cluster_request.layout_cluster's value (the server then judges the
    layout: LayoutResponse.verdict). settings: gemini_settings's
    keywords. Raises
    InvalidArgumentError for what does not fit the wire, or for a search
    without search_range_m or search_interval."""
    config_messages = chunk_configs(configs) if configs is not None else []
    if not config_messages:
        for name, value in (("search_range_m", search_range_m),
                            ("search_interval", search_interval)):
            if value is None:
                raise invalid_argument(
                    f"{name}: needed to search (no configs given)")
    if search_range_m is None:
        search_range_m = _UNSWEPT_RANGE_M
    if search_interval is None:
        search_interval = _UNSWEPT_INTERVAL
    search = build_search(
        model_or_params, search_range_m, search_interval, min_chunk_size_m,
        filter_exlarge_params, dp_degree=dp_degree, engine=engine)
    request = chunk_search_pb2.LayoutRequest(
        search=search, gemini=gemini_settings(**settings),
        objective=enum_value(chunk_search_pb2.Objective, "OBJECTIVE_",
                             objective, "objective"))
    request.configs.extend(config_messages)
    request.frozen.extend(frozen_flags(model_or_params, frozen))
    if workload is not None:
        request.workload.CopyFrom(workload_message(workload))
    if cluster is not None:
        request.cluster.CopyFrom(layout_cluster(cluster))
    return request
