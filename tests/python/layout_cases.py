"""Expected layouts for the client's tests: tests/oracle/layout_oracle.py (an
independent Python statement of issue 12's rules), imported by path, and
fresh random Layout cases, each as the client's arguments and as the
LayoutRequest dict the oracle takes. Nothing here comes from chunkplan's own
output.

A case is (args, kwargs, request): Client.layout(*args, **kwargs) and
layout_oracle.layout(request) describe the same layout; layout_json puts
the client's typed Layout in the oracle's shape for the comparison.
"""

import importlib.util
import itertools
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load_oracle():
    path = ROOT / "tests" / "oracle" / "layout_oracle.py"
    spec = importlib.util.spec_from_file_location("layout_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


layout_oracle = _load_oracle()

# The search part Client.layout sends for arguments left None when configs
# are given (client/python/chunkplan/layout_request.py): nothing is swept.
UNSWEPT = {"search_range_m": 0, "search_interval": 1}

# Every GeminiSettings combination, as Client.layout's keywords.
SETTINGS = [dict(precision=p, master_weights=m, gradient_accumulation=g,
                 pin_memory=pin, optimizer=o)
            for p, m, g, pin, o in itertools.product(
                ("fp16", "bf16"), (True, False), (False, True),
                (True, False), ("adam", "none"))]


def gemini_json(settings):
    """Client.layout's setting keywords as the oracle's "gemini" dict."""
    return {"precision": "PRECISION_" + settings["precision"].upper(),
            "master_weights": settings["master_weights"],
            "gradient_accumulation": settings["gradient_accumulation"],
            "pin_memory": settings["pin_memory"],
            "optimizer": "OPTIMIZER_" + settings["optimizer"].upper()}


def oracle_answer(ask, request):
    """`ask(request)` (one of the oracle's functions) when it answers;
    raises AssertionError carrying the oracle's error when it refuses."""
    answer = ask(request)
    if "error" in answer:
        raise AssertionError(f"the oracle rejects {request}: "
                             f"{answer['error']}")
    return answer


def oracle_layout(request):
    """The oracle's LayoutResponse dict (protobuf JSON shape, uint64 as
    strings); raises AssertionError carrying the oracle's error."""
    return oracle_answer(layout_oracle.layout, request)


def oracle_error(request):
    """The oracle's error text for a request it rejects, else None."""
    return layout_oracle.layout(request).get("error")


def _count(value):
    """A uint64 field of the oracle's shape: a decimal string, from what
    must be a plain int."""
    assert type(value) is int, value
    return str(value)


_RANK_PARTS = ("param_bytes", "master_bytes", "grad_bytes", "optimizer_bytes",
               "frozen_bytes", "device_bytes", "pinned_host_bytes",
               "offloaded_host_bytes", "host_bytes")


def _rank_json(rank):
    return {part: _count(getattr(rank, part)) for part in _RANK_PARTS}


def _group_json(group):
    assert type(group.dp_degree) is int
    assert type(group.keep_gathered) is bool
    return {"dp_degree": group.dp_degree,
            "chunk_size": _count(group.chunk_size),
            "keep_gathered": group.keep_gathered,
            "chunks": [{"size": _count(c.size), "used": _count(c.used),
                        "first_param": _count(c.first_param),
                        "num_params": _count(c.num_params)}
                       for c in group.chunks],
            "padding": _count(group.padding)}


def layout_json(layout):
    """A typed Layout in the oracle's shape (protobuf JSON, uint64 as
    strings, the search part without engine, candidates and nanos),
    asserting on the way that every count is a plain int."""
    answer = {}
    if layout.search is not None:
        search = layout.search
        answer["search"] = {
            "configs": [{"dp_degree": d,
                         "chunk_size": _count(c["chunk_size"]),
                         "keep_gathered": c["keep_gathered"]}
                        for d, c in search.config_dict.items()],
            "total_param_size": _count(search.total_param_size),
            "min_chunk_waste": _count(search.min_chunk_waste)}
    answer["groups"] = [_group_json(g) for g in layout.groups]
    answer["layout_padding"] = _count(layout.layout_padding)
    answer["most_loaded_rank"] = _rank_json(layout.most_loaded_rank)
    answer["least_loaded_rank"] = _rank_json(layout.least_loaded_rank)
    answer["gathered_chunk_bytes"] = _count(layout.gathered_chunk_bytes)
    answer["gathered_chunks"] = _count(layout.gathered_chunks)
    p = layout.placement
    assert type(p.effective_offload_optim_frac) is float
    answer["placement"] = {
        "offloaded_chunks": _count(p.offloaded_chunks),
        "offloaded_chunks_max": _count(p.offloaded_chunks_max),
        "effective_offload_optim_frac": p.effective_offload_optim_frac,
        "gathered_at_run_time": _count(p.gathered_at_run_time),
        "param_offloaded_chunks": _count(p.param_offloaded_chunks),
        "notes": list(p.notes)}
    answer["most_loaded_rank_least"] = _rank_json(
        layout.most_loaded_rank_least)
    if layout.verdict is not None:
        answer["verdict"] = _verdict_json(layout.verdict)
    return answer


def _verdict_json(v):
    """A typed Verdict in the oracle's shape, every count a plain int."""
    out = {}
    for name in ("device_need_bytes", "device_memory_bytes", "reserve_bytes",
                 "margin", "margin_bytes", "headroom_bytes",
                 "device_excess_bytes", "host_bytes_per_node",
                 "host_memory_bytes", "host_excess_bytes", "fits", "tight",
                 "why_not"):
        value = getattr(v, name)
        if name == "margin":
            assert type(value) is float
            out[name] = value
        elif name in ("fits", "tight", "why_not"):
            out[name] = value
        else:
            out[name] = _count(value)
    return out


def plain(value):
    """OrderedDicts as dicts, so that a comparison's diff reads plainly."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def _numel(rng):
    roll = rng.random()
    if roll < 0.08:
        return 0
    if roll < 0.12:
        return rng.randint(1_000_000, 3_000_000)  # beyond most chunk sizes
    if roll < 0.3:
        return rng.randint(1, 64)
    return rng.randint(1, 120_000)


def _degrees(rng, n):
    """(per-parameter degrees, the shared dp_degree keyword)."""
    shared = rng.choice([1, 2, 4, 8])
    if rng.random() < 0.5:
        return [shared] * n, shared
    return [rng.choice([1, 2, 3, 4, 8]) for _ in range(n)], shared


def _params(numels, degrees, shared):
    """Client.layout's first argument: numels where every degree is the
    shared one, else (numel, degree) pairs for the others."""
    return [m if d == shared else (m, d) for m, d in zip(numels, degrees)]


def _given_configs(rng, numels, degrees):
    """[(degree, chunk_size, keep_gathered)], one per degree in a random
    order, sizes valid: kept gathered any size >= 1, else a multiple of the
    degree, often below the largest numel (oversize chunks)."""
    present = list(dict.fromkeys(degrees))
    rng.shuffle(present)
    largest = max(numels)
    configs = []
    for d in present:
        if rng.random() < 0.2:
            configs.append((d, rng.randint(1, 300_000), True))
        else:
            top = max(1, min(largest, 400_000) // d)
            configs.append((d, d * rng.randint(1, top), False))
    return configs


def _frozen(rng, n):
    roll = rng.random()
    if roll < 0.4:
        return None
    if roll < 0.5:
        return [False] * n
    if roll < 0.55:
        return [True] * n
    return [rng.random() < 0.3 for _ in range(n)]


def random_case(rng, given=None):
    """One random Layout case (args, kwargs, request). given: True for
    given configs, False for a search, None for either. Searches stay
    under about 2,000 candidates, so that the oracle's Python loop stays
    quick."""
    n = rng.randint(1, 60)
    numels = [_numel(rng) for _ in range(n)]
    if not any(numels):
        numels[0] = 1  # the search refuses a total of 0
    degrees, shared = _degrees(rng, n)
    if given is None:
        given = rng.random() < 0.5
    search = dict(search_range_m=rng.choice([0, 0.0625, 0.25, 0.5, 1]),
                  search_interval=rng.choice([512, 777, 1024, 4096]),
                  min_chunk_size_m=rng.choice([0, 0.01, 0.05, 0.5, 32]),
                  filter_exlarge_params=rng.random() < 0.7)
    settings = rng.choice(SETTINGS)
    frozen = _frozen(rng, n)
    kwargs = dict(search, dp_degree=shared, frozen=frozen, **settings)
    request = {"search": {"numels": numels, "dp_degrees": degrees, **search},
               "frozen": frozen or [], "gemini": gemini_json(settings)}
    if given:
        configs = _given_configs(rng, numels, degrees)
        if rng.random() < 0.5:
            kwargs["configs"] = configs
        else:
            kwargs["configs"] = {d: {"chunk_size": c, "keep_gathered": k}
                                 for d, c, k in configs}
        if rng.random() < 0.5:  # the search's arguments may be left out
            del kwargs["search_range_m"], kwargs["search_interval"]
            request["search"].update(UNSWEPT)
        request["configs"] = [{"dp_degree": d, "chunk_size": c,
                               "keep_gathered": k} for d, c, k in configs]
    return (_params(numels, degrees, shared),), kwargs, request


def _set_configs(kwargs, request, configs):
    kwargs["configs"] = list(configs)
    request["configs"] = [{"dp_degree": d, "chunk_size": c,
                           "keep_gathered": k} for d, c, k in configs]


def invalid_case(rng, kind):
    """A random case with given configs spoilt one way: (args, kwargs,
    request, field), where `field` starts both the server's message and the
    oracle's error. kind: "absent_degree", "missing_degree",
    "second_config", "zero_chunk_size", "not_a_multiple" or
    "frozen_length"."""
    while True:
        args, kwargs, request = random_case(rng, given=True)
        degrees = request["search"]["dp_degrees"]
        configs = [(c["dp_degree"], c["chunk_size"], c["keep_gathered"])
                   for c in request["configs"]]
        n = len(degrees)
        if kind == "missing_degree" and len(configs) < 2:
            continue  # no configs at all means: search
        if kind == "not_a_multiple" and not any(
                d > 1 for d, _, _ in configs):
            continue
        break
    j = rng.randrange(len(configs))
    if kind == "absent_degree":
        absent = next(d for d in (5, 6, 7, 9) if d not in degrees)
        configs.insert(j, (absent, absent * 100, False))
        field = f"configs[{j}].dp_degree"
    elif kind == "missing_degree":
        dropped = configs.pop(j)[0]
        field = f"configs: no config for degree {dropped} "
    elif kind == "second_config":
        configs.append(configs[j])
        field = f"configs[{len(configs) - 1}].dp_degree"
    elif kind == "zero_chunk_size":
        d, _, k = configs[j]
        configs[j] = (d, 0, k)
        field = f"configs[{j}].chunk_size"
    elif kind == "not_a_multiple":
        j = next(i for i, c in enumerate(configs) if c[0] > 1)
        d = configs[j][0]
        configs[j] = (d, d * rng.randint(1, 1000) + rng.randint(1, d - 1),
                      False)
        field = f"configs[{j}].chunk_size"
    elif kind == "frozen_length":
        length = rng.choice([m for m in (n - 1, n + 1, 2 * n + 3) if m > 0])
        kwargs["frozen"] = request["frozen"] = [
            rng.random() < 0.5 for _ in range(length)]
        field = "frozen"
    else:
        raise ValueError(kind)
    _set_configs(kwargs, request, configs)
    return args, kwargs, request, field


INVALID_KINDS = ("absent_degree", "missing_degree", "second_config",
                 "zero_chunk_size", "not_a_multiple", "frozen_length")
