"""Client.plan's arguments as a PlanRequest (docs/plan.md).

The parameters travel as numels (a torch.nn.Module or a list, as for
Search) or as the model's config (a chunkplan.v1.ModelConfig, e.g.
chunkplan.models.model_config("config.json"): the server describes it, and
only then can it estimate activations). As in request.py, values that fit
the wire are sent as they are and judged by the server (a world size of 0,
a repeat, a device memory of 0); values that do not fit raise
InvalidArgumentError here, named as the server names them
("cluster.world_sizes[1]").
"""

from chunkplan.layout_request import (build_search, frozen_flags,
                                      gemini_base, workload_message)
from chunkplan.cluster_request import cluster
from chunkplan.request import UINT32_MAX, unsigned
from chunkplan.v1 import chunk_search_pb2

def _search(model_or_params, search_range_m, search_interval,
            min_chunk_size_m, filter_exlarge_params, engine):
    """The ChunkSearchRequest: `model` for a ModelConfig, else numels (no
    dp_degrees: Plan sets each option's world size)."""
    search = build_search(model_or_params, search_range_m, search_interval,
                          min_chunk_size_m, filter_exlarge_params,
                          engine=engine)
    if search.HasField("model"):
        del search.dp_degrees[:]
    return search


def build_plan_request(model_or_params, *, device_memory_bytes,
                       world_sizes=(), whole_nodes=False, max_nodes=0,
                       gpus_per_node=1, host_memory_bytes=0,
                       reserve_bytes=0, margin=None, search_range_m=32,
                       search_interval=1024, min_chunk_size_m=32,
                       filter_exlarge_params=True, frozen=None,
                       precision="fp16", master_weights=True,
                       gradient_accumulation=False, pin_memory=True,
                       optimizer="adam", workload=None, max_options=0,
                       engine="auto", tp_size=1, extra_dp_size=1,
                       sequence_parallelism=False):
    """The PlanRequest of Client.plan's arguments (see there). Raises
    InvalidArgumentError for what does not fit the wire. tp_size: one
    degree, a list of degrees to try, or "search" (1, 2, 4, 8 within a
    node, those the model's policy accepts); extra_dp_size: one degree or
    a list."""
    search_tp = tp_size == "search"
    tp_list = [] if search_tp else (
        list(tp_size) if isinstance(tp_size, (list, tuple)) else [tp_size])
    dp_list = list(extra_dp_size) if isinstance(extra_dp_size,
                                                (list, tuple)) \
        else [extra_dp_size]
    request = chunk_search_pb2.PlanRequest(
        search=_search(model_or_params, search_range_m, search_interval,
                       min_chunk_size_m, filter_exlarge_params, engine),
        gemini=gemini_base(precision, master_weights, gradient_accumulation,
                            pin_memory, optimizer,
                            tp_list[0] if len(tp_list) == 1 else 1,
                            dp_list[0] if len(dp_list) == 1 else 1,
                            sequence_parallelism),
        search_tp=search_tp,
        cluster=cluster(device_memory_bytes, world_sizes, gpus_per_node,
                        host_memory_bytes, reserve_bytes, margin,
                        whole_nodes=whole_nodes, max_nodes=max_nodes),
        max_options=unsigned(max_options, UINT32_MAX, "max_options"))
    if len(tp_list) > 1:
        request.tp_sizes.extend(unsigned(t, UINT32_MAX, "tp_size")
                                for t in tp_list)
    if len(dp_list) > 1:
        request.extra_dp_sizes.extend(unsigned(e, UINT32_MAX, "extra_dp_size")
                                      for e in dp_list)
    request.frozen.extend(frozen_flags(model_or_params, frozen))
    if workload is not None:
        request.workload.CopyFrom(workload_message(workload))
    return request
