#!/usr/bin/python3
"""End-to-end tests of chunkplan-server: the real binary on loopback.

Each test class starts its own server with --listen=127.0.0.1:0 and reads
the port from the ready line ("chunkplan-server listening on HOST:PORT").
Searches and health checks go through the `chunkplan` CLI where it is built;
what the CLI cannot send (reflection, raw bytes, an oversized message, many
calls at once) goes through Python's grpc (Debian's python3-grpcio) with
message classes that protoc generates at test time, and a raw TCP socket.

Expected answers come from the oracle (tests/oracle, Python + numpy) and
from ColossalAI's published GPT-2 figure (chunk size 527872), never from
chunkplan itself.

Environment:
  CHUNKPLAN_SERVER          the chunkplan-server binary (required)
  CHUNKPLAN_HELD_SERVER     chunkplan-held-server: the same server whose
                            engines hold a search marked with HELD_NUMEL
                            (tests that need a call still running use it,
                            and skip without it)
  CHUNKPLAN_CLI             the chunkplan binary (tests that need it skip
                            without it)
  CHUNKPLAN_PROTOC          protoc (default: protoc on PATH)
  CHUNKPLAN_GRPC_PROTO_DIR  holds grpc/health/v1/health.proto and
                            grpc/reflection/v1alpha/reflection.proto
                            (default /usr/share/grpc-proto)

  CHUNKPLAN_SERVER=build/bin/chunkplan-server \
  CHUNKPLAN_CLI=build/bin/chunkplan /usr/bin/python3 tests/e2e/server_test.py -v
"""

import atexit
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import grpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
ORACLE = os.path.join(ROOT, "tests", "oracle", "chunk_search_oracle.py")
GPT2_EXAMPLE = os.path.join(ROOT, "examples", "gpt2_colossalai.json")
# ColossalAI's published answer for its GPT-2 test model.
GPT2_CHUNK_SIZE = 527872
SEARCH = "/chunkplan.v1.ChunkSearch/Search"
SERVICE = "chunkplan.v1.ChunkSearch"
# Bound on any one wait: a hung server fails the test instead of hanging it.
PATIENCE_S = 120
READY = re.compile(r"chunkplan-server listening on (\S+?)(?:\"|\s|$)")
# The parameter size that marks a search for chunkplan-held-server
# (testing/held_engine.h, kHeldNumel): its engines hold the search until the
# call is stopped or the server's release file exists (Server.release()).
# A test that needs a call still running uses it, never an input it hopes
# is slow enough.
HELD_NUMEL = 999_999_937

_stubs_dir = None


def stubs():
    """Python message modules for chunkplan.v1, grpc.health.v1 and
    grpc.reflection.v1alpha, generated once per run with protoc. The two
    grpc protos are copied under plain names (health.proto,
    reflection.proto) so that their modules do not shadow the grpc
    package."""
    global _stubs_dir
    if _stubs_dir is None:
        protoc = os.environ.get("CHUNKPLAN_PROTOC") or shutil.which("protoc")
        if not protoc:
            raise unittest.SkipTest("protoc not found (CHUNKPLAN_PROTOC)")
        grpc_protos = os.environ.get("CHUNKPLAN_GRPC_PROTO_DIR",
                                     "/usr/share/grpc-proto")
        out = tempfile.mkdtemp(prefix="chunkplan_server_test_stubs_")
        atexit.register(shutil.rmtree, out, ignore_errors=True)
        copied = os.path.join(out, "src")
        os.makedirs(copied)
        for rel, name in (("grpc/health/v1/health.proto", "health.proto"),
                          ("grpc/reflection/v1alpha/reflection.proto",
                           "reflection.proto")):
            shutil.copy(os.path.join(grpc_protos, rel),
                        os.path.join(copied, name))
        for proto_dir, proto in (
                (os.path.join(ROOT, "proto"), "chunkplan/v1/chunk_search.proto"),
                (copied, "health.proto"), (copied, "reflection.proto")):
            subprocess.run([protoc, f"--proto_path={proto_dir}",
                            f"--python_out={out}", proto],
                           check=True, capture_output=True, text=True,
                           timeout=PATIENCE_S)
        sys.path.insert(0, out)
        _stubs_dir = out
    from chunkplan.v1 import chunk_search_pb2
    import health_pb2
    import reflection_pb2
    return chunk_search_pb2, health_pb2, reflection_pb2


