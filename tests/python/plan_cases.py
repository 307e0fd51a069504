"""PlanOptions for the client's tests, built from their parts by the rules
of docs/plan.md ("Every option's figures"), written here and not taken from
chunkplan: device_need_bytes is the sum of its parts, host_bytes_per_node
min(gpus_per_node, W) x a rank's host bytes, the verdict (fits, tight,
headroom, margin, why_not) tests/oracle/verdict_oracle.py's judgement of
them, colossalai GeminiPlugin's keyword arguments in the documented order.
What the client prints is then held to these fields.
"""

import importlib.util

from google.protobuf import json_format

from chunkplan.v1 import chunk_search_pb2 as pb
from oracle_cases import ROOT


def _load_verdict_oracle():
    path = ROOT / "tests" / "oracle" / "verdict_oracle.py"
    spec = importlib.util.spec_from_file_location("verdict_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


verdict_oracle = _load_verdict_oracle()

# Placement names of GeminiPlugin, as the proto numbers them.
_PLACEMENT = {"static": pb.PLACEMENT_STATIC, "auto": pb.PLACEMENT_AUTO}


def colossalai_text(placement, fractions, precision, master_weights,
                    gradient_accumulation, pin_memory, configs):
    """docs/plan.md's `colossalai` line: static with shard 1.0 and the two
    fractions (repr: Python reads back the same double), auto without
    them; then the fixed choices and chunk_config_dict."""
    parts = ['placement_policy="%s"' % placement]
    if placement == "static":
        parts += ["shard_param_frac=1.0",
                  "offload_optim_frac=%r" % fractions[0],
                  "offload_param_frac=%r" % fractions[1]]
    parts += ['precision="%s"' % precision,
              "master_weights=%r" % master_weights,
              "enable_gradient_accumulation=%r" % gradient_accumulation,
              "pin_memory=%r" % pin_memory,
              "chunk_config_dict={%s}" % ", ".join(
                  '%d: {"chunk_size": %d, "keep_gathered": %r}' % c
                  for c in configs)]
    return ", ".join(parts)


def plan_option(world_size, configs, placement="static", fractions=(0.0, 0.0),
                device_bytes=0, host_bytes=0, gathered=0, activation=0,
                cluster=None, source="colossalai_search", notes=(),
                precision="bf16"):
    """A PlanOption whose derived figures follow docs/plan.md from these
    parts. configs: [(dp_degree, chunk_size, keep_gathered)]; cluster: the
    request's Cluster (device, host, GPUs per node, reserve, margin)."""
    need = device_bytes + gathered + cluster.reserve_bytes + activation
    host = min(cluster.gpus_per_node, world_size) * host_bytes
    verdict = verdict_oracle.judge(
        need, host, cluster.device_memory_bytes, cluster.reserve_bytes,
        cluster.margin if cluster.HasField("margin") else None,
        cluster.host_memory_bytes)
    gemini = pb.GeminiSettings(
        precision=pb.Precision.Value("PRECISION_" + precision.upper()),
        master_weights=True, pin_memory=True,
        placement=_PLACEMENT[placement])
    if placement == "static":
        gemini.offload_optim_frac, gemini.offload_param_frac = fractions
    else:
        gemini.device_memory_bytes = cluster.device_memory_bytes
    return pb.PlanOption(
        world_size=world_size, gemini=gemini,
        configs=[pb.ChunkConfig(dp_degree=d, chunk_size=c, keep_gathered=k)
                 for d, c, k in configs],
        objective=(pb.OBJECTIVE_SEED_WASTE if source == "colossalai_search"
                   else pb.OBJECTIVE_PEAK_RANK_BYTES),
        most_loaded_rank=pb.RankMemory(device_bytes=device_bytes,
                                       host_bytes=host_bytes,
                                       pinned_host_bytes=host_bytes),
        gathered_chunk_bytes=gathered, host_bytes_per_node=host,
        layout_padding=1000 + world_size, fits=verdict["fits"],
        why_not=verdict["why_not"],
        verdict=json_format.ParseDict(verdict, pb.Verdict()),
        colossalai=colossalai_text(placement, fractions, precision, True,
                                   False, True, configs),
        activation_bytes=activation, chunk_size_from=source,
        notes=list(notes), device_need_bytes=need,
        # The nodes W ranks occupy (docs/plan.md): ceil(W / GPUs a node).
        nodes=-(-world_size // cluster.gpus_per_node))


GIB = 2**30
HYBRID_ADAM = ("the optimizer must run where its states live: HybridAdam "
               "(CPUAdam on the host states); a GPU-only fused Adam fails at "
               "the first step")


def four_options(cluster, activation=0):
    """A ranked PlanResponse of four options over W 8 and 16: static,
    partial optimizer offload at an inexact double, full offload with a
    parameter fraction (a kept-gathered config), auto that does
    not fit on the host."""
    return pb.PlanResponse(options=[
        plan_option(8, [(8, 70794240, False)], device_bytes=20 * GIB,
                    host_bytes=10 * GIB, gathered=330 << 20,
                    activation=activation, cluster=cluster),
        plan_option(8, [(8, 70795264, False)], fractions=(0.1 + 0.2, 0.0),
                    device_bytes=19 * GIB, host_bytes=12 * GIB,
                    gathered=330 << 20, activation=activation,
                    cluster=cluster, source="peak_rank_bytes",
                    notes=[HYBRID_ADAM]),
        plan_option(16, [(16, 1 << 20, True)],
                    fractions=(1.0, 0.4375), device_bytes=60 * GIB,
                    host_bytes=30 * GIB, gathered=1 << 26,
                    activation=activation, cluster=cluster,
                    source="peak_rank_bytes_wide", notes=[HYBRID_ADAM]),
        plan_option(16, [(16, 33554432, False)], placement="auto",
                    device_bytes=5 * GIB, host_bytes=200 * GIB,
                    gathered=1 << 26, activation=activation, cluster=cluster,
                    notes=[HYBRID_ADAM]),
    ], options_considered=37, plan_nanos=123456)
