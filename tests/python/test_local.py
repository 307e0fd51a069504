"""chunkplan.LocalClient and `python3 -m chunkplan ... --local`: answers
without a server, through the chunkplan command line in a child process.
Every answer equals the oracle's (tests/oracle/) on fresh random requests;
failures arrive as the same typed errors; the binary is found as
chunkplan.local documents. CHUNKPLAN_CLI names the built command line (the
ctest entry sets it); without it the tests skip, saying "chunkplan not
built"."""

import json
import os
import random
import subprocess
import sys

import grpc
import pytest

import chunkplan
from chunkplan import local
from frontier_cases import frontier_json, oracle_frontier
from frontier_cases import random_case as random_frontier_case
from layout_cases import layout_json, oracle_layout, plain
from layout_cases import random_case as random_layout_case
from oracle_cases import HF_CONFIGS, oracle_tuple, random_case, random_seed
import models as oracle_models  # noqa: E402  (tests/oracle/models)

TIMEOUT_S = 60
RANDOM_REQUESTS = 30
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")


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


def run(*args, env=None):
    return subprocess.run([sys.executable, "-m", "chunkplan", *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S,
                          env=env)


def test_search_command_local_json_equals_the_oracle(cli):
    result = run("search", "--hf-config", GPT2_TEST, "--local", "--cli", cli,
                 "--search-range-m", "1", "--search-interval", "128",
                 "--min-chunk-size-m", "0", "--json")
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    expected = oracle_tuple({
        "numels": oracle_models.describe(GPT2_TEST).numels, "dp_degrees": [1],
        "search_range_m": 1, "search_interval": 128, "min_chunk_size_m": 0,
        "filter_exlarge_params": True})
    assert [int(c["chunk_size"]) for c in answer["configs"]] == [
        c["chunk_size"] for c in expected[0].values()]
    # ColossalAI's own test expects 527872 for this model.
    assert int(answer["configs"][0]["chunk_size"]) == 527872


@pytest.mark.parametrize("command", ["layout", "frontier"])
def test_layout_and_frontier_commands_run_locally(cli, command):
    env = dict(os.environ, **{local.CLI_ENV: cli})
    result = run(command, "--hf-config", GPT2_TEST, "--local",
                 "--search-range-m", "0.25", "--search-interval", "512",
                 "--min-chunk-size-m", "0", env=env)
    assert result.returncode == 0, result.stderr
    assert "model           gpt2 (GPT2LMHeadModel)" in result.stdout


@pytest.mark.parametrize("flags", [["--server", "localhost:1"], ["--tls"],
                                   ["--tls-ca", "ca.pem"]])
def test_local_takes_no_server_flag(flags):
    result = run("search", "--hf-config", GPT2_TEST, "--local", *flags)
    assert result.returncode == 2
    assert result.stderr.startswith("INVALID_ARGUMENT: --local answers here")


def test_cli_without_local_is_a_usage_error():
    result = run("search", "--hf-config", GPT2_TEST, "--cli", "/bin/true")
    assert result.returncode == 2
    assert result.stderr == "INVALID_ARGUMENT: --cli goes with --local\n"


def test_missing_cli_is_not_found(tmp_path):
    env = dict(os.environ, **{local.CLI_ENV: str(tmp_path / "none")})
    result = run("search", "--hf-config", GPT2_TEST, "--local", env=env)
    assert result.returncode == 1
    assert result.stderr.startswith(f"NOT_FOUND: {local.CLI_ENV}: ")