def ask_oracle(requests):
    """The oracle's answers (dicts) to request dicts, in order."""
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    result = subprocess.run(["/usr/bin/python3", ORACLE, "--jsonl"],
                            input=lines, capture_output=True, text=True,
                            check=True, timeout=PATIENCE_S)
    answers = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(answers) == len(requests), result.stdout
    return answers


def answer_part(response):
    """(configs, total, waste) of a response or oracle answer dict."""
    configs = [(int(c["dp_degree"]), int(c["chunk_size"]),
                bool(c["keep_gathered"])) for c in response["configs"]]
    return (configs, int(response["total_param_size"]),
            int(response["min_chunk_waste"]))


def load(path):
    with open(path) as f:
        return json.load(f)


def random_requests(count, seed):
    """Requests from a fixed seed that the oracle answers quickly."""
    rng = random.Random(seed)
    requests = []
    for _ in range(count):
        n = rng.randint(1, 80)
        request = {
            "numels": [rng.choice([rng.randint(1, 300000),
                                   rng.randint(1, 20000)]) for _ in range(n)],
            "search_range_m": rng.choice([0, 0.25, 0.5]),
            "search_interval": rng.choice([32, 128, 1000]),
            "min_chunk_size_m": rng.choice([0, 0.01, 0.1]),
            "filter_exlarge_params": rng.random() < 0.5,
            "engine": rng.choice(["ENGINE_AUTO", "ENGINE_CPU_SWEEP",
                                  "ENGINE_CPU_PLATEAU"]),
        }
        if rng.random() < 0.5:
            request["dp_degrees"] = [rng.choice([1, 2, 4]) for _ in range(n)]
        requests.append(request)
    return requests


def held_request(params, search_range_m, seed, engine="ENGINE_CPU_SWEEP"):
    """A request that chunkplan-held-server holds: HELD_NUMEL and `params`
    - 1 random sizes, interval 1, no minimum and no filter (so every size,
    the marker too, is swept); round(search_range_m * 2**20) + 1
    candidates once released."""
    rng = random.Random(seed)
    return {"numels": [HELD_NUMEL] + [rng.randint(1000, 2000)
                                      for _ in range(params - 1)],
            "search_range_m": search_range_m, "search_interval": 1,
            "min_chunk_size_m": 0, "filter_exlarge_params": False,
            "engine": engine}


def run_server_to_exit(*flags):
    """Runs chunkplan-server on port 0 with `flags` until it exits (for flags
    that must make it refuse to start); skips the test without the binary."""
    binary = os.environ.get("CHUNKPLAN_SERVER", "")
    if not os.access(binary, os.X_OK):
        raise unittest.SkipTest(f"CHUNKPLAN_SERVER={binary!r} is not executable")
    return subprocess.run([binary, "--listen=127.0.0.1:0", *flags],
                          capture_output=True, text=True, timeout=PATIENCE_S)


