"""chunkplan: ColossalAI Gemini's search_chunk_configuration as one call to
a chunkplan server.

    import chunkplan
    config_dict, total, waste = chunkplan.search_chunk_configuration(
        model, search_range_m=32, search_interval=4096,
        target="localhost:50051")

The answer is exactly the seed's (colossalai.zero.gemini.chunk.search_utils):
the same dict in the same order, the same total and waste. A Client keeps
one channel (TLS optional) for many calls, and its layout() says what
Gemini really allocates (chunks, padding, each rank's bytes) as a Layout,
its frontier() how they move with the chunk size, as a Frontier, and its
plan() which configurations fit a cluster, ranked, as a Plan, each
option with the server's Verdict (a Layout asked with a cluster too; each with
table(), Layout and Plan with colossalai_kwargs(), Frontier with plot());
chunkplan.models lists the parameters of Hugging Face models from their
config.json; LocalClient answers the same calls without a server (the
chunkplan binary in a child process); every failure raises a
ChunkplanError subclass that carries the gRPC code and message.

This package is a library: every figure and verdict is the server's. The
command line is the C++ binary `chunkplan` (the `chunkplan` console script
and `python3 -m chunkplan` run it: chunkplan.binary); only the frontier's
picture is drawn here (`python3 -m chunkplan.plot`).
"""

try:
    from chunkplan.v1 import chunk_search_pb2 as _check_stubs  # noqa: F401
except ImportError as _error:  # the source tree, before the build
    raise ImportError(
        "chunkplan's generated stubs (chunkplan/v1/chunk_search_pb2*.py) are "
        "missing: build with CMake and use PYTHONPATH=<build>/python, or "
        "install the package assembled there") from _error

from chunkplan import models
from chunkplan.client import (DEFAULT_TARGET, Client, default_target,
                              search_chunk_configuration)
from chunkplan.errors import (AbortedError, AlreadyExistsError,
                              CancelledError, ChunkplanError, DataLossError,
                              DeadlineExceededError, FailedPreconditionError,
                              InternalError, InvalidArgumentError,
                              NotFoundError, OutOfRangeError,
                              PermissionDeniedError, ResourceExhaustedError,
                              UnauthenticatedError, UnavailableError,
                              UnimplementedError, UnknownError)
from chunkplan.frontier_result import Frontier, FrontierPoint
from chunkplan.layout_result import Chunk, GroupLayout, Layout, RankMemory
from chunkplan.local import LocalClient
from chunkplan.plan_result import Plan, PlanOption
from chunkplan.search_result import SearchResult
from chunkplan.verdict_result import Verdict

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_TARGET", "default_target", "Client", "LocalClient",
    "SearchResult",
    "search_chunk_configuration",
    "Layout", "GroupLayout", "Chunk", "RankMemory", "Frontier",
    "FrontierPoint", "Plan", "PlanOption", "Verdict",
    "models", "ChunkplanError", "AbortedError", "AlreadyExistsError",
    "CancelledError", "DataLossError", "DeadlineExceededError",
    "FailedPreconditionError", "InternalError", "InvalidArgumentError",
    "NotFoundError", "OutOfRangeError", "PermissionDeniedError",
    "ResourceExhaustedError", "UnauthenticatedError", "UnavailableError",
    "UnimplementedError", "UnknownError",
]
