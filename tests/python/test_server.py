"""The client against the real chunkplan-server on a free loopback port: the
tuple equals the oracle's (dict order included) on fresh random requests and
on ColossalAI's GPT-2 case, and the server's errors arrive typed."""

import random
import subprocess

import grpc
import pytest

import chunkplan
from oracle_cases import (GPT2_CHUNK_SIZE, HF_CONFIGS, gpt2_example_numels,
                          oracle_error, oracle_tuple, random_case,
                          random_seed)
import models as oracle_models  # noqa: E402  (tests/oracle/models)
from conftest import HELD_NUMEL
from server_process import ServerProcess
from torch_modules import module_of_numels

# Bound on every call, so that a stuck server fails the test.
TIMEOUT_S = 60
RANDOM_REQUESTS = 400


@pytest.fixture(scope="module")
def client(server):
    with chunkplan.Client(server.target) as c:
        yield c


def assert_same_answer(got, expected, context=""):
    """Equal tuples, dict order and value types included."""
    config_dict, total, waste = got
    assert list(config_dict.items()) == list(expected[0].items()), context
    assert (total, waste) == expected[1:], context
    assert type(total) is int and type(waste) is int
    for degree, config in config_dict.items():
        assert type(degree) is int
        assert type(config["chunk_size"]) is int
        assert type(config["keep_gathered"]) is bool


@pytest.mark.parametrize("dp", [1, 4])
def test_colossalai_gpt2_published_chunk_size(client, dp):
    numels = gpt2_example_numels()
    got = client.search_chunk_configuration(
        numels, 1, 128, 0, timeout=TIMEOUT_S, dp_degree=dp)
    assert got[0] == {dp: {"chunk_size": GPT2_CHUNK_SIZE,
                           "keep_gathered": False}}
    assert got[1] == sum(numels)
    request = {"numels": numels, "dp_degrees": [dp], "search_range_m": 1,
               "search_interval": 128, "min_chunk_size_m": 0}
    assert_same_answer(got, oracle_tuple(request))


def test_colossalai_gpt2_from_its_config(server):
    numels = oracle_models.describe(HF_CONFIGS / "colossalai-gpt2-test.json").numels
    config_dict, _, _ = chunkplan.search_chunk_configuration(
        numels, 1, 128, 0, target=server.target, timeout=TIMEOUT_S)
    assert config_dict == {1: {"chunk_size": GPT2_CHUNK_SIZE,
                               "keep_gathered": False}}


def test_random_requests_equal_the_oracle(client):
    seed = random_seed()
    rng = random.Random(seed)
    for i in range(RANDOM_REQUESTS):
        params, kwargs, request = random_case(rng)
        context = f"seed {seed}, request {i}: {request}"
        expected = oracle_tuple(request)
        got = client.search_chunk_configuration(params, timeout=TIMEOUT_S,
                                                **kwargs)
        assert_same_answer(got, expected, context)


def test_llama_2_7b_at_dp_8_equals_the_oracle(client):
    """A real model at GeminiPlugin's default range and minimum, with the
    hidden size as the interval."""
    numels = oracle_models.describe(HF_CONFIGS / "llama-2-7b.json").numels
    got = client.search_chunk_configuration(numels, 32, 4096,
                                            timeout=TIMEOUT_S, dp_degree=8)
    expected = oracle_tuple({"numels": numels, "dp_degrees": [8],
                             "search_range_m": 32, "search_interval": 4096})
    assert_same_answer(got, expected)


def test_kept_gathered_group_comes_first(client):
    # dp 4 totals 11048 < round(0.05 * 2**20): kept gathered, listed first.
    params = [(1000, 1), (5000, 2), (300, 1), (70000, 2), (2048, 4),
              (4096, 2), (100000, 1), (9000, 4)]
    got = client.search_chunk_configuration(params, 0.5, 64, 0.05,
                                            timeout=TIMEOUT_S)
    expected = oracle_tuple({
        "numels": [p[0] for p in params], "dp_degrees": [p[1] for p in params],
        "search_range_m": 0.5, "search_interval": 64,
        "min_chunk_size_m": 0.05})
    assert list(got[0])[0] == 4 and got[0][4]["keep_gathered"]
    assert_same_answer(got, expected)


def test_module_equals_its_numels(client):
    numels = gpt2_example_numels()
    module = module_of_numels(numels + [123456], ignored={len(numels)})
    got = client.search_chunk_configuration(module, 1, 128, 0,
                                            timeout=TIMEOUT_S, dp_degree=2)
    assert got[0] == {2: {"chunk_size": GPT2_CHUNK_SIZE,
                          "keep_gathered": False}}
    assert got[1] == sum(numels)  # the ignored parameter is not counted