class Server:
    """chunkplan-server started on 127.0.0.1:0 (or `listen`) with `flags`;
    its log (standard error) is collected line by line. `preexec_fn` runs in
    the child before the binary (e.g. to lower its descriptor limit). With
    `held`, chunkplan-held-server instead, whose held searches (HELD_NUMEL)
    run once release() is called."""

    def __init__(self, *flags, listen="127.0.0.1:0", preexec_fn=None,
                 held=False):
        variable = "CHUNKPLAN_HELD_SERVER" if held else "CHUNKPLAN_SERVER"
        binary = os.environ.get(variable, "")
        if not os.access(binary, os.X_OK):
            raise unittest.SkipTest(f"{variable}={binary!r} is not executable")
        self.release_file = None
        if held:
            self.release_file = os.path.join(
                tempfile.mkdtemp(prefix="chunkplan_held_"), "release")
            flags += (f"--held_release_file={self.release_file}",)
        self.process = subprocess.Popen(
            [binary, f"--listen={listen}", *flags], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True, preexec_fn=preexec_fn)
        self.lines = []
        self.changed = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        match = self.wait_for(READY)
        if match is None:
            self.process.kill()
            self._reap()
            raise AssertionError("no ready line from chunkplan-server:\n"
                                 + self.log())
        self.address = match.group(1)

    def _read(self):
        for line in self.process.stdout:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.lines.append(None)  # end of the log
            self.changed.notify_all()

    def log(self):
        with self.changed:
            return "".join(l for l in self.lines if l is not None)

    def wait_for(self, pattern, count=1):
        """The count-th match of `pattern` in the log, or None if the log
        ends or PATIENCE_S passes first."""
        deadline = time.monotonic() + PATIENCE_S
        with self.changed:
            while True:
                matches = [m for m in (pattern.search(l) for l in self.lines
                                       if l is not None) if m]
                if len(matches) >= count:
                    return matches[count - 1]
                left = deadline - time.monotonic()
                if None in self.lines or left <= 0:
                    return None
                self.changed.wait(left)

    def release(self):
        """Lets the held searches run (chunkplan-held-server only)."""
        with open(self.release_file, "w"):
            pass

    def stop(self, sig=signal.SIGTERM):
        """Sends `sig` and returns the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=PATIENCE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise
        finally:
            self._reap()

    def _reap(self):
        self.process.wait()
        self.reader.join(timeout=PATIENCE_S)
        self.process.stdout.close()
        if self.release_file is not None:
            shutil.rmtree(os.path.dirname(self.release_file),
                          ignore_errors=True)

    def channel(self):
        return grpc.insecure_channel(self.address)


def search_stub(channel):
    pb, _, _ = stubs()
    return channel.unary_unary(
        SEARCH, request_serializer=pb.ChunkSearchRequest.SerializeToString,
        response_deserializer=pb.ChunkSearchResponse.FromString)


def to_message(request_dict):
    from google.protobuf import json_format
    pb, _, _ = stubs()
    return json_format.ParseDict(request_dict, pb.ChunkSearchRequest())


def to_dict(response):
    from google.protobuf import json_format
    return json_format.MessageToDict(response,
                                     preserving_proto_field_name=True,
                                     including_default_value_fields=True)


def cli():
    path = os.environ.get("CHUNKPLAN_CLI", "")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"CHUNKPLAN_CLI={path!r} is not executable")
    return path


def run_cli(*args):
    return subprocess.run([cli(), *args], capture_output=True, text=True,
                          timeout=PATIENCE_S)


class ServingTest(unittest.TestCase):
    """One server with default limits: answers, health, reflection, and
    serving on after bad input."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.channel = cls.server.channel()
        cls.tmp = tempfile.mkdtemp(prefix="chunkplan_server_test_")

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        code = cls.server.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        assert code == 0, f"exit code {code}\n{cls.server.log()}"

    def assert_serving(self):
        """The GPT-2 example is answered with the published chunk size."""
        response = search_stub(self.channel)(to_message(load(GPT2_EXAMPLE)),
                                             timeout=PATIENCE_S)
        self.assertEqual([(c.dp_degree, c.chunk_size) for c in
                          response.configs], [(1, GPT2_CHUNK_SIZE)])

    def test_cli_search_equals_the_oracle(self):
        requests = [load(GPT2_EXAMPLE)] + random_requests(8, 20240602)
        expected = ask_oracle(requests)
        for i, (request, want) in enumerate(zip(requests, expected)):
            with self.subTest(i=i):
                path = os.path.join(self.tmp, f"request{i}.json")
                with open(path, "w") as f:
                    json.dump(request, f)
                result = run_cli("search", "--server", self.server.address,
                                 "--request", path, "--deadline", "60s")
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertNotIn("error", want)
                self.assertEqual(answer_part(json.loads(result.stdout)),
                                 answer_part(want))
        self.assertEqual(answer_part(expected[0])[0],
                         [(1, GPT2_CHUNK_SIZE, False)])

    def test_grpc_search_equals_the_oracle(self):
        requests = random_requests(8, 7)
        expected = ask_oracle(requests)
        call = search_stub(self.channel)
        for i, (request, want) in enumerate(zip(requests, expected)):
            with self.subTest(i=i):
                response = call(to_message(request), timeout=PATIENCE_S)
                self.assertEqual(answer_part(to_dict(response)),
                                 answer_part(want))

    def test_health_serving(self):
        for service in ("", SERVICE):
            with self.subTest(service=service):
                result = run_cli("health", "--server", self.server.address,
                                 "--service", service)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(result.stdout, "SERVING\n")

    def test_health_over_grpc(self):
        _, health, _ = stubs()
        check = self.channel.unary_unary(
            "/grpc.health.v1.Health/Check",
            request_serializer=health.HealthCheckRequest.SerializeToString,
            response_deserializer=health.HealthCheckResponse.FromString)
        for service in ("", SERVICE):
            response = check(health.HealthCheckRequest(service=service),
                             timeout=PATIENCE_S)
            self.assertEqual(response.status,
                             health.HealthCheckResponse.SERVING)
        with self.assertRaises(grpc.RpcError) as caught:
            check(health.HealthCheckRequest(service="no.such.Service"),
                  timeout=PATIENCE_S)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.NOT_FOUND)

    def test_reflection_lists_the_services(self):
        _, _, reflection = stubs()
        info = self.channel.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=(
                reflection.ServerReflectionRequest.SerializeToString),
            response_deserializer=(
                reflection.ServerReflectionResponse.FromString))
        requests = [reflection.ServerReflectionRequest(list_services=""),
                    reflection.ServerReflectionRequest(
                        file_containing_symbol=SERVICE)]
        responses = list(info(iter(requests), timeout=PATIENCE_S))
        self.assertEqual(len(responses), 2)
        names = {s.name for s in
                 responses[0].list_services_response.service}
        self.assertTrue({SERVICE, "grpc.health.v1.Health",
                         "grpc.reflection.v1alpha.ServerReflection"} <= names,
                        names)
        # The descriptor of chunk_search.proto, with the Search method.
        from google.protobuf import descriptor_pb2
        files = [descriptor_pb2.FileDescriptorProto.FromString(b) for b in
                 responses[1].file_descriptor_response.file_descriptor_proto]
        services = {(f.package, s.name, m.name) for f in files
                    for s in f.service for m in s.method}
        self.assertIn(("chunkplan.v1", "ChunkSearch", "Search"), services)

    def test_malformed_bytes_are_rejected_and_serving_goes_on(self):
        raw = self.channel.unary_unary(SEARCH)  # bytes in, bytes out
        # A truncated varint: not a protobuf message at all.
        with self.assertRaises(grpc.RpcError) as caught:
            raw(b"\x08\xff\xff\xff", timeout=PATIENCE_S)
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("not a valid chunkplan.v1.ChunkSearchRequest",
                      caught.exception.details())
        self.assert_serving()
        # A well-formed message whose only field has the wrong wire type
        # (field 1 as fixed32): parsed as unknown, so numels is empty.
        with self.assertRaises(grpc.RpcError) as caught:
            raw(b"\x0d\x01\x00\x00\x00", timeout=PATIENCE_S)
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("numels", caught.exception.details())
        self.assert_serving()

    def test_invalid_argument_names_the_field(self):
        request = {"numels": [1, 2, 3, 4], "dp_degrees": [1, 1, 1, 0],
                   "search_range_m": 1, "search_interval": 128}
        with self.assertRaises(grpc.RpcError) as caught:
            search_stub(self.channel)(to_message(request), timeout=PATIENCE_S)
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("dp_degrees[3]", caught.exception.details())
        self.assert_serving()

    def test_not_http2_on_the_port_and_serving_goes_on(self):
        host, port = self.server.address.rsplit(":", 1)
        with socket.create_connection((host, int(port)),
                                      timeout=PATIENCE_S) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + os.urandom(256))
            # The server closes the connection (or answers and closes).
            while s.recv(4096):
                pass
        self.assert_serving()

    def test_failed_calls_are_logged_and_ok_calls_are_not(self):
        # At the default level (info) a call answered OK writes no line (the
        # metrics count it); a failed one writes its line.
        request = load(GPT2_EXAMPLE)
        request["engine"] = "ENGINE_CPU_SWEEP"
        search_stub(self.channel)(to_message(request), timeout=PATIENCE_S)
        bad = dict(request, search_interval=0)
        with self.assertRaises(grpc.RpcError):
            search_stub(self.channel)(to_message(bad), timeout=PATIENCE_S)
        line = self.server.wait_for(
            re.compile(r"search peer=ipv4:127\.0\.0\.1:\d+ params=28 "
                       r"candidates=0 engine=CPU_SWEEP micros=\d+ "
                       r"code=INVALID_ARGUMENT message=\"search_interval"))
        self.assertIsNotNone(line, self.server.log())
        # Each call is logged before it is answered: the OK call would be
        # in the log by now.
        self.assertNotRegex(self.server.log(), r"search peer=.* code=OK")


