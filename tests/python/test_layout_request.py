"""chunkplan.layout_request: Client.layout's arguments on the wire, and
chunkplan.layout_result: a LayoutResponse as typed values. No server
needed; the modules are real torch ones (Debian's python3-torch)."""

import grpc
import pytest

import chunkplan
from chunkplan import layout_request as lr
from chunkplan.v1 import chunk_search_pb2 as pb
from torch_modules import require_torch


def test_search_part_as_search_sends_it():
    request = lr.build_layout_request([5, (6, 2), 7], 1.5, 128, 0.5, False,
                                      dp_degree=4, engine="cpu_sweep")
    assert list(request.search.numels) == [5, 6, 7]
    assert list(request.search.dp_degrees) == [4, 2, 4]
    assert request.search.search_range_m == 1.5
    assert request.search.search_interval == 128
    assert request.search.min_chunk_size_m == 0.5
    assert request.search.filter_exlarge_params is False
    assert request.search.engine == pb.ENGINE_CPU_SWEEP
    assert list(request.configs) == [] and list(request.frozen) == []


def test_defaults_are_geminiplugins_and_all_set():
    gemini = lr.build_layout_request([1], 1, 64).gemini
    assert gemini.precision == pb.PRECISION_FP16
    assert gemini.HasField("master_weights") and gemini.master_weights
    assert gemini.gradient_accumulation is False
    assert gemini.HasField("pin_memory") and gemini.pin_memory
    assert gemini.optimizer == pb.OPTIMIZER_ADAM


def test_settings_reach_the_message():
    gemini = lr.build_layout_request(
        [1], 1, 64, precision="BF16", master_weights=False,
        gradient_accumulation=True, pin_memory=False,
        optimizer="OPTIMIZER_NONE").gemini
    assert gemini.precision == pb.PRECISION_BF16
    assert gemini.HasField("master_weights") and not gemini.master_weights
    assert gemini.gradient_accumulation is True
    assert gemini.HasField("pin_memory") and not gemini.pin_memory
    assert gemini.optimizer == pb.OPTIMIZER_NONE


def test_config_dict_and_tuples_keep_their_order():
    by_dict = lr.build_layout_request(
        [(1, 4), (2, 1)], configs={4: {"chunk_size": 8, "keep_gathered": True},
                                   1: {"chunk_size": 3}})
    by_tuples = lr.build_layout_request(
        [(1, 4), (2, 1)], configs=[(4, 8, True), (1, 3)])
    for request in (by_dict, by_tuples):
        assert [(c.dp_degree, c.chunk_size, c.keep_gathered)
                for c in request.configs] == [(4, 8, True), (1, 3, False)]
        # Nothing is swept: range 0 at interval 1.
        assert request.search.search_range_m == 0
        assert request.search.search_interval == 1


def test_what_the_server_judges_is_sent():
    """A second config for a degree, size 0, frozen of the wrong length."""
    request = lr.build_layout_request([1, 2], configs=[(1, 0), (1, 0)],
                                      frozen=[True])
    assert len(request.configs) == 2
    assert list(request.frozen) == [True]


def test_empty_configs_mean_search():
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        lr.build_layout_request([1], configs={})
    assert raised.value.message.startswith("search_range_m:")
    request = lr.build_layout_request([1], 2, 64, configs=[])
    assert list(request.configs) == []
    assert request.search.search_interval == 64


@pytest.mark.parametrize("args, kwargs, where", [
    (([1],), {}, "search_range_m"),
    (([1], 1), {}, "search_interval"),
    (([1],), {"configs": [(1, -1)]}, "configs[0].chunk_size"),
    (([1],), {"configs": [(1, 8), (2**32, 8)]}, "configs[1].dp_degree"),
    (([1],), {"configs": [(1, 8, "no")]}, "configs[0].keep_gathered"),
    (([1],), {"configs": [(1,)]}, "configs[0]"),
    (([1],), {"configs": {1: 8}}, "configs[0]"),
    (([1],), {"configs": {1: {"size": 8}}}, "configs[0]"),
    (([1],), {"configs": "1:8"}, "configs"),
    (([1, 2], 1, 64), {"frozen": [False, 1]}, "frozen[1]"),
    (([1], 1, 64), {"frozen": 3}, "frozen"),
    (([1], 1, 64), {"precision": "fp32"}, "precision"),
    (([1], 1, 64), {"optimizer": "sgd"}, "optimizer"),
    (([1], 1, 64), {"master_weights": "yes"}, "master_weights"),
    (([1], 1, 64), {"pin_memory": None}, "pin_memory"),
    (([-1], 1, 64), {}, "numels[0]"),
])
def test_what_cannot_be_sent_is_invalid_argument(args, kwargs, where):
    with pytest.raises(chunkplan.InvalidArgumentError) as raised:
        lr.build_layout_request(*args, **kwargs)
    assert raised.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert raised.value.message.startswith(where + ":"), raised.value


