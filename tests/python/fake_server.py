"""A stand-in chunkplan server in Python's gRPC, for what the real binary
cannot be made to do on demand: answer with any status code, hang, or speak
TLS. It serves the package's own generated stubs (chunkplan.v1), so the
client under test and the stand-in agree on the wire by construction of
protoc alone.

    with FakeServer(handler) as server:        # handler(request, context)
        client = chunkplan.Client(server.target)
"""

from concurrent import futures

import grpc

from chunkplan.v1 import chunk_search_pb2_grpc


class _Servicer(chunk_search_pb2_grpc.ChunkSearchServicer):
    def __init__(self, handler, requests):
        self._handler = handler
        self._requests = requests

    def Search(self, request, context):
        self._requests.append(request)
        return self._handler(request, context)


class FakeServer:
    """A ChunkSearch server on 127.0.0.1 (free port) whose Search is
    `handler(request, context)`; `credentials`: grpc server credentials for
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
