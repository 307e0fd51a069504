"""Client.frontier and Client.layout(objective=...) against the real
chunkplan-server: every field of the typed Frontier equals
tests/oracle/layout_oracle.py's frontier(), and the layout of an objective
its layout(), on fresh random small requests for each objective; what the
server refuses (given configs) it refuses naming the field; CPU_PLATEAU
serves every objective."""

import random

import grpc
import pytest

import chunkplan
from chunkplan.layout_request import build_layout_request
from frontier_cases import (OBJECTIVES, frontier_json, objective_json,
                            oracle_frontier, oracle_frontier_error,
                            random_case)
from layout_cases import layout_json, oracle_error, oracle_layout, plain
from oracle_cases import random_seed

# Bound on every call, so that a stuck server fails the test.
TIMEOUT_S = 60
RANDOM_REQUESTS_PER_OBJECTIVE = 100
# Two degrees, a zero size: small enough to reason about, enough to refuse.
PARAMS = [(1000, 2), (3000, 2), (0, 2), (500, 4), (700, 4)]
CONFIGS = {2: {"chunk_size": 2048, "keep_gathered": False},
           4: {"chunk_size": 1000, "keep_gathered": True}}


@pytest.fixture(scope="module")
def client(server):
    with chunkplan.Client(server.target) as c:
        yield c


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_random_frontiers_equal_the_oracle(client, objective):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(RANDOM_REQUESTS_PER_OBJECTIVE):
        args, kwargs, request = random_case(rng, objective)
        context = f"seed {seed}, request {i}: {kwargs}, {request}"
        frontier = client.frontier(*args, timeout=TIMEOUT_S, **kwargs)
        expected = plain(oracle_frontier(request))
        assert frontier_json(frontier) == expected, context
        assert frontier.best == frontier.points[-1], context
        # AUTO: the exact CPU engine, CPU_PLATEAU, for every objective.
        assert frontier.engine == ("CPU_SWEEP" if kwargs["engine"] ==
                                   "cpu_sweep" else "CPU_PLATEAU"), context


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_layouts_of_an_objective_equal_the_oracle(client, objective):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(RANDOM_REQUESTS_PER_OBJECTIVE):
        args, kwargs, request = random_case(rng, objective)
        context = f"seed {seed}, request {i}: {kwargs}, {request}"
        layout = client.layout(*args, timeout=TIMEOUT_S, **kwargs)
        assert layout_json(layout) == plain(oracle_layout(request)), context


def test_objective_names_are_checked_here():
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        build_layout_request([1, 2], 1, 512, objective="least_waste")
    assert raised.value.message == (
        "objective: expected one of seed_waste, layout_padding, "
        "peak_rank_bytes, got 'least_waste'")
    for i, name in enumerate(OBJECTIVES):
        for spelling in (name, name.upper(), objective_json(name), i):
            assert build_layout_request([1], 1, 512,
                                        objective=spelling).objective == i


def test_frontier_of_given_configs_is_refused(client):
    request = build_layout_request(PARAMS, configs=CONFIGS)
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.frontier_request(request, timeout=TIMEOUT_S)
    assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.message.startswith("configs: ")
    assert oracle_frontier_error({
        "search": {"numels": [p[0] for p in PARAMS],
                   "dp_degrees": [p[1] for p in PARAMS],
                   "search_range_m": 0, "search_interval": 1},
        "configs": [{"dp_degree": d, **c} for d, c in CONFIGS.items()],
    }).startswith("configs: ")


@pytest.mark.parametrize("objective", OBJECTIVES[1:])
def test_layout_of_given_configs_with_an_objective_is_refused(client,
                                                              objective):
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.layout(PARAMS, configs=CONFIGS, objective=objective,
                      timeout=TIMEOUT_S)
    assert raised.value.message.startswith("objective: ")
    assert oracle_error({
        "search": {"numels": [p[0] for p in PARAMS],
                   "dp_degrees": [p[1] for p in PARAMS],
                   "search_range_m": 0, "search_interval": 1},
        "configs": [{"dp_degree": d, **c} for d, c in CONFIGS.items()],
        "objective": objective_json(objective)}).startswith("objective: ")


@pytest.mark.parametrize("objective", OBJECTIVES[1:])
def test_plateau_serves_a_layout_objective(client, objective):
    """Issue 29: CPU_PLATEAU walks a layout objective's plateaus; its
    frontier is the oracle's brute force, as CPU_SWEEP's is."""
    numels = [60_000] * 5 + [7, 33, 90_000, 0, 250_000]
    request = {"search": {"numels": numels, "dp_degrees": [4],
                          "search_range_m": 0.25, "search_interval": 512,
                          "min_chunk_size_m": 0},
               "objective": objective_json(objective)}
    expected = plain(oracle_frontier(request))
    for engine in ("auto", "cpu_sweep", "cpu_plateau"):
        frontier = client.frontier(numels, 0.25, 512, 0, dp_degree=4,
                                   objective=objective, engine=engine,
                                   timeout=TIMEOUT_S)
        assert frontier_json(frontier) == expected, engine


def test_plateau_serves_the_seeds_frontier(client):
    """With the seed's objective every engine but CUDA serves the same
    frontier."""
    numels = [60_000] * 5 + [7, 33, 90_000]
    request = {"search": {"numels": numels, "dp_degrees": [4],
                          "search_range_m": 0.25, "search_interval": 512,
                          "min_chunk_size_m": 0}}
    expected = plain(oracle_frontier(request))
    for engine in ("auto", "cpu_sweep", "cpu_plateau"):
        frontier = client.frontier(numels, 0.25, 512, 0, dp_degree=4,
                                   engine=engine, timeout=TIMEOUT_S)
        assert frontier_json(frontier) == expected, engine
