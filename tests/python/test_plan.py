"""Plan in the Python client, against a stand-in server (fake_server.py)
whose answer is built from its parts by docs/plan.md's rules (plan_cases):
the typed Plan, colossalai_kwargs() evaluating an option's text, and
`python3 -m chunkplan plan`: the request its flags send, the table (one
row per option, every figure the option's own), --format json (the
response) and --emit colossalai (the first option); usage errors exit 2.
Against the real Plan: test_plan_server.py."""

import ast
import json
import subprocess
import sys

import grpc
import pytest
from google.protobuf import json_format

import chunkplan
from chunkplan.plan_result import colossalai_kwargs
from chunkplan.v1 import chunk_search_pb2 as pb
from fake_server import FakeServer
from oracle_cases import HF_CONFIGS
from plan_cases import GIB, HYBRID_ADAM, four_options

TIMEOUT_S = 60
LLAMA_13B = str(HF_CONFIGS.parents[2].parent / "examples" /
                "llama-2-13b_config.json")
# --gpu rtx-4090: 24,564 MiB (common/gpu_presets.inc).
RTX_4090 = 24564 << 20
CLUSTER = pb.Cluster(device_memory_bytes=RTX_4090,
                     host_memory_bytes=1 << 40, gpus_per_node=8,
                     world_sizes=[8, 16], reserve_bytes=2 * GIB)
FLAGS = ["--hf-config", LLAMA_13B, "--gpu", "rtx-4090", "--host-memory",
         "1TiB", "--gpus-per-node", "8", "--world-sizes", "8,16",
         "--reserve", "2GiB"]
WORKLOAD = ["--micro-batch", "2", "--sequence-length", "4096",
            "--flash-attention"]


def answer_with(response):
    """A fake server's handler answering Plan with `response`."""
    def handler(request, context):
        assert isinstance(request, pb.PlanRequest), request
        return response
    return handler


def run_plan(server, *args):
    return subprocess.run(
        [sys.executable, "-m", "chunkplan", "plan", "--server",
         server.target, *args], capture_output=True, text=True,
        timeout=TIMEOUT_S)


@pytest.fixture
def fake():
    with FakeServer(answer_with(four_options(CLUSTER))) as server:
        yield server


def gib(nbytes):
    return "%.2f" % (nbytes / GIB)


def kwargs_of(option):
    """The keyword arguments an option's fields say, by docs/plan.md."""
    g = option.gemini
    out = {"placement_policy": "static" if g.placement == pb.PLACEMENT_STATIC
           else "auto"}
    if g.placement == pb.PLACEMENT_STATIC:
        out.update(shard_param_frac=1.0,
                   offload_optim_frac=g.offload_optim_frac,
                   offload_param_frac=g.offload_param_frac)
    out.update(precision=pb.Precision.Name(g.precision)[10:].lower(),
               master_weights=g.master_weights,
               enable_gradient_accumulation=g.gradient_accumulation,
               pin_memory=g.pin_memory,
               chunk_config_dict={c.dp_degree: {
                   "chunk_size": c.chunk_size,
                   "keep_gathered": c.keep_gathered} for c in option.configs})
    return out


def test_plan_carries_every_option_field():
    response = four_options(CLUSTER)
    plan = chunkplan.Plan.from_response(response)
    assert plan.options_considered == 37 and plan.plan_nanos == 123456
    assert len(plan.options) == 4 and plan.best is plan.options[0]
    for got, want in zip(plan.options, response.options):
        assert got.world_size == want.world_size
        assert got.device_need_bytes == want.device_need_bytes
        assert got.host_bytes_per_node == want.host_bytes_per_node
        assert got.gathered_chunk_bytes == want.gathered_chunk_bytes
        assert got.most_loaded_rank.device_bytes == (
            want.most_loaded_rank.device_bytes)
        assert (got.fits, got.why_not) == (want.fits, want.why_not)
        assert got.chunk_size_from == want.chunk_size_from
        assert got.notes == tuple(want.notes)
        assert list(got.config_dict) == [c.dp_degree for c in want.configs]
    third = plan.options[2]
    assert (third.placement, third.offload_optim_frac,
            third.offload_param_frac) == ("static", 1.0, 0.4375)
    assert third.objective == "peak_rank_bytes"
    assert third.placement_text == "static, optim 1, param 0.4375"
    assert plan.options[3].placement_text == "auto"
    assert plan.options[0].placement_text == "static"


