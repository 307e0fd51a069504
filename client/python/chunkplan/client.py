"""The chunkplan client: ColossalAI's search_chunk_configuration, answered by
a chunkplan server over gRPC.

    config_dict, total, waste = chunkplan.search_chunk_configuration(
        model, search_range_m=32, search_interval=4096,
        target="localhost:50051")

returns exactly what colossalai.zero.gemini.chunk.search_chunk_configuration
returns for the same model and arguments. A Client keeps one channel open
for many calls and takes TLS options; Client.layout says what Gemini really
allocates for the search's configs (or given ones), rank by rank,
Client.frontier how padding and memory move with the chunk size, and
Client.plan which configurations fit a cluster.
"""

import os

import grpc

from chunkplan import request as _request
# Re-exported: docs/deploy.md names chunkplan.client.DEFAULT_OPTIONS.
from chunkplan.channel_options import (  # noqa: F401
    DEFAULT_OPTIONS, MAX_MESSAGE_BYTES, SERVICE_CONFIG)
from chunkplan.errors import from_rpc_error
from chunkplan.frontier_result import Frontier
from chunkplan.layout_request import build_layout_request
from chunkplan.layout_result import Layout
from chunkplan.hf_model import HfModel
from chunkplan.plan_request import build_plan_request
from chunkplan.plan_result import Plan
from chunkplan.search_result import SearchResult
from chunkplan.v1 import chunk_search_pb2, chunk_search_pb2_grpc

DEFAULT_TARGET = "localhost:50051"
# The environment variable that names the server where no target is given
# (the trainer sidecar's manifest sets it: deploy/kubernetes/examples).
TARGET_ENV = "CHUNKPLAN_TARGET"


def default_target():
    """The target a Client takes when given none: $CHUNKPLAN_TARGET where it
    is set and not empty, else DEFAULT_TARGET. Read at each call."""
    return os.environ.get(TARGET_ENV) or DEFAULT_TARGET


