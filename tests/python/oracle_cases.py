"""Expected answers for the client's tests: the oracle (tests/oracle, an
independent port of ColossalAI's search in Python + numpy) and ColossalAI's
published GPT-2 figure. Nothing here comes from chunkplan's own output."""

import json
import os
import pathlib
import random
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HF_CONFIGS = pathlib.Path(__file__).resolve().parent / "data" / "hf_configs"
sys.path.insert(0, str(ROOT / "tests" / "oracle"))
import chunk_search_oracle  # noqa: E402

# ColossalAI's GPT-2 test model (examples/gpt2_colossalai.json): its
# published chunk size at search_range_m=1, search_interval=128,
# min_chunk_size_m=0, at dp 1 and dp 4.
GPT2_EXAMPLE = ROOT / "examples" / "gpt2_colossalai.json"
GPT2_CHUNK_SIZE = 527872


def load_json(path):
    with open(path) as f:
        return json.load(f)


def gpt2_example_numels():
    return load_json(GPT2_EXAMPLE)["numels"]


def oracle_tuple(request):
    """The oracle's answer to a ChunkSearchRequest dict as the seed's tuple
    ({degree: {"chunk_size", "keep_gathered"}}, total, waste), or raises
    AssertionError carrying the oracle's error."""
    answer = chunk_search_oracle.search(request)
    if "error" in answer:
        raise AssertionError(f"the oracle rejects {request}: "
                             f"{answer['error']}")
    config_dict = {}
    for config in answer["configs"]:
        config_dict[int(config["dp_degree"])] = {
            "chunk_size": int(config["chunk_size"]),
            "keep_gathered": bool(config["keep_gathered"])}
    return (config_dict, int(answer["total_param_size"]),
            int(answer["min_chunk_waste"]))


def oracle_error(request):
    """The oracle's error text for a request it rejects, else None."""
    return chunk_search_oracle.search(request).get("error")


def random_seed():
    """CHUNKPLAN_TEST_SEED, or a fresh seed (printed by failing tests)."""
    value = os.environ.get("CHUNKPLAN_TEST_SEED")
    return int(value) if value else random.SystemRandom().randrange(2**32)


def _numel(rng):
    roll = rng.random()
    if roll < 0.02:
        return rng.randint(2_000_000, 8_000_000)    # for the 3-std filter
    if roll < 0.1:
        return rng.randint(1, 64)
    return rng.randint(1, 300_000)


def random_case(rng):
    """One random search: (params, kwargs, request). `params` and `kwargs`
    are what the client takes: numels with a shared dp_degree, or
    (numel, dp_degree) pairs, or a mix; `request` is the same search as a
    ChunkSearchRequest dict for the oracle. Sweeps stay under a few
    thousand candidates so that the oracle's Python loop stays quick."""
    n = rng.randint(1, 150)
    numels = [_numel(rng) for _ in range(n)]
    shape = rng.choice(["shared", "pairs", "mixed"])
    shared = rng.choice([1, 2, 4, 8])
    if shape == "shared":
        degrees = [shared] * n
        params = list(numels)
    else:
        degrees = [rng.choice([1, 2, 3, 4, 8]) for _ in range(n)]
        params = [(m, d) for m, d in zip(numels, degrees)]
        if shape == "mixed":
            params = [m if d == shared else (m, d)
                      for m, d in zip(numels, degrees)]
    kwargs = dict(
        search_range_m=rng.choice([0, 0.0625, 0.25, 0.5, 1, 1.5]),
        search_interval=rng.choice([128, 512, 777, 1024, 4096, 10000]),
        min_chunk_size_m=rng.choice([0, 0.01, 0.05, 0.1, 0.5, 32]),
        filter_exlarge_params=rng.random() < 0.7,
        dp_degree=shared)
    request = {"numels": numels, "dp_degrees": degrees,
               **{k: v for k, v in kwargs.items() if k != "dp_degree"}}
    return params, kwargs, request