class DebugLogTest(unittest.TestCase):
    """--log_level=debug: every call has its line."""

    def test_one_log_line_per_ok_call(self):
        server = Server("--log_level=debug")
        try:
            with server.channel() as channel:
                request = load(GPT2_EXAMPLE)
                request["engine"] = "ENGINE_CPU_SWEEP"
                search_stub(channel)(to_message(request), timeout=PATIENCE_S)
                line = server.wait_for(
                    re.compile(r"search peer=ipv4:127\.0\.0\.1:\d+ "
                               r"params=28 candidates=8193 engine=CPU_SWEEP "
                               r"micros=\d+ code=OK"))
                self.assertIsNotNone(line, server.log())
        finally:
            self.assertEqual(server.stop(), 0, server.log())


class LimitsTest(unittest.TestCase):
    """A server with a small receive message size."""

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--max_receive_message_size=1024",
                            "--log_format=json")
        cls.channel = cls.server.channel()

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        code = cls.server.stop()
        assert code == 0, f"exit code {code}\n{cls.server.log()}"

    def test_oversized_message_is_resource_exhausted(self):
        request = {"numels": list(range(1000, 3000)), "search_range_m": 0,
                   "search_interval": 128, "min_chunk_size_m": 0}
        self.assertGreater(to_message(request).ByteSize(), 1024)
        call = search_stub(self.channel)
        with self.assertRaises(grpc.RpcError) as caught:
            call(to_message(request), timeout=PATIENCE_S)
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.RESOURCE_EXHAUSTED)
        # A request under the limit is still served.
        response = call(to_message(load(GPT2_EXAMPLE)), timeout=PATIENCE_S)
        self.assertEqual(response.configs[0].chunk_size, GPT2_CHUNK_SIZE)

    def test_json_log_is_one_object_per_line(self):
        bad = dict(load(GPT2_EXAMPLE), search_interval=0)
        with self.assertRaises(grpc.RpcError):
            search_stub(self.channel)(to_message(bad), timeout=PATIENCE_S)
        self.assertIsNotNone(
            self.server.wait_for(re.compile(r"code=INVALID_ARGUMENT")))
        for line in self.server.log().splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                self.assertEqual(set(entry), {"time", "level", "msg"})
        self.assertTrue(any(json.loads(l)["msg"].startswith("search peer=")
                            for l in self.server.log().splitlines()
                            if l.startswith("{")))


