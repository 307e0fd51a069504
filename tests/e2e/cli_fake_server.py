"""A stand-in chunkplan server for the CLI's end-to-end tests.

It speaks the wire contract with stubs that protoc generates for Python at
test time from proto/chunkplan/v1/chunk_search.proto and grpc's
health/v1/health.proto, and answers Search with the oracle
(tests/oracle/chunk_search_oracle.py): the CLI's remote path is checked
against any server that implements the proto, not only ours.
"""

import importlib
import os
import shutil
import subprocess
import sys
import threading
from concurrent import futures

import grpc

# Where the health check reports each service; others get NOT_FOUND, as
# grpc's default health service answers.
HEALTH = {"": "SERVING", "down": "NOT_SERVING"}


def generate_stubs(protoc, out_dir):
    """Generates the Python messages of chunkplan.v1 (module
    chunkplan.v1.chunk_search_pb2) and grpc.health.v1 (module health_pb2:
    under its own path it would clash with the grpc package) into `out_dir`
    and puts that on sys.path. Raises CalledProcessError when protoc fails."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    health_src = os.path.join(
        os.environ.get("CHUNKPLAN_GRPC_PROTO_DIR", "/usr/share/grpc-proto"),
        "grpc", "health", "v1", "health.proto")
    health_dir = os.path.join(out_dir, "health_src")
    os.makedirs(health_dir, exist_ok=True)
    shutil.copy(health_src, os.path.join(health_dir, "health.proto"))
    for proto_dir, proto in ((os.path.join(root, "proto"),
                              "chunkplan/v1/chunk_search.proto"),
                             (health_dir, "health.proto")):
        subprocess.run([protoc, f"--proto_path={proto_dir}",
                        f"--python_out={out_dir}", proto],
                       check=True, capture_output=True, text=True)
    if out_dir not in sys.path:
        sys.path.insert(0, out_dir)


class FakeServer:
    """A gRPC server on `address` ("127.0.0.1:0" or "unix:/path") with
    chunkplan.v1.ChunkSearch/Search and grpc.health.v1.Health/Check.

    `answer(request_dict)` gives the oracle's answer dict; the server adds
    the engine that was asked for (CPU_PLATEAU for AUTO). With `hang`, Search
    waits until the call is cancelled or passes its deadline. Plan answers
    `plan` (a PlanResponse as a protobuf JSON dict; UNIMPLEMENTED without
    one). Every request received is kept in `requests`.
    """

    def __init__(self, answer, address="127.0.0.1:0", hang=False, plan=None):
        from google.protobuf import json_format
        self._json_format = json_format
        self._pb = importlib.import_module("chunkplan.v1.chunk_search_pb2")
        self._health = importlib.import_module("health_pb2")
        self._answer = answer
        self._hang = hang
        self._plan = plan
        self.requests = []
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        self._server.add_generic_rpc_handlers((
            grpc.method_handlers_generic_handler("chunkplan.v1.ChunkSearch", {
                "Search": grpc.unary_unary_rpc_method_handler(
                    self._search,
                    request_deserializer=self._pb.ChunkSearchRequest.FromString,
                    response_serializer=self._pb.ChunkSearchResponse
                    .SerializeToString),
                "Plan": grpc.unary_unary_rpc_method_handler(
                    self._plan_call,
                    request_deserializer=self._pb.PlanRequest.FromString,
                    response_serializer=self._pb.PlanResponse
                    .SerializeToString),
            }),
            grpc.method_handlers_generic_handler("grpc.health.v1.Health", {
                "Check": grpc.unary_unary_rpc_method_handler(
                    self._check,
                    request_deserializer=self._health.HealthCheckRequest
                    .FromString,
                    response_serializer=self._health.HealthCheckResponse
                    .SerializeToString),
            }),
        ))
        port = self._server.add_insecure_port(address)
        self.target = (address if address.startswith("unix:")
                       else f"127.0.0.1:{port}")

    def __enter__(self):
        self._server.start()
        return self

    def __exit__(self, *exc):
        self._server.stop(grace=None).wait()

    def _search(self, request, context):
        self.requests.append(request)
        if self._hang:
            done = threading.Event()
            context.add_callback(done.set)
            done.wait()
            context.abort(grpc.StatusCode.CANCELLED, "gave up")
        as_dict = self._json_format.MessageToDict(
            request, preserving_proto_field_name=True)
        answer = self._answer(as_dict)
        if "error" in answer:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, answer["error"])
        response = self._pb.ChunkSearchResponse()
        self._json_format.ParseDict(
            {k: answer[k] for k in
             ("configs", "total_param_size", "min_chunk_waste")}, response)
        response.engine = request.engine or self._pb.ENGINE_CPU_PLATEAU
        return response

    def _plan_call(self, request, context):
        self.requests.append(request)
        if self._plan is None:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, "no plan given")
        return self._json_format.ParseDict(self._plan,
                                           self._pb.PlanResponse())

    def _check(self, request, context):
        if request.service not in HEALTH:
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
        return self._health.HealthCheckResponse(
            status=self._health.HealthCheckResponse.ServingStatus.Value(
                HEALTH[request.service]))
