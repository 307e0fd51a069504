"""chunkplan.request: the seed's arguments on the wire, and a response as the
seed's tuple. No server needed; modules are real torch ones."""

import pathlib
import re

import grpc
import pytest

import chunkplan
from chunkplan import request as rq
from chunkplan.v1 import chunk_search_pb2 as pb
from torch_modules import module_of_numels


def test_numels_share_the_keyword_degree():
    request = rq.build_request([5, 6, 7], 1.5, 128, dp_degree=4)
    assert list(request.numels) == [5, 6, 7]
    assert list(request.dp_degrees) == [4]  # one value: shared by all
    assert request.search_range_m == 1.5
    assert request.search_interval == 128
    assert request.HasField("min_chunk_size_m")
    assert request.min_chunk_size_m == 32.0
    assert request.HasField("filter_exlarge_params")
    assert request.filter_exlarge_params is True
    assert request.engine == pb.ENGINE_AUTO


def test_degree_one_travels_as_empty():
    request = rq.build_request([5, 6], 1, 128, 0.5, False)
    assert list(request.dp_degrees) == []
    assert request.min_chunk_size_m == 0.5
    assert request.filter_exlarge_params is False


def test_pairs_and_mixes_carry_their_own_degrees():
    request = rq.build_request([(5, 2), 6, (7, 8), [9, 2]], 1, 64,
                               dp_degree=3)
    assert list(request.numels) == [5, 6, 7, 9]
    assert list(request.dp_degrees) == [2, 3, 8, 2]
    request = rq.build_request([(5, 2), (6, 2)], 1, 64)
    assert list(request.dp_degrees) == [2]


def test_module_parameters_in_order_ignored_ones_skipped():
    module = module_of_numels([10, 20, 30, 40], ignored={1})
    request = rq.build_request(module, 1, 64, dp_degree=8)
    assert list(request.numels) == [10, 30, 40]
    assert list(request.dp_degrees) == [8]


def test_generators_and_numpy_style_ints():
    class Index:  # numpy integers implement __index__
        def __init__(self, value):
            self.value = value

        def __index__(self):
            return self.value

    request = rq.build_request((Index(n) for n in (3, 4)), 1, Index(16))
    assert list(request.numels) == [3, 4]
    assert request.search_interval == 16


@pytest.mark.parametrize("engine, value", [
    ("auto", pb.ENGINE_AUTO), ("cpu_sweep", pb.ENGINE_CPU_SWEEP),
    ("CPU_PLATEAU", pb.ENGINE_CPU_PLATEAU), ("ENGINE_CUDA", pb.ENGINE_CUDA),
    (pb.ENGINE_CPU_SWEEP, pb.ENGINE_CPU_SWEEP),
])
def test_engine_names(engine, value):
    assert rq.build_request([1], 1, 1, engine=engine).engine == value


def test_values_the_server_judges_are_sent():
    """Degree 0, interval 0, an empty list, NaN: the server's to reject,
    with its own message."""
    request = rq.build_request([(1, 0)], float("nan"), 0,
                               min_chunk_size_m=float("-inf"))
    assert list(request.dp_degrees) == [0]
    assert request.search_interval == 0
    assert request.search_range_m != request.search_range_m
    assert list(rq.build_request([], 1, 1).numels) == []


@pytest.mark.parametrize("args, kwargs, where", [
    (([-1], 1, 64), {}, "numels[0]"),
    (([1, 2**64], 1, 64), {}, "numels[1]"),
    (([1, 2.5], 1, 64), {}, "numels[1]"),
    (([True], 1, 64), {}, "numels[0]"),
    (([(1, 2**32)], 1, 64), {}, "dp_degrees[0]"),
    (([(1, 2, 3)], 1, 64), {}, "params[0]"),
    (([1], 1, 64), {"dp_degree": -2}, "dp_degree"),
    (([1], 1, -64), {}, "search_interval"),
    (([1], 1, 64.0), {}, "search_interval"),
    (([1], "1", 64), {}, "search_range_m"),
    (([1], 1, 64, None), {}, "min_chunk_size_m"),
    ((7, 1, 64), {}, "model_or_params"),
    (("1234", 1, 64), {}, "model_or_params"),
    (([1], 1, 64), {"engine": "gpu"}, "engine"),
    (([1], 1, 64), {"engine": 99}, "engine"),
])
def test_what_cannot_be_sent_is_invalid_argument(args, kwargs, where):
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        rq.build_request(*args, **kwargs)
    assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.message.startswith(where + ":")
    assert isinstance(raised.value, ValueError)


def test_config_tuple_keeps_the_response_order_and_plain_types():
    response = pb.ChunkSearchResponse(
        configs=[pb.ChunkConfig(dp_degree=4, chunk_size=1000,
                                keep_gathered=True),
                 pb.ChunkConfig(dp_degree=1, chunk_size=2**40,
                                keep_gathered=False)],
        total_param_size=2**63 + 5, min_chunk_waste=7)
    config_dict, total, waste = rq.config_tuple(response)
    assert list(config_dict.items()) == [
        (4, {"chunk_size": 1000, "keep_gathered": True}),
        (1, {"chunk_size": 2**40, "keep_gathered": False})]
    assert (total, waste) == (2**63 + 5, 7)
    for degree, config in config_dict.items():
        assert type(degree) is int
        assert type(config["chunk_size"]) is int
        assert type(config["keep_gathered"]) is bool
        assert list(config) == ["chunk_size", "keep_gathered"]
    assert type(total) is int and type(waste) is int


def test_version_matches_the_project():
    root = pathlib.Path(__file__).resolve().parents[2]
    cmake = (root / "CMakeLists.txt").read_text()
    pyproject = (root / "client" / "python" / "pyproject.toml").read_text()
    version = re.search(r"project\(chunkplan VERSION ([0-9.]+)", cmake)[1]
    assert chunkplan.__version__ == version
    assert re.search(r'(?m)^version = "([0-9.]+)"$', pyproject)[1] == version