class ShutdownTest(unittest.TestCase):
    """SIGTERM and SIGINT: calls in flight finish, health says NOT_SERVING,
    the exit code is 0."""

    def test_sigterm_lets_calls_in_flight_finish(self):
        # One worker, one sweep thread, and searches held until released:
        # the calls queue behind each other and are in flight when SIGTERM
        # arrives, however fast the machine.
        server = Server("--threads=1", "--sweep_threads=1",
                        "--log_level=debug", "--shutdown_grace=300s",
                        held=True)
        request = held_request(200, 0.25, seed=5)
        calls = 4
        with server.channel() as channel:
            call = search_stub(channel)
            futures = [call.future(to_message(request), timeout=PATIENCE_S)
                       for _ in range(calls)]
            admitted = server.wait_for(re.compile(r"search admitted"), calls)
            self.assertIsNotNone(admitted, server.log())
            server.process.send_signal(signal.SIGTERM)
            draining = server.wait_for(
                re.compile(r"received SIGTERM; draining (\d+) search"))
            self.assertIsNotNone(draining, server.log())
            server.release()
            responses = [f.result(timeout=PATIENCE_S) for f in futures]
            code = server.stop(signal.SIGTERM)
        self.assertEqual(code, 0, server.log())
        self.assertEqual(int(draining.group(1)), calls, server.log())
        for r in responses:
            self.assertEqual(r.total_param_size, sum(request["numels"]))
            # round(0.25 * 2**20) / 1 + 1 grid points.
            self.assertEqual(r.candidates, 262145)
            self.assertEqual(list(r.configs), list(responses[0].configs))
            self.assertEqual(r.min_chunk_waste, responses[0].min_chunk_waste)

    def test_health_watch_sees_not_serving_on_sigint(self):
        _, health, _ = stubs()
        server = Server("--shutdown_grace=60s")
        with server.channel() as channel:
            watch = channel.unary_stream(
                "/grpc.health.v1.Health/Watch",
                request_serializer=health.HealthCheckRequest.SerializeToString,
                response_deserializer=health.HealthCheckResponse.FromString)
            stream = watch(health.HealthCheckRequest(service=SERVICE),
                           timeout=PATIENCE_S)
            self.assertEqual(next(stream).status,
                             health.HealthCheckResponse.SERVING)
            server.process.send_signal(signal.SIGINT)
            self.assertEqual(next(stream).status,
                             health.HealthCheckResponse.NOT_SERVING)
            stream.cancel()  # the watch is a call in flight: end it
            code = server.stop(signal.SIGINT)
        self.assertEqual(code, 0, server.log())
        self.assertIn("received SIGINT", server.log())


