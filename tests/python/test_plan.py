"""Plan in the Python client, against a stand-in server (fake_server.py)
whose answer is built from its parts by docs/plan.md's rules (plan_cases):
the typed Plan, colossalai_kwargs() evaluating an option's text, the
request Client.plan sends, and Plan.table() (one row per option, every
figure and verdict the option's own: nothing computed here). The command
line is the C++ `chunkplan plan` (tests/e2e/plan_cli_test.py). Against the
real Plan: test_plan_server.py."""

import grpc
import pytest

import chunkplan
from chunkplan.plan_result import colossalai_kwargs
from chunkplan.v1 import chunk_search_pb2 as pb
from fake_server import FakeServer
from oracle_cases import HF_CONFIGS
from plan_cases import GIB, HYBRID_ADAM, four_options, plan_option

TIMEOUT_S = 60
LLAMA_13B = str(HF_CONFIGS.parents[2].parent / "examples" /
                "llama-2-13b_config.json")
# An RTX 4090: 24,564 MiB (common/gpu_presets.inc).
RTX_4090 = 24564 << 20
CLUSTER = pb.Cluster(device_memory_bytes=RTX_4090,
                     host_memory_bytes=1 << 40, gpus_per_node=8,
                     world_sizes=[8, 16], reserve_bytes=2 * GIB)
WORKLOAD = {"micro_batch": 2, "sequence_length": 4096,
            "flash_attention": True}


def answer_with(response):
    """A fake server's handler answering Plan with `response`."""
    def handler(request, context):
        assert isinstance(request, pb.PlanRequest), request
        return response
    return handler


def ask(server, **kwargs):
    """Client.plan of LLaMA-2 13B's config on CLUSTER through `server`."""
    with chunkplan.Client(server.target) as client:
        return client.plan(
            chunkplan.models.model_config(LLAMA_13B),
            device_memory_bytes=CLUSTER.device_memory_bytes,
            world_sizes=list(CLUSTER.world_sizes),
            gpus_per_node=CLUSTER.gpus_per_node,
            host_memory_bytes=CLUSTER.host_memory_bytes,
            reserve_bytes=CLUSTER.reserve_bytes, timeout=TIMEOUT_S, **kwargs)


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
        assert got.nodes == want.nodes
        assert got.device_need_bytes == want.device_need_bytes
        assert got.host_bytes_per_node == want.host_bytes_per_node
        assert got.gathered_chunk_bytes == want.gathered_chunk_bytes
        assert got.gathered_chunks == want.gathered_chunks
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


def test_arguments_reach_the_request(fake):
    ask(fake, workload=WORKLOAD, max_options=3, precision="bf16",
        pin_memory=False, search_interval=5120)
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


def test_without_a_workload_none_is_sent(fake):
    plan = ask(fake)
    assert not fake.requests[-1].HasField("workload")
    assert plan.response == four_options(CLUSTER)
    assert plan.request == fake.requests[-1]


def table_rows(out):
    """The option rows of the table: lines that start with a number."""
    return [line for line in out.splitlines()
            if line.strip()[:1].isdigit() and "  " in line.strip()]


def test_table_has_one_row_per_option_with_its_own_figures(fake):
    out = ask(fake).table()
    rows = table_rows(out)
    options = four_options(CLUSTER).options
    assert len(rows) == len(options), out
    for i, (row, option) in enumerate(zip(rows, options), 1):
        typed = chunkplan.PlanOption.from_response(option)
        cells = row.split()
        assert cells[:3] == [str(i), str(option.world_size),
                             str(option.nodes)], row
        assert typed.nodes == option.nodes
        assert typed.placement_text in row
        sizes = ", ".join("%d%s" % (c.chunk_size, " kept" if
                                    c.keep_gathered else "")
                          for c in option.configs)
        assert "  %s  " % sizes in row, row
        assert option.chunk_size_from in row
        v = option.verdict
        tail = "fits" if v.fits else (
            "does not fit (tight): " if v.tight else "does not fit: ") + (
                v.why_not)
        assert row.endswith(tail), row
        head = row[:-len(tail)].split()
        assert head[-5:] == [gib(option.device_need_bytes), "/",
                             gib(CLUSTER.device_memory_bytes),
                             gib(v.headroom_bytes),
                             gib(option.host_bytes_per_node)], row
    assert not options[2].fits and "device: " in options[2].why_not
    assert options[3].why_not.startswith("host: ")
    assert "margin          margin 5% (1.20 GiB) kept free" in out
    assert "cluster         23.99 GiB per device, reserve 2.00 GiB, 8 GPUs " \
        "per node, host memory 1024.00 GiB per node, world sizes 8, 16" in out
    assert "option 1        GeminiPlugin(%s)" % options[0].colossalai in out
    assert "note            options 2,3,4: " + HYBRID_ADAM in out
    assert "considered      37 options" in out
    assert "ESTIMATE" not in out


