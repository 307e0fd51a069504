"""A stand-in chunkplan server in Python's gRPC, for what the real binary
cannot be made to do on demand: answer with any status code, hang, or speak
TLS. It serves the package's own generated stubs (chunkplan.v1), so the
client under test and the stand-in agree on the wire by construction of
protoc alone.

    with FakeServer(handler) as server:        # handler(request, context)
        client = chunkplan.Client(server.target)
"""

import json
from concurrent import futures

import grpc

from chunkplan.v1 import chunk_search_pb2, chunk_search_pb2_grpc
import oracle_cases  # noqa: F401  (puts tests/oracle on the path)
import models as oracle_models  # noqa: E402  (tests/oracle/models)


class _Servicer(chunk_search_pb2_grpc.ChunkSearchServicer):
    def __init__(self, handler, requests):
        self._handler = handler
        self._requests = requests

    def Search(self, request, context):
        self._requests.append(request)
        return self._handler(request, context)

    def Plan(self, request, context):
        self._requests.append(request)
        return self._handler(request, context)

    def Describe(self, request, context):
        """The oracle's description of the config (the commands describe
        the model before they search)."""
        d = oracle_models.describe(json.loads(request.hf_config_json),
                                   request.architecture or None)
        return chunk_search_pb2.ModelDescription(
            model_type=d.model_type, architecture=d.architecture,
            hidden_size=d.hidden_size, numels=d.numels, names=d.names,
            total=d.total)


class FakeServer:
    """A ChunkSearch server on 127.0.0.1 (free port) whose Search and Plan
    are `handler(request, context)` and whose Describe is the model
    oracle's; `credentials`: grpc server credentials for
    TLS, else plaintext. `requests` records what arrived; `target` is
    "127.0.0.1:PORT"."""

    def __init__(self, handler, credentials=None):
        self.requests = []
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        chunk_search_pb2_grpc.add_ChunkSearchServicer_to_server(
            _Servicer(handler, self.requests), self._server)
        address = "127.0.0.1:0"
        if credentials is None:
            port = self._server.add_insecure_port(address)
        else:
            port = self._server.add_secure_port(address, credentials)
        self.port = port
        self.target = f"127.0.0.1:{port}"

    def __enter__(self):
        self._server.start()
        return self

    def __exit__(self, *exc_info):
        self._server.stop(grace=None).wait(30)