def test_frozen_from_a_real_module():
    torch = require_torch()
    model = torch.nn.Sequential(torch.nn.Linear(4, 3),   # 12, 3
                                torch.nn.Linear(3, 2))   # 6, 2
    model[0].bias.requires_grad_(False)
    model[1].weight.requires_grad_(False)
    request = lr.build_layout_request(model, 1, 64, dp_degree=2)
    assert list(request.search.numels) == [12, 3, 6, 2]
    assert list(request.frozen) == [False, True, True, False]
    model.requires_grad_(True)
    request = lr.build_layout_request(model, 1, 64)
    assert list(request.frozen) == []  # none frozen travels as empty
    request = lr.build_layout_request(model, 1, 64,
                                      frozen=[True, False, False, False])
    assert list(request.frozen) == [True, False, False, False]


def test_response_as_typed_values():
    response = pb.LayoutResponse(
        groups=[pb.GroupLayout(
            dp_degree=4, chunk_size=2**40, keep_gathered=False,
            chunks=[pb.ChunkLayout(size=2**40, used=5, first_param=2,
                                   num_params=3)], padding=2**40 - 5)],
        layout_padding=2**40 - 5,
        most_loaded_rank=pb.RankMemory(param_bytes=1, master_bytes=2,
                                       grad_bytes=3, optimizer_bytes=4,
                                       frozen_bytes=5, device_bytes=15,
                                       pinned_host_bytes=2**63),
        least_loaded_rank=pb.RankMemory(device_bytes=7),
        gathered_chunk_bytes=2**41)
    layout = chunkplan.Layout.from_response(response)
    assert layout.search is None
    assert layout.groups == (chunkplan.GroupLayout(
        4, 2**40, False, (chunkplan.Chunk(2**40, 5, 2, 3),), 2**40 - 5),)
    assert layout.groups[0].chunks[0].padding == 2**40 - 5
    assert layout.most_loaded_rank == chunkplan.RankMemory(1, 2, 3, 4, 5, 15,
                                                           2**63)
    assert layout.least_loaded_rank.device_bytes == 7
    assert layout.least_loaded_rank.param_bytes == 0
    assert layout.gathered_chunk_bytes == 2**41
    assert layout.config_dict == {4: {"chunk_size": 2**40,
                                      "keep_gathered": False}}
    assert layout.most_loaded_rank.gib("pinned_host_bytes") == 2**33
    response.search.configs.add(dp_degree=4, chunk_size=2**40)
    response.search.total_param_size = 5
    with_search = chunkplan.Layout.from_response(response)
    assert with_search.search.config_dict == {
        4: {"chunk_size": 2**40, "keep_gathered": False}}
    assert with_search.search.total_param_size == 5


def test_a_model_config_and_a_workload_travel_as_plans():
    """A ModelConfig travels as search.model with dp_degree its one degree;
    a workload dict as the Workload message; without one none is set."""
    model = pb.ModelConfig(hf_config_json='{"model_type": "llama"}')
    request = lr.build_layout_request(
        model, 0.25, 512, dp_degree=8,
        workload={"micro_batch": 2, "sequence_length": 4096,
                  "flash_attention": True})
    assert request.search.model == model
    assert list(request.search.numels) == []
    assert list(request.search.dp_degrees) == [8]
    assert request.workload == pb.Workload(
        micro_batch=2, sequence_length=4096, flash_attention=True)
    assert not lr.build_layout_request(model, 0.25, 512).HasField("workload")
    with pytest.raises(chunkplan.InvalidArgumentError,
                       match="workload.micro_batch"):
        lr.build_layout_request(model, 0.25, 512,
                                workload={"micro_batch": -1})