def test_a_tight_option_says_so():
    """Within the card but not its margin: the server's tight verdict,
    rendered as it came (words, headroom, the margin applied)."""
    cluster = pb.Cluster()
    cluster.CopyFrom(CLUSTER)
    cluster.margin = 0.25
    tight = plan_option(8, [(8, 70794240, False)], device_bytes=20 * GIB,
                        cluster=cluster)
    plan = chunkplan.Plan.from_response(pb.PlanResponse(options=[tight]))
    option = plan.best
    assert (option.fits, option.tight) == (False, True)
    assert option.verdict.margin == 0.25
    assert option.verdict.headroom_bytes == (
        cluster.device_memory_bytes - tight.device_need_bytes)
    assert option.verdict.words == (
        "does not fit (tight): " + tight.verdict.why_not)
    assert option.verdict.words in plan.table()
    assert "margin 25% (6.00 GiB)" in plan.table()


def test_a_workload_says_the_activations_are_an_estimate():
    activation = 3 * GIB + 12345
    response = four_options(CLUSTER, activation=activation)
    with FakeServer(answer_with(response)) as server:
        out = ask(server, workload=WORKLOAD).table()
    assert "activation and transient bytes are estimates" in out
    assert ("activations     %s GiB per rank (an ESTIMATE, counted in the "
            "device need)" % gib(activation)) in out
    rows = table_rows(out)
    assert gib(response.options[0].device_need_bytes) in rows[0]


def test_colossalai_kwargs_are_the_first_options(fake):
    plan = ask(fake)
    first = four_options(CLUSTER).options[0]
    assert plan.colossalai_kwargs() == kwargs_of(first)
    assert plan.best.fits
    response = four_options(CLUSTER)
    del response.options[:2]
    plan = chunkplan.Plan.from_response(response)
    assert plan.colossalai_kwargs() == kwargs_of(response.options[0])
    assert not plan.best.fits and plan.best.why_not
    with pytest.raises(ValueError):
        chunkplan.Plan.from_response(pb.PlanResponse()).colossalai_kwargs()


def test_a_servers_refusal_is_typed():
    def refuse(request, context):
        context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                      "cluster.world_sizes[1] is 0")
    with FakeServer(refuse) as server:
        with pytest.raises(chunkplan.InvalidArgumentError) as error:
            ask(server)
    assert error.value.message == "cluster.world_sizes[1] is 0"


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


def test_the_mesh_reaches_the_request(fake):
    """tp_size "search", lists and one degree: the PlanRequest's fields
    (docs/tensor-parallelism.md); the server searches."""
    ask(fake, tp_size="search", extra_dp_size=[1, 2])
    request = fake.requests[-1]
    assert request.search_tp and not request.tp_sizes
    assert list(request.extra_dp_sizes) == [1, 2]
    ask(fake, tp_size=[2, 4], sequence_parallelism=True)
    request = fake.requests[-1]
    assert not request.search_tp and list(request.tp_sizes) == [2, 4]
    assert request.gemini.enable_sequence_parallelism
    ask(fake, tp_size=2, extra_dp_size=2)
    request = fake.requests[-1]
    assert request.gemini.tp_size == 2 and request.gemini.extra_dp_size == 2
    assert not request.tp_sizes and not request.extra_dp_sizes


def test_whole_nodes_reach_the_request(fake):
    """whole_nodes and max_nodes go as they are; the server lists the world
    sizes and each option's nodes, which the table renders."""
    with chunkplan.Client(fake.target) as client:
        plan = client.plan(
            chunkplan.models.model_config(LLAMA_13B),
            device_memory_bytes=CLUSTER.device_memory_bytes,
            whole_nodes=True, max_nodes=4, gpus_per_node=8,
            timeout=TIMEOUT_S)
    cluster = fake.requests[-1].cluster
    assert (cluster.whole_nodes, cluster.max_nodes) == (True, 4)
    assert not cluster.world_sizes
    assert "world sizes whole nodes, up to 4" in plan.table()
    # W 8 and 16 on 8 GPUs a node: 1 and 2 nodes, as the server said.
    assert [o.nodes for o in plan.options] == [
        o.nodes for o in four_options(CLUSTER).options]
    assert {(o.world_size, o.nodes) for o in plan.options} == {(8, 1), (16, 2)}


def test_the_target_defaults_to_chunkplan_target(fake, monkeypatch):
    """The sidecar's manifest sets CHUNKPLAN_TARGET for the trainer: a
    Client (and search_chunk_configuration) given no target asks there."""
    monkeypatch.setenv("CHUNKPLAN_TARGET", fake.target)
    with chunkplan.Client() as client:
        assert client.target == fake.target
        client.plan([10, 20], device_memory_bytes=GIB, world_sizes=[8],
                    timeout=TIMEOUT_S)
    assert len(fake.requests) == 1
    monkeypatch.setenv("CHUNKPLAN_TARGET", "")
    assert chunkplan.Client().target == "localhost:50051"
    monkeypatch.delenv("CHUNKPLAN_TARGET")
    assert chunkplan.Client().target == "localhost:50051"
    assert chunkplan.default_target() == "localhost:50051"