class UnixSocketTest(unittest.TestCase):
    def test_serves_on_a_unix_socket(self):
        tmp = tempfile.mkdtemp(prefix="chunkplan_server_test_")
        try:
            address = f"unix:{tmp}/chunkplan.sock"
            server = Server(listen=address)
            self.assertEqual(server.address, address)
            with server.channel() as channel:
                response = search_stub(channel)(
                    to_message(load(GPT2_EXAMPLE)), timeout=PATIENCE_S)
            self.assertEqual(response.configs[0].chunk_size, GPT2_CHUNK_SIZE)
            self.assertEqual(server.stop(), 0, server.log())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class CommandLineTest(unittest.TestCase):
    def binary(self):
        binary = os.environ.get("CHUNKPLAN_SERVER", "")
        if not os.access(binary, os.X_OK):
            raise unittest.SkipTest(
                f"CHUNKPLAN_SERVER={binary!r} is not executable")
        return binary

    def test_version_names_the_engines(self):
        result = subprocess.run([self.binary(), "--version"],
                                capture_output=True, text=True,
                                timeout=PATIENCE_S)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout,
                         r"^chunkplan-server \d+\.\d+\.\d+\nengines:.*"
                         r"CPU_SWEEP.*CPU_PLATEAU")

    def test_bad_flags_exit_2(self):
        for flag in ("--log_level=loud", "--log_format=xml"):
            with self.subTest(flag=flag):
                result = subprocess.run([self.binary(), flag],
                                        capture_output=True, text=True,
                                        timeout=PATIENCE_S)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertIn(flag.split("=")[0], result.stderr)

    def test_port_in_use_exits_1(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]
            result = subprocess.run(
                [self.binary(), f"--listen=127.0.0.1:{port}"],
                capture_output=True, text=True, timeout=PATIENCE_S)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("cannot listen", result.stderr)


if __name__ == "__main__":
    unittest.main()