def test_colossalai_kwargs_hold_the_options_fields():
    for option in four_options(CLUSTER).options:
        got = chunkplan.PlanOption.from_response(option).colossalai_kwargs()
        assert got == kwargs_of(option), option.colossalai
        # The same double, not a rounding of it: 0.1 + 0.2.
        if got["placement_policy"] == "static":
            assert got["offload_optim_frac"] == option.gemini.offload_optim_frac
    assert kwargs_of(four_options(CLUSTER).options[1])[
        "offload_optim_frac"] == 0.30000000000000004


@pytest.mark.parametrize("text", [
    'placement_policy=__import__("os").getcwd()',   # not a literal
    '"static"',                                      # positional
    "**{'a': 1}",                                    # not named
    "placement_policy=",                             # not Python
])
def test_colossalai_kwargs_evaluate_nothing(text):
    with pytest.raises(ValueError):
        colossalai_kwargs(text)


def test_flags_reach_the_request(fake):
    result = run_plan(fake, *FLAGS, *WORKLOAD, "--max-options", "3",
                      "--precision", "bf16", "--no-pin-memory",
                      "--hidden-dim", "5120", "--format", "json")
    assert result.returncode == 0, result.stderr
    request = fake.requests[-1]
    with open(LLAMA_13B) as f:
        assert request.search.model.hf_config_json == f.read()
    assert not request.search.numels and not request.search.dp_degrees
    assert request.search.search_interval == 5120
    assert request.search.search_range_m == 32
    assert request.cluster == CLUSTER
    assert request.workload == pb.Workload(
        micro_batch=2, sequence_length=4096, flash_attention=True)
    assert request.max_options == 3
    assert request.gemini.precision == pb.PRECISION_BF16
    assert not request.gemini.pin_memory and request.gemini.master_weights
    assert "search interval 5120 (--hidden-dim" in result.stderr


