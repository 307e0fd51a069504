"""Client.plan, LocalClient.plan and the chunkplan binary's `plan` against
the real Plan (issue 28): the answer equals the plan oracle's
(tests/oracle/plan_oracle.py, brute force from docs/plan.md) on small
requests; every option's figures follow the rules from its own fields
(device need the sum of its parts, fits the two checks, the colossalai
text evaluating to its placement, fractions, precision and configs); the
binary's table (a model's search settings, units) shows the same options,
and LocalClient (the binary with --local) equals the server.

Needs chunkplan-server (and, for LocalClient and the table, the chunkplan
binary: CHUNKPLAN_CLI); the oracle comparisons skip, saying "plan oracle
not found", where tests/oracle/plan_oracle.py is not in the tree."""

import importlib.util
import os
import re
import subprocess

import pytest
from google.protobuf import json_format

import chunkplan
from chunkplan import local, models
from chunkplan.v1 import chunk_search_pb2 as pb
from oracle_cases import HF_CONFIGS, ROOT

TIMEOUT_S = 60
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")
# Small grids: the oracle is Python.
SEARCH = dict(search_range_m=0.25, search_interval=512, min_chunk_size_m=0)
SWEEP = ["--search-range-m", "0.25", "--search-interval", "512",
         "--min-chunk-size-m", "0"]
# GPT-2 test (6,960,896 parameters) on devices that force offload at W 1
# and 2, on nodes of 2 whose host memory the largest options exceed.
DEVICE = 40_000_000
HOST = 150_000_000
CLUSTER = dict(device_memory_bytes=DEVICE, world_sizes=[4, 1, 2],
               gpus_per_node=2, host_memory_bytes=HOST, reserve_bytes=1000)
WORKLOAD = {"micro_batch": 1, "sequence_length": 64,
            "activation_checkpointing": True, "flash_attention": False}


def plan_oracle():
    path = ROOT / "tests" / "oracle" / "plan_oracle.py"
    if not path.exists():
        pytest.skip(f"plan oracle not found ({path})")
    spec = importlib.util.spec_from_file_location("plan_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def oracle_plan(request):
    """The oracle's PlanResponse for a PlanRequest message."""
    answer = plan_oracle().plan(json_format.MessageToDict(
        request, preserving_proto_field_name=True))
    assert "error" not in answer, answer
    return json_format.ParseDict(answer, pb.PlanResponse())


def without_time(response):
    copy = pb.PlanResponse()
    copy.CopyFrom(response)
    copy.plan_nanos = 0
    return copy


def ask(client, workload=WORKLOAD, **overrides):
    return client.plan(models.model_config(GPT2_TEST),
                       **dict(CLUSTER, **SEARCH, workload=workload,
                              timeout=TIMEOUT_S, **overrides))


@pytest.fixture(scope="module")
def plan(server):
    with chunkplan.Client(server.target) as client:
        return ask(client)


def test_plan_is_the_oracles(plan):
    assert without_time(plan.response) == oracle_plan(plan.request)


def test_plan_of_numels_without_a_workload_is_the_oracles(server):
    numels = [3 << 20, 5000, 2 << 20, 777, 4 << 20]
    with chunkplan.Client(server.target) as client:
        got = client.plan(numels, **dict(CLUSTER, **SEARCH, max_options=4,
                                         precision="bf16",
                                         timeout=TIMEOUT_S))
    assert len(got.options) == 4
    assert without_time(got.response) == oracle_plan(got.request)


def test_every_option_follows_the_rules(plan):
    assert plan.options
    for option in plan.options:
        rank = option.most_loaded_rank
        assert option.device_need_bytes == (
            rank.device_bytes + option.gathered_chunk_bytes +
            CLUSTER["reserve_bytes"] + option.activation_bytes)
        assert option.activation_bytes > 0  # a workload was given
        fits_device = option.device_need_bytes <= DEVICE
        fits_host = option.host_bytes_per_node <= HOST
        assert option.fits == (fits_device and fits_host)
        assert (option.why_not == "") == option.fits
        if not fits_device:
            assert option.why_not.startswith("device: %d > %d by %d" % (
                option.device_need_bytes, DEVICE,
                option.device_need_bytes - DEVICE))
        assert any("estimate" in note for note in option.notes)


def test_colossalai_text_holds_the_option(plan):
    for option in plan.options:
        kwargs = option.colossalai_kwargs()
        assert kwargs["placement_policy"] == option.placement
        if option.placement == "static":
            assert (kwargs["offload_optim_frac"],
                    kwargs["offload_param_frac"]) == (
                option.offload_optim_frac, option.offload_param_frac)
        else:
            assert "offload_optim_frac" not in kwargs
        assert kwargs["precision"] == "fp16"
        assert kwargs["chunk_config_dict"] == option.config_dict
        assert list(option.config_dict) == [option.world_size]


def test_the_table_has_a_row_per_option(server, plan):
    cli = os.environ.get(local.CLI_ENV, "")
    if not os.access(cli, os.X_OK):
        pytest.skip(f"chunkplan not built ({local.CLI_ENV}={cli!r})")
    result = subprocess.run(
        [cli, "plan", "--server", server.target, "--hf-config", GPT2_TEST,
         *SWEEP, "--device-memory", f"{DEVICE / 10**6!r}MB",
         "--gpus-per-node", "2", "--host-memory", f"{HOST / 10**6!r}MB",
         "--world-sizes", "4,1,2", "--reserve", "0.001MB", "--micro-batch",
         "1", "--sequence-length", "64", "--activation-checkpointing"],
        capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines()
            if re.match(r"^\s+\d+\s+(static|auto)", line)]
    assert [int(row.split()[0]) for row in rows] == [
        o.world_size for o in plan.options]
    assert [row.endswith("fits") for row in rows] == [
        o.fits for o in plan.options]
    assert ("option 1  GeminiPlugin(%s)" % plan.options[0].colossalai
            in result.stdout)
    assert "activations: an ESTIMATE" in result.stdout


def test_local_is_the_server(plan):
    cli = os.environ.get(local.CLI_ENV, "")
    if not os.access(cli, os.X_OK):
        pytest.skip(f"chunkplan not built ({local.CLI_ENV}={cli!r})")
    with chunkplan.LocalClient(cli) as client:
        got = ask(client)
    assert without_time(got.response) == without_time(plan.response)
