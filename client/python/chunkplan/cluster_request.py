"""The cluster a configuration is judged against, as a chunkplan.v1.Cluster:
Plan's (every option's verdict) and Layout's (LayoutRequest.cluster: the
layout's verdict). The verdict itself is the server's (docs/plan.md, "The
verdict"); nothing here judges.
"""

from chunkplan.request import (UINT32_MAX, UINT64_MAX, invalid_argument,
                               real, unsigned)
from chunkplan.v1 import chunk_search_pb2

# The keys of a cluster as Client.layout takes it in a dict.
CLUSTER_KEYS = ("device_memory_bytes", "gpus_per_node", "host_memory_bytes",
                "reserve_bytes", "margin")


def cluster(device_memory_bytes, world_sizes, gpus_per_node=1,
            host_memory_bytes=0, reserve_bytes=0, margin=None, *,
            whole_nodes=False, max_nodes=0):
    """The Cluster message: bytes per device, world sizes (an iterable of
    ints), ranks per node, host bytes per node (0: not checked), bytes
    kept free per device, and the margin, the share of device memory a
    configuration must leave free (None: unset, the server's 5%; the
    server judges its range); Plan's whole_nodes and max_nodes as the wire
    has them (world sizes gpus_per_node x 1 to max_nodes). Raises InvalidArgumentError naming the field
    for what does not fit the wire."""
    if isinstance(world_sizes, (str, bytes, int)):
        raise invalid_argument("cluster.world_sizes: expected a list of "
                               f"world sizes, got {world_sizes!r}")
    message = chunk_search_pb2.Cluster(
        device_memory_bytes=unsigned(device_memory_bytes, UINT64_MAX,
                                     "cluster.device_memory_bytes"),
        host_memory_bytes=unsigned(host_memory_bytes, UINT64_MAX,
                                   "cluster.host_memory_bytes"),
        gpus_per_node=unsigned(gpus_per_node, UINT32_MAX,
                               "cluster.gpus_per_node"),
        reserve_bytes=unsigned(reserve_bytes, UINT64_MAX,
                               "cluster.reserve_bytes"),
        whole_nodes=bool(whole_nodes),
        max_nodes=unsigned(max_nodes, UINT32_MAX, "cluster.max_nodes"))
    message.world_sizes.extend(
        unsigned(w, UINT32_MAX, f"cluster.world_sizes[{i}]")
        for i, w in enumerate(world_sizes))
    if margin is not None:
        message.margin = real(margin, "cluster.margin")
    return message


def layout_cluster(value):
    """LayoutRequest.cluster of Client.layout's `cluster`: a
    chunkplan.v1.Cluster as it is, or a dict of CLUSTER_KEYS
    (device_memory_bytes required; gpus_per_node 0 leaves host bytes per
    node uncounted; margin None: the server's 5%). No world sizes: the
    layout's is its largest degree. Raises InvalidArgumentError for what
    does not fit the wire."""
    if isinstance(value, chunk_search_pb2.Cluster):
        return value
    if not isinstance(value, dict) or "device_memory_bytes" not in value:
        raise invalid_argument(
            "cluster: expected a chunkplan.v1.Cluster or a dict with "
            f"device_memory_bytes (and {', '.join(CLUSTER_KEYS[1:])}), got "
            f"{value!r}")
    unknown = sorted(set(value) - set(CLUSTER_KEYS))
    if unknown:
        raise invalid_argument(f"cluster.{unknown[0]}: not a field of the "
                               f"cluster (expected {', '.join(CLUSTER_KEYS)})")
    return cluster(value["device_memory_bytes"], (),
                   value.get("gpus_per_node", 0),
                   value.get("host_memory_bytes", 0),
                   value.get("reserve_bytes", 0), value.get("margin"))
