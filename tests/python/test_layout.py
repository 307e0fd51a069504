"""Client.layout against the real chunkplan-server: every field of the typed
Layout equals tests/oracle/layout_oracle.py's answer on fresh random
requests (several degrees, zero sizes, oversize tensors, frozen flags,
given and searched configs, every GeminiSettings combination), and what the
server refuses, the oracle refuses, for the same field."""

import random

import grpc
import pytest

import chunkplan
from layout_cases import (INVALID_KINDS, SETTINGS, gemini_json,
                          invalid_case, layout_json, oracle_error,
                          oracle_layout, plain, random_case)
from oracle_cases import random_seed

# Bound on every call, so that a stuck server fails the test.
TIMEOUT_S = 60
RANDOM_REQUESTS = 300
INVALID_REQUESTS_PER_KIND = 20


@pytest.fixture(scope="module")
def client(server):
    with chunkplan.Client(server.target) as c:
        yield c


def assert_equals_oracle(layout, request, context=""):
    expected = plain(oracle_layout(request))
    assert layout_json(layout) == expected, context
    assert (layout.search is None) == ("configs" in request
                                       and bool(request["configs"])), context


def test_random_requests_equal_the_oracle(client):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(RANDOM_REQUESTS):
        args, kwargs, request = random_case(rng)
        context = f"seed {seed}, request {i}: {request}"
        layout = client.layout(*args, timeout=TIMEOUT_S, **kwargs)
        assert_equals_oracle(layout, request, context)


@pytest.mark.parametrize("settings", SETTINGS,
                         ids=lambda s: "-".join(str(v) for v in s.values()))
def test_every_gemini_setting_equals_the_oracle(client, settings):
    """Two degrees, one oversize tensor (3000 > chunk 2048 at dp 2), a
    zero size and a frozen parameter: every part of both ranks moves with
    some setting."""
    params = [(1000, 2), (3000, 2), (0, 2), (500, 4), (700, 4), (64, 2)]
    frozen = [False, False, False, True, False, False]
    configs = {2: {"chunk_size": 2048, "keep_gathered": False},
               4: {"chunk_size": 1000, "keep_gathered": True}}
    layout = client.layout(params, configs=configs, frozen=frozen,
                           timeout=TIMEOUT_S, **settings)
    request = {"search": {"numels": [p[0] for p in params],
                          "dp_degrees": [p[1] for p in params],
                          "search_range_m": 0, "search_interval": 1},
               "configs": [{"dp_degree": d, **c} for d, c in configs.items()],
               "frozen": frozen, "gemini": gemini_json(settings)}
    assert_equals_oracle(layout, request)


@pytest.mark.parametrize("cluster", [
    {"device_memory_bytes": 10**6},
    {"device_memory_bytes": 40_000, "reserve_bytes": 1000, "margin": 0.0},
    {"device_memory_bytes": 40_000, "reserve_bytes": 1000, "margin": 0.25},
    {"device_memory_bytes": 10**6, "margin": 0.5, "host_memory_bytes": 10,
     "gpus_per_node": 2},
    {"device_memory_bytes": 1000, "host_memory_bytes": 10**9,
     "gpus_per_node": 8}], ids=lambda c: "-".join(map(str, c.values())))
def test_a_cluster_gets_the_servers_verdict(client, cluster):
    """Layout with a cluster: the verdict (fits, tight, headroom, margin,
    why_not) equals the oracle's, and the table renders its words."""
    params = [(1000, 2), (3000, 2), (500, 4), (700, 4), (64, 2)]
    configs = {2: {"chunk_size": 2048, "keep_gathered": False},
               4: {"chunk_size": 1000, "keep_gathered": False}}
    layout = client.layout(params, configs=configs, cluster=cluster,
                           timeout=TIMEOUT_S)
    request = {"search": {"numels": [p[0] for p in params],
                          "dp_degrees": [p[1] for p in params],
                          "search_range_m": 0, "search_interval": 1},
               "configs": [{"dp_degree": d, **c} for d, c in configs.items()],
               "cluster": cluster}
    assert_equals_oracle(layout, request)
    assert layout.fits == layout.verdict.fits
    assert layout.verdict.words in layout.table()
    assert "verdict" not in layout_json(client.layout(
        params, configs=configs, timeout=TIMEOUT_S))


def test_searched_layout_lays_out_the_search(client):
    """The search's configs given back lay out the same chunks; a tensor
    that the 3-sigma filter leaves out of the sweep gets a chunk of its
    own size. By hand: mean 154,168, std about 490,000, so 2,500,000 is
    filtered; the sweep then starts at 60,416 and ends below 2**18 + 60,416,
    every candidate below 2,500,000 (a multiple of 4: not rounded)."""
    numels = [60_000] * 20 + [2_500_000, 7, 0, 33]
    searched = client.layout(numels, 0.25, 512, 0, dp_degree=4,
                             timeout=TIMEOUT_S)
    assert_equals_oracle(searched, {"search": {
        "numels": numels, "dp_degrees": [4], "search_range_m": 0.25,
        "search_interval": 512, "min_chunk_size_m": 0}})
    given = client.layout(numels, configs=searched.search.config_dict,
                          dp_degree=4, timeout=TIMEOUT_S)
    assert given.search is None
    assert given.groups == searched.groups
    assert given.most_loaded_rank == searched.most_loaded_rank
    assert searched.groups[0].chunk_size < 2_500_000
    assert [(c.size, c.used) for c in searched.groups[0].chunks
            if c.first_param == 20] == [(2_500_000, 2_500_000)]


def test_defaults_are_geminiplugins(client):
    numels = [5000, 300, 70000]
    layout = client.layout(numels, 0.0625, 512, 0, dp_degree=2,
                           timeout=TIMEOUT_S)
    request = {"search": {"numels": numels, "dp_degrees": [2],
                          "search_range_m": 0.0625, "search_interval": 512,
                          "min_chunk_size_m": 0}}
    assert_equals_oracle(layout, request)
    assert layout.most_loaded_rank.master_bytes > 0  # master weights on
    assert layout.most_loaded_rank.grad_bytes == 0   # reused fp16 chunk
    assert layout.most_loaded_rank.pinned_host_bytes > 0  # pin memory on


@pytest.mark.parametrize("kind", INVALID_KINDS)
def test_refusals_agree_with_the_oracle(client, kind):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(INVALID_REQUESTS_PER_KIND):
        args, kwargs, request, field = invalid_case(rng, kind)
        context = f"seed {seed}, request {i}: {request}"
        error = oracle_error(request)
        assert error is not None and error.startswith(field), (error,
                                                               context)
        with pytest.raises(chunkplan.InvalidArgumentError) as raised:
            client.layout(*args, timeout=TIMEOUT_S, **kwargs)
        assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert raised.value.message.startswith(field), (raised.value,
                                                        context)


def test_search_errors_come_from_the_server(client):
    """The search part's fields are named inside the LayoutRequest."""
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.layout([1, 2], 1, 0, timeout=TIMEOUT_S)
    assert raised.value.message.startswith("search.search_interval")
    request = {"search": {"numels": [1, 2], "search_range_m": 1,
                          "search_interval": 0}}
    assert oracle_error(request).startswith("search:")
