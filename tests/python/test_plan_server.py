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
import json
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


def load_oracle(name):
    """tests/oracle/NAME.py as a module; skips where it is not in the
    tree."""
    path = ROOT / "tests" / "oracle" / f"{name}.py"
    if not path.exists():
        pytest.skip(f"{name.replace('_', ' ')} not found ({path})")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plan_oracle():
    return load_oracle("plan_oracle")


def oracle_plan(request):
    """The oracle's PlanResponse for a PlanRequest message."""
    answer = plan_oracle().plan(json_format.MessageToDict(
        request, preserving_proto_field_name=True))
    assert "error" not in answer, answer
    return json_format.ParseDict(answer, pb.PlanResponse())


def without_time(response):
    """The response without its time and its model report (which the plan
    oracle does not give: the tests hold its total apart)."""
    copy = pb.PlanResponse()
    copy.CopyFrom(response)
    copy.plan_nanos = 0
    copy.ClearField("model_report")
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
    with open(GPT2_TEST, encoding="utf-8") as f:
        described = load_oracle("models_oracle").describe(
            json.dumps({"hf_config_json": f.read()}))
    assert plan.model_report.total_param_size == described["total"]
    assert plan.model_report.model_type == "gpt2"


def test_plan_of_numels_without_a_workload_is_the_oracles(server):
    numels = [3 << 20, 5000, 2 << 20, 777, 4 << 20]
    with chunkplan.Client(server.target) as client:
        got = client.plan(numels, **dict(CLUSTER, **SEARCH, max_options=4,
                                         precision="bf16",
                                         timeout=TIMEOUT_S))
    assert len(got.options) == 4
    assert without_time(got.response) == oracle_plan(got.request)
    assert got.model_report.total_param_size == sum(numels)


def test_every_option_follows_the_rules(plan):
    """Each option's need is the sum of its parts, and its verdict (the
    server's, read from its fields) is the verdict oracle's judgement of
    that need under the cluster's default 5% margin; the Python result
    renders it as it came."""
    verdict_oracle = load_oracle("verdict_oracle")
    assert plan.options
    for option in plan.options:
        rank = option.most_loaded_rank
        assert option.device_need_bytes == (
            rank.device_bytes + option.gathered_chunk_bytes +
            CLUSTER["reserve_bytes"] + option.activation_bytes +
            option.transient_bytes)
        assert option.activation_bytes > 0  # a workload was given
        want = verdict_oracle.judge(
            option.device_need_bytes, option.host_bytes_per_node, DEVICE,
            reserve=CLUSTER["reserve_bytes"], margin=None, host_memory=HOST)
        assert json_format.MessageToDict(
            option.response.verdict, preserving_proto_field_name=True,
            including_default_value_fields=True) == dict(want)
        v = option.verdict
        assert (option.fits, option.why_not, option.tight) == (
            want["fits"], want["why_not"], want["tight"])
        assert (v.margin, v.margin_bytes, v.headroom_bytes) == (
            want["margin"], int(want["margin_bytes"]),
            int(want["headroom_bytes"]))
        assert v.words == ("fits" if want["fits"] else (
            "does not fit (tight): " if want["tight"] else
            "does not fit: ") + want["why_not"])
        assert any("estimate" in note for note in option.notes)
    # The plan's order: those that fit, then the tight, then the rest by
    # device excess and host excess.
    keys = [verdict_oracle.rank_key(json_format.MessageToDict(
        o.response.verdict, preserving_proto_field_name=True,
        including_default_value_fields=True)) for o in plan.options]
    assert keys == sorted(keys)


def test_plan_table_renders_the_verdicts(plan):
    table = plan.table()
    assert "margin          margin 5% (" in table
    for option in plan.options:
        assert option.verdict.words in table


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
    # 3 where no option fits (the activations and transients now count).
    code = 0 if any(o.fits for o in plan.options) else 3
    assert result.returncode == code, result.stderr
    rows = [line for line in result.stdout.splitlines()
            if re.match(r"^\s+\d+\s+\d+\s+(static|auto)", line)]
    assert [(int(row.split()[0]), int(row.split()[1])) for row in rows] == [
        (o.world_size, o.nodes) for o in plan.options]
    # 2 GPUs a node: world sizes 1 and 2 on one node, 4 on two.
    assert {(o.world_size, o.nodes) for o in plan.options} <= {
        (1, 1), (2, 1), (4, 2)}
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


def test_local_nothing_fits_is_an_answer(server):
    """The binary exits 3 when the verdict says nothing fits; LocalClient
    reads that answer (the server's, as Client gets it), not an error."""
    cli = os.environ.get(local.CLI_ENV, "")
    if not os.access(cli, os.X_OK):
        pytest.skip(f"chunkplan not built ({local.CLI_ENV}={cli!r})")
    small = dict(CLUSTER, device_memory_bytes=1000)
    with chunkplan.LocalClient(cli) as client:
        got = client.plan(models.model_config(GPT2_TEST),
                          **dict(small, **SEARCH, timeout=TIMEOUT_S))
        layout = client.layout(models.model_config(GPT2_TEST), dp_degree=2,
                               cluster={"device_memory_bytes": 1000},
                               timeout=TIMEOUT_S, **SEARCH)
    assert got.options and not any(o.fits for o in got.options)
    assert layout.verdict is not None and not layout.fits
    with chunkplan.Client(server.target) as client:
        want = client.plan(models.model_config(GPT2_TEST),
                           **dict(small, **SEARCH, timeout=TIMEOUT_S))
        want_layout = client.layout(models.model_config(GPT2_TEST),
                                    dp_degree=2,
                                    cluster={"device_memory_bytes": 1000},
                                    timeout=TIMEOUT_S, **SEARCH)
    assert without_time(got.response) == without_time(want.response)
    assert layout.verdict == want_layout.verdict