def _pem(value, name):
    """PEM bytes from bytes, str text that holds PEM, or a path."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str) and "-----BEGIN" in value:
        return value.encode()
    if isinstance(value, (str, os.PathLike)):
        with open(value, "rb") as f:
            return f.read()
    raise TypeError(f"{name}: expected PEM bytes or a path, got "
                    f"{type(value).__name__}")


class Client:
    """One channel to a chunkplan server, for many calls; thread-safe.

    target: "host:port", "unix:/path" or any gRPC target string; None (the
    default): $CHUNKPLAN_TARGET, else localhost:50051 (default_target()).
    Plaintext unless TLS is asked for: tls=True (the system's roots), or any
    of root_certificates (the CA to trust), private_key and
    certificate_chain (the client's own, for mutual TLS) — each PEM bytes or
    a path to a PEM file — or ready-made grpc `credentials`.
    tls_server_name: the name to check the server's certificate against
    where it differs from the target's host. options: extra gRPC channel
    arguments, a list of (key, value), applied after DEFAULT_OPTIONS (the
    client configuration of docs/deploy.md: round_robin, UNAVAILABLE
    retried, 64 MiB messages), so that they override them.

    Use as a context manager, or call close().
    """

    def __init__(self, target=None, *, tls=False,
                 root_certificates=None, private_key=None,
                 certificate_chain=None, tls_server_name=None,
                 credentials=None, options=None):
        if target is None:
            target = default_target()
        self.target = target
        channel_options = list(DEFAULT_OPTIONS) + list(options or [])
        if tls_server_name is not None:
            channel_options.append(("grpc.ssl_target_name_override",
                                    tls_server_name))
        wants_tls = (tls or credentials is not None
                     or root_certificates is not None
                     or private_key is not None
                     or certificate_chain is not None)
        if (private_key is None) != (certificate_chain is None):
            raise ValueError("private_key and certificate_chain go together")
        if credentials is None and wants_tls:
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_pem(root_certificates, "root_certificates"),
                private_key=_pem(private_key, "private_key"),
                certificate_chain=_pem(certificate_chain, "certificate_chain"))
        if credentials is not None:
            self._channel = grpc.secure_channel(target, credentials,
                                                options=channel_options)
        else:
            self._channel = grpc.insecure_channel(target,
                                                  options=channel_options)
        self._stub = chunk_search_pb2_grpc.ChunkSearchStub(self._channel)

    def close(self):
        """Closes the channel; calls in flight are cancelled."""
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def _call(self, method, request, timeout, wait_for_ready):
        """One unary call; its grpc.RpcError raised as a ChunkplanError."""
        try:
            return method(request, timeout=timeout,
                          wait_for_ready=wait_for_ready)
        except grpc.RpcError as error:
            raise from_rpc_error(error) from error

    def search_request(self, request, *, timeout=None, wait_for_ready=False):
        """Sends a ready ChunkSearchRequest; returns the ChunkSearchResponse.
        timeout: seconds for the whole call (None: no deadline).
        wait_for_ready: wait for an unreachable server to come up, within
        `timeout`, instead of failing at once with UnavailableError.
        Raises the ChunkplanError subclass of the call's status."""
        return self._call(self._stub.Search, request, timeout,
                          wait_for_ready)

    def layout_request(self, request, *, timeout=None, wait_for_ready=False):
        """Sends a ready LayoutRequest; returns the LayoutResponse. timeout,
        wait_for_ready and errors as search_request()."""
        return self._call(self._stub.Layout, request, timeout,
                          wait_for_ready)

    def frontier_request(self, request, *, timeout=None,
                         wait_for_ready=False):
        """Sends a ready LayoutRequest to Frontier; returns the
        FrontierResponse. timeout, wait_for_ready and errors as
        search_request()."""
        return self._call(self._stub.Frontier, request, timeout,
                          wait_for_ready)

    def plan_request(self, request, *, timeout=None, wait_for_ready=False):
        """Sends a ready PlanRequest to Plan; returns the PlanResponse.
        timeout, wait_for_ready and errors as search_request()."""
        return self._call(self._stub.Plan, request, timeout, wait_for_ready)

    def describe_request(self, config, *, timeout=None,
                         wait_for_ready=False):
        """Sends a ready ModelConfig to Describe; returns the
        ModelDescription. timeout, wait_for_ready and errors as
        search_request()."""
        return self._call(self._stub.Describe, config, timeout,
                          wait_for_ready)

    def describe(self, config_json, architecture=None, *, timeout=None):
        """The parameters of the model that `config_json` (the text of a
        Hugging Face config.json) describes, as a chunkplan.models.HfModel;
        architecture: the class to list (default: the config's
        architectures[0]). Raises InvalidArgumentError naming what is wrong
        with the config, and the call's other ChunkplanErrors."""
        request = chunk_search_pb2.ModelConfig(
            hf_config_json=config_json, architecture=architecture or "")
        return HfModel.from_description(
            self.describe_request(request, timeout=timeout))

    def search(self, model_or_params, search_range_m, search_interval,
               min_chunk_size_m=32, filter_exlarge_params=True, *,
               timeout=None, dp_degree=1, engine="auto",
               wait_for_ready=False):
        """The search, with the server's details: a SearchResult.

        model_or_params: a torch.nn.Module (numels from model.parameters(),
        as the seed visits them), a list of numels, or a list of
        (numel, dp_degree) pairs. dp_degree: the degree of every parameter
        given without one. engine: "auto", "cpu_sweep", "cpu_plateau" or
        "cuda". Other arguments as the seed's, and as search_request().
        Raises InvalidArgumentError for arguments that cannot be sent, and
        the ChunkplanError subclass of the call's status.
        """
        request = _request.build_request(
            model_or_params, search_range_m, search_interval,
            min_chunk_size_m, filter_exlarge_params, dp_degree=dp_degree,
            engine=engine)
        response = self.search_request(request, timeout=timeout,
                                       wait_for_ready=wait_for_ready)
        return SearchResult.from_response(response)

    def layout(self, model_or_params, search_range_m=None,
               search_interval=None, min_chunk_size_m=32,
               filter_exlarge_params=True, *, configs=None, frozen=None,
               dp_degree=1, precision="fp16", master_weights=True,
               gradient_accumulation=False, pin_memory=True,
               optimizer="adam", engine="auto", objective="seed_waste",
               workload=None, cluster=None, timeout=None,
               wait_for_ready=False, **placement):
        """What Gemini allocates for these parameters: a Layout (its chunks,
        padding and the bytes of the most and least loaded rank).

        placement: GeminiPlugin's placement keywords, placement ("static" or
        "auto"), shard_param_frac, offload_optim_frac, offload_param_frac
        and device_memory_bytes (auto: whether warm-up moves chunks), as
        layout_request.gemini_settings takes them (docs/placement.md);
        Layout.placement says what they did.

        model_or_params, dp_degree, engine and the search arguments: as
        search(); the search runs unless `configs` are given, and then
        search_range_m and search_interval may be left out. configs: the
        seed's config_dict ({dp_degree: {"chunk_size": int,
        "keep_gathered": bool}}, e.g. a SearchResult's) or a list of
        (dp_degree, chunk_size, keep_gathered), laid out in that order.
        frozen: one bool per parameter (requires_grad=False: never placed in
        a chunk); None takes `not p.requires_grad` from a torch.nn.Module and
        none frozen for numels. GeminiPlugin's settings: precision "fp16" or
        "bf16", master_weights, gradient_accumulation (its
        enable_gradient_accumulation), pin_memory, optimizer "adam" or
        "none". objective: which candidate the search picks, "seed_waste"
        (the seed's), "layout_padding" or "peak_rank_bytes" (see
        frontier()); another than "seed_waste" needs the search (with
        configs the server refuses it). workload: None, or a dict as plan()
        takes it, for Layout.activation_bytes, an activation ESTIMATE
        (decoder-only models given by config, a chunkplan.v1.ModelConfig).
        cluster: None, or the device to judge the layout against, a dict
        {"device_memory_bytes": int, "reserve_bytes": int, "margin": float
        (None: the server's 5%), "host_memory_bytes": int, "gpus_per_node":
        int} (all but the first optional) or a chunkplan.v1.Cluster without
        world sizes; Layout.verdict is then the server's verdict (None
        without a cluster). timeout, wait_for_ready: as search_request().

        Layout.search is the SearchResult when the search ran (its
        min_chunk_waste the seed's waste at the candidate laid out), else
        None.
        Raises InvalidArgumentError for arguments that cannot be sent (and,
        from the server, for configs or frozen it refuses: a config for an
        absent degree, a degree without one or with two, a chunk size of 0
        or, not kept gathered, not a multiple of its degree, frozen of the
        wrong length), and the ChunkplanError subclass of the call's status.
        """
        request = build_layout_request(
            model_or_params, search_range_m, search_interval,
            min_chunk_size_m, filter_exlarge_params, configs=configs,
            frozen=frozen, dp_degree=dp_degree, engine=engine,
            objective=objective, workload=workload, cluster=cluster,
            precision=precision,
            master_weights=master_weights,
            gradient_accumulation=gradient_accumulation,
            pin_memory=pin_memory, optimizer=optimizer, **placement)
        response = self.layout_request(request, timeout=timeout,
                                       wait_for_ready=wait_for_ready)
        return Layout.from_response(response, request)

    def frontier(self, model_or_params, search_range_m, search_interval,
                 min_chunk_size_m=32, filter_exlarge_params=True, *,
                 objective="seed_waste", frozen=None, dp_degree=1,
                 precision="fp16", master_weights=True,
                 gradient_accumulation=False, pin_memory=True,
                 optimizer="adam", engine="auto", timeout=None,
                 wait_for_ready=False, **placement):
        """The search's candidates scored by `objective`: a Frontier of the
        candidates whose value is a new strict minimum, in grid order, each
        with all three measures; its last point is the objective's best
        (the candidate layout(..., objective=objective) lays out).

        objective: "seed_waste" (the seed's waste at the candidate),
        "layout_padding" (the layout's real padding at C', the candidate
        rounded up to the lcm of the degrees) or "peak_rank_bytes" (the
        most loaded rank's device bytes at C' plus the gathered buffer).
        The other arguments as layout(), without configs: the frontier
        always searches. engine "auto", "cpu_sweep" and "cpu_plateau"
        serve every objective; "cuda" (where the
        server has a usable device) only the two layout objectives. Raises
        InvalidArgumentError for arguments that cannot be sent (and, from
        the server, for an engine that cannot serve the objective, naming
        it), and the ChunkplanError subclass of the call's status.
        """
        request = build_layout_request(
            model_or_params, search_range_m, search_interval,
            min_chunk_size_m, filter_exlarge_params, frozen=frozen,
            dp_degree=dp_degree, engine=engine, objective=objective,
            precision=precision, master_weights=master_weights,
            gradient_accumulation=gradient_accumulation,
            pin_memory=pin_memory, optimizer=optimizer, **placement)
        response = self.frontier_request(request, timeout=timeout,
                                         wait_for_ready=wait_for_ready)
        return Frontier.from_response(response, request)

    def plan(self, model_or_params, *, device_memory_bytes, world_sizes=(),
             whole_nodes=False, max_nodes=0, gpus_per_node=1,
             host_memory_bytes=0, reserve_bytes=0, margin=None,
             search_range_m=32, search_interval=1024, min_chunk_size_m=32,
             filter_exlarge_params=True, frozen=None, precision="fp16",
             master_weights=True, gradient_accumulation=False,
             pin_memory=True, optimizer="adam", workload=None, max_options=0,
             engine="auto", timeout=None, wait_for_ready=False, tp_size=1,
             extra_dp_size=1, sequence_parallelism=False):
        """The Gemini configurations that fit a cluster, ranked: a Plan
        (docs/plan.md; its options[0] is the one to take when it fits).

        model_or_params: a chunkplan.v1.ModelConfig (e.g.
        chunkplan.models.model_config("config.json"): the server describes
        it; needed for `workload`), a torch.nn.Module or a list of numels.
        The cluster: device_memory_bytes per device, world_sizes (the
        data-parallel degrees the job may use) or whole_nodes=True with
        max_nodes (the world sizes gpus_per_node x 1 to max_nodes: the
        first option that fits is then the fewest nodes; every option
        names its `nodes`, the server's), gpus_per_node (ranks per
        node), host_memory_bytes per node (0: not checked), reserve_bytes
        kept free per device, margin the share of device memory an option
        must leave free to fit (None: the server's 5%; 0: none). Every
        option carries the server's verdict (PlanOption.verdict: fits,
        tight, headroom, why_not). workload: None, or {"micro_batch": int,
        "sequence_length": int, "activation_checkpointing": bool,
        "flash_attention": bool} to count an activation ESTIMATE (decoder-
        only models given by config). max_options: at most this many (0:
        the server's 10). The search settings default to GeminiPlugin's
        (range 32 Mi, interval 1024, minimum 32 Mi); pass its hidden_dim as
        search_interval when the trainer does. frozen and the fixed Gemini
        choices (precision, master_weights, gradient_accumulation,
        pin_memory, optimizer) as layout(); Plan chooses the placement.
        tp_size: GeminiPlugin's tp_size, a list to try, or "search" (1, 2,
        4, 8 within a node where the model's policy allows);
        extra_dp_size: one degree or a list; sequence_parallelism:
        enable_sequence_parallelism. Each option names its mesh
        (PlanOption.gemini.tp_size, extra_dp_size, zero_size).
        Raises InvalidArgumentError for arguments that cannot be sent, and
        the ChunkplanError subclass of the call's status.
        """
        request = build_plan_request(
            model_or_params, device_memory_bytes=device_memory_bytes,
            world_sizes=world_sizes, whole_nodes=whole_nodes,
            max_nodes=max_nodes, gpus_per_node=gpus_per_node,
            host_memory_bytes=host_memory_bytes, reserve_bytes=reserve_bytes,
            margin=margin, search_range_m=search_range_m, search_interval=search_interval,
            min_chunk_size_m=min_chunk_size_m,
            filter_exlarge_params=filter_exlarge_params, frozen=frozen,
            precision=precision, master_weights=master_weights,
            gradient_accumulation=gradient_accumulation,
            pin_memory=pin_memory, optimizer=optimizer, workload=workload,
            max_options=max_options, engine=engine, tp_size=tp_size,
            extra_dp_size=extra_dp_size,
            sequence_parallelism=sequence_parallelism)
        response = self.plan_request(request, timeout=timeout,
                                     wait_for_ready=wait_for_ready)
        return Plan.from_response(response, request)

    def search_chunk_configuration(self, model_or_params, search_range_m,
                                   search_interval, min_chunk_size_m=32,
                                   filter_exlarge_params=True, *,
                                   timeout=None, dp_degree=1, engine="auto",
                                   wait_for_ready=False):
        """The seed's tuple, (config_dict, total_param_size,
        min_chunk_waste); see search() for the arguments and errors."""
        return self.search(
            model_or_params, search_range_m, search_interval,
            min_chunk_size_m, filter_exlarge_params, timeout=timeout,
            dp_degree=dp_degree, engine=engine,
            wait_for_ready=wait_for_ready).as_tuple()


def search_chunk_configuration(model_or_params, search_range_m,
                               search_interval, min_chunk_size_m=32,
                               filter_exlarge_params=True, *,
                               target=None, timeout=None,
                               dp_degree=1):
    """ColossalAI's search_chunk_configuration, answered by the chunkplan
    server at `target` (plaintext; use a Client for TLS or many calls;
    None: default_target(), $CHUNKPLAN_TARGET or localhost:50051).

    Returns (config_dict, total_param_size, min_chunk_waste), exactly the
    seed's: config_dict is {dp_degree: {"chunk_size": int,
    "keep_gathered": bool}} in the seed's order. model_or_params: a
    torch.nn.Module, a list of numels, or a list of (numel, dp_degree)
    pairs; dp_degree is the degree of the parameters given without one
    (the seed's data-parallel world size). timeout: seconds (None: none).
    Raises a ChunkplanError subclass (InvalidArgumentError,
    UnavailableError, DeadlineExceededError, ...) on failure.
    """
    with Client(target) as client:
        return client.search_chunk_configuration(
            model_or_params, search_range_m, search_interval,
            min_chunk_size_m, filter_exlarge_params, timeout=timeout,
            dp_degree=dp_degree)
