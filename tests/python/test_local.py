"""chunkplan.LocalClient: answers without a server, through the chunkplan
binary in a child process. Every answer equals the oracle's (tests/oracle/)
on fresh random requests; failures arrive as the same typed errors; the
binary is found as chunkplan.local documents (test_binary.py: the console
script's search). CHUNKPLAN_CLI names the built binary (the ctest entry
sets it); without it the tests skip, saying "chunkplan not built"."""

import os
import random

import grpc
import pytest

import chunkplan
from chunkplan import local
from frontier_cases import frontier_json, oracle_frontier
from frontier_cases import random_case as random_frontier_case
from layout_cases import layout_json, oracle_layout, plain
from layout_cases import random_case as random_layout_case
from oracle_cases import oracle_tuple, random_case, random_seed

TIMEOUT_S = 60
RANDOM_REQUESTS = 30


@pytest.fixture(scope="module")
def cli():
    path = os.environ.get(local.CLI_ENV, "")
    if not os.access(path, os.X_OK):
        pytest.skip(f"chunkplan not built ({local.CLI_ENV}={path!r})")
    return path


@pytest.fixture(scope="module")
def client(cli):
    with chunkplan.LocalClient(cli) as c:
        yield c


def test_searches_equal_the_oracle(client):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(RANDOM_REQUESTS):
        params, kwargs, request = random_case(rng)
        got = client.search_chunk_configuration(params, timeout=TIMEOUT_S,
                                                **kwargs)
        expected = oracle_tuple(request)
        assert list(got[0].items()) == list(expected[0].items()), (seed, i)
        assert got[1:] == expected[1:], (seed, i)


def test_layouts_equal_the_oracle(client):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(RANDOM_REQUESTS):
        args, kwargs, request = random_layout_case(rng)
        layout = client.layout(*args, timeout=TIMEOUT_S, **kwargs)
        assert layout_json(layout) == plain(oracle_layout(request)), (seed, i)


@pytest.mark.parametrize("objective", ["seed_waste", "layout_padding"])
def test_frontiers_equal_the_oracle(client, objective):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(RANDOM_REQUESTS // 3):
        args, kwargs, request = random_frontier_case(rng, objective)
        frontier = client.frontier(*args, timeout=TIMEOUT_S, **kwargs)
        assert frontier_json(frontier) == plain(oracle_frontier(request)), (
            seed, i)


def test_refusals_are_typed(client):
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.search([1, 2, (3, 0)], 1, 128)
    assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "dp_degrees[2]" in raised.value.message


def test_cli_is_found_by_variable_and_refused_when_wrong(cli, monkeypatch,
                                                         tmp_path):
    monkeypatch.setenv(local.CLI_ENV, cli)
    assert local.find_cli() == cli
    assert local.find_cli(cli) == cli
    monkeypatch.setenv(local.CLI_ENV, str(tmp_path / "absent"))
    with pytest.raises(local.CliNotFoundError) as raised:
        local.find_cli()
    assert local.CLI_ENV in str(raised.value)


def test_describe_is_the_binarys(client):
    model = chunkplan.models.describe(
        {"model_type": "gpt2", "n_layer": 2, "n_embd": 128, "n_head": 4,
         "vocab_size": 50257, "n_positions": 1024}, client=client)
    assert model.architecture == "GPT2LMHeadModel"
    assert model.numels[:2] == [50257 * 128, 1024 * 128]