@pytest.mark.parametrize("engine", ["cpu_sweep", "cpu_plateau"])
def test_engines_named_and_equal(client, engine):
    numels = gpt2_example_numels()
    result = client.search(numels, 1, 128, 0, timeout=TIMEOUT_S,
                           engine=engine)
    assert result.engine == engine.upper()
    assert result.candidates == 1 + (2**20) // 128
    assert result.as_tuple()[0] == {1: {"chunk_size": GPT2_CHUNK_SIZE,
                                        "keep_gathered": False}}


def test_invalid_argument_names_the_field(client):
    params = [(1, 1), (2, 1), (3, 1), (4, 0)]
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.search_chunk_configuration(params, 1, 128, timeout=TIMEOUT_S)
    assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.message.startswith("dp_degrees[3]"), raised.value
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.search_chunk_configuration([1, 2], 1, 0, timeout=TIMEOUT_S)
    assert "search_interval" in raised.value.message
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.search_chunk_configuration([], 1, 128, timeout=TIMEOUT_S)
    assert "numels" in raised.value.message
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        client.search_chunk_configuration([1], float("nan"), 128,
                                          timeout=TIMEOUT_S)
    assert "search_range_m" in raised.value.message


def test_rejections_agree_with_the_oracle(client):
    """What the server rejects, the oracle rejects too."""
    for request in ({"numels": [1, 2, 3, 4], "dp_degrees": [1, 1, 1, 0],
                     "search_range_m": 1, "search_interval": 128},
                    {"numels": [1], "search_range_m": -1,
                     "search_interval": 128}):
        assert oracle_error(request)
        params = list(zip(request["numels"],
                          request.get("dp_degrees", [1] * 4)))
        with pytest.raises(chunkplan.InvalidArgumentError):
            client.search_chunk_configuration(
                params, request["search_range_m"],
                request["search_interval"], timeout=TIMEOUT_S)


def test_resource_exhausted_beyond_the_servers_limit(limited_server):
    with chunkplan.Client(limited_server.target) as client:
        ok = client.search_chunk_configuration(list(range(1, 9)), 0, 8,
                                               timeout=TIMEOUT_S)
        assert ok[1] == sum(range(1, 9))
        with pytest.raises(chunkplan.ResourceExhaustedError) as raised:
            client.search_chunk_configuration(list(range(1, 10)), 0, 8,
                                              timeout=TIMEOUT_S)
    assert raised.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert raised.value.message


def test_deadline_exceeded(held_server):
    """A search that the held server's engines hold until its call is
    stopped (HELD_NUMEL among its sizes, swept with the filter off) meets
    its 10 ms deadline however fast the machine."""
    numels = [HELD_NUMEL] + [5000] * 999
    with chunkplan.Client(held_server.target) as client:
        with pytest.raises(chunkplan.DeadlineExceededError) as raised:
            client.search_chunk_configuration(numels, 4, 1, 0, False,
                                              timeout=0.01,
                                              engine="cpu_sweep")
    assert raised.value.code == grpc.StatusCode.DEADLINE_EXCEEDED


def cuda_usable(binary):
    """Whether `chunkplan-server --version` lists a CUDA engine that can run
    here (an unusable one is followed by "(not usable here: ...)")."""
    out = subprocess.run([binary, "--version"], capture_output=True,
                         text=True, timeout=TIMEOUT_S, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("engines:"))
    return "CUDA" in line.split() and "CUDA (not usable here" not in line


def test_cuda_without_a_usable_engine_is_failed_precondition(server, client):
    if cuda_usable(server.binary):
        pytest.skip("this chunkplan-server can run the CUDA engine here")
    with pytest.raises(chunkplan.FailedPreconditionError) as raised:
        client.search_chunk_configuration([1, 2, 3], 1, 128,
                                          timeout=TIMEOUT_S, engine="cuda")
    assert raised.value.code == grpc.StatusCode.FAILED_PRECONDITION


def test_unix_socket(server, tmp_path):
    path = tmp_path / "chunkplan.sock"
    with ServerProcess(server.binary, "--threads=1",
                       listen=f"unix:{path}") as server:
        assert server.target == f"unix:{path}"
        config_dict, _, _ = chunkplan.search_chunk_configuration(
            gpt2_example_numels(), 1, 128, 0, target=server.target,
            timeout=TIMEOUT_S)
    assert config_dict[1]["chunk_size"] == GPT2_CHUNK_SIZE