def test_without_a_workload_none_is_sent(fake):
    result = run_plan(fake, *FLAGS, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert not fake.requests[-1].HasField("workload")
    assert fake.requests[-1].cluster.host_memory_bytes == 1 << 40


def test_json_is_the_response(fake):
    result = run_plan(fake, *FLAGS, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("\n") == 1
    got = json_format.Parse(result.stdout, pb.PlanResponse())
    assert got == four_options(CLUSTER)
    fields = json.loads(result.stdout)
    assert fields["options"][1]["chunk_size_from"] == "peak_rank_bytes"


def table_rows(out):
    """The option rows of the table: lines that start with a number."""
    return [line for line in out.splitlines()
            if line.strip()[:1].isdigit() and "  " in line.strip()]


def test_table_has_one_row_per_option_with_its_own_figures(fake):
    result = run_plan(fake, *FLAGS)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    rows = table_rows(out)
    options = four_options(CLUSTER).options
    assert len(rows) == len(options), out
    for i, (row, option) in enumerate(zip(rows, options), 1):
        typed = chunkplan.PlanOption.from_response(option)
        cells = row.split()
        assert cells[:2] == [str(i), str(option.world_size)], row
        assert typed.placement_text in row
        sizes = ", ".join("%d%s" % (c.chunk_size, " kept" if
                                    c.keep_gathered else "")
                          for c in option.configs)
        assert "  %s  " % sizes in row, row
        assert option.chunk_size_from in row
        tail = "fits" if option.fits else "does not fit: " + option.why_not
        assert row.endswith(tail), row
        head = row[:-len(tail)].split()
        assert head[-4:] == [gib(option.device_need_bytes), "/",
                             gib(CLUSTER.device_memory_bytes),
                             gib(option.host_bytes_per_node)], row
    assert not options[2].fits and "device: " in options[2].why_not
    assert options[3].why_not.startswith("host: ")
    assert "cluster         23.99 GiB per device, reserve 2.00 GiB, 8 GPUs " \
        "per node, host memory 1024.00 GiB per node, world sizes 8, 16" in out
    assert "option 1        GeminiPlugin(%s)" % options[0].colossalai in out
    assert "note            options 2,3,4: " + HYBRID_ADAM in out
    assert "considered      37 options" in out
    assert "ESTIMATE" not in out


def test_a_workload_says_the_activations_are_an_estimate():
    activation = 3 * GIB + 12345
    response = four_options(CLUSTER, activation=activation)
    with FakeServer(answer_with(response)) as server:
        result = run_plan(server, *FLAGS, *WORKLOAD)
    assert result.returncode == 0, result.stderr
    assert "activation bytes are an estimate" in result.stdout
    assert ("activations     %s GiB per rank (an ESTIMATE, counted in the "
            "device need)" % gib(activation)) in result.stdout
    rows = table_rows(result.stdout)
    assert gib(response.options[0].device_need_bytes) in rows[0]


def test_emit_is_the_first_option(fake):
    result = run_plan(fake, *FLAGS, "--emit", "colossalai")
    assert result.returncode == 0, result.stderr
    first = four_options(CLUSTER).options[0]
    literal, plugin = result.stdout.splitlines()
    assert ast.literal_eval(literal) == kwargs_of(first)["chunk_config_dict"]
    assert plugin == "GeminiPlugin(%s)" % first.colossalai
    assert colossalai_kwargs(plugin[len("GeminiPlugin("):-1]) == kwargs_of(
        first)
    assert "does not fit" not in result.stderr


def test_emit_says_when_the_first_option_does_not_fit():
    response = four_options(CLUSTER)
    del response.options[:2]
    with FakeServer(answer_with(response)) as server:
        result = run_plan(server, *FLAGS, "--emit", "colossalai")
    assert result.returncode == 0, result.stderr
    assert ("option 1 does not fit: %s\n" % response.options[0].why_not
            ) in result.stderr


@pytest.mark.parametrize("args, says", [
    (["--world-sizes", "8"], "--gpus-per-node"),
    (["--gpus-per-node", "8", "--world-sizes", "8,8"], "given twice"),
    (["--gpus-per-node", "0", "--world-sizes", "8"], "--gpus-per-node"),
    (["--gpus-per-node", "8"], "--world-sizes"),
    (["--gpus-per-node", "8", "--world-sizes", "8", "--micro-batch", "1"],
     "--micro-batch and --sequence-length go together"),
    (["--gpus-per-node", "8", "--world-sizes", "8", "--flash-attention"],
     "give --micro-batch and --sequence-length"),
    (["--gpus-per-node", "8", "--world-sizes", "8", "--json", "--emit",
      "colossalai"], "two outputs"),
])
def test_usage_errors(args, says):
    result = subprocess.run(
        [sys.executable, "-m", "chunkplan", "plan", "--hf-config", LLAMA_13B,
         "--device-memory", "80GiB", *args], capture_output=True, text=True,
        timeout=TIMEOUT_S)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.startswith("INVALID_ARGUMENT: "), result.stderr
    assert says in result.stderr
    assert result.stderr.count("\n") == 1


def test_device_memory_is_needed():
    result = subprocess.run(
        [sys.executable, "-m", "chunkplan", "plan", "--hf-config", LLAMA_13B,
         "--gpus-per-node", "8", "--world-sizes", "8"], capture_output=True,
        text=True, timeout=TIMEOUT_S)
    assert result.returncode == 2
    assert "--device-memory" in result.stderr and "--gpu" in result.stderr


def test_a_servers_refusal_is_one_line():
    def refuse(request, context):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      "cluster.world_sizes[1] is 0")
    with FakeServer(refuse) as server:
        result = run_plan(server, *FLAGS)
    assert result.returncode == 1
    # (gRPC's own log line may precede it: the stand-in has no health
    # service.)
    assert result.stderr.endswith("\nINVALID_ARGUMENT: cluster.world_sizes"
                                  "[1] is 0\n") or result.stderr == (
        "INVALID_ARGUMENT: cluster.world_sizes[1] is 0\n")


def test_client_values_that_do_not_fit_the_wire_are_refused_here():
    client = chunkplan.Client("127.0.0.1:1")
    for kwargs, where in (
            (dict(world_sizes=[8, -1]), "cluster.world_sizes[1]"),
            (dict(world_sizes=8), "cluster.world_sizes"),
            (dict(world_sizes=[8], workload={"micro_batch": 1,
                                             "tokens": 2}), "workload"),
            (dict(world_sizes=[8], workload={"micro_batch": 1,
                                             "sequence_length": 2,
                                             "flash_attention": "yes"}),
             "workload.flash_attention")):
        with pytest.raises(chunkplan.InvalidArgumentError) as error:
            client.plan([10, 20], device_memory_bytes=GIB, **kwargs)
        assert error.value.message.startswith(where), error.value.message
    client.close()
