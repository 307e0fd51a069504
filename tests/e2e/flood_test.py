#!/usr/bin/python3
"""Flood probes of chunkplan-server on loopback (issue 32), each bounded in
connections, streams, bytes and time. Every probe runs against a fresh
server while a light client (a health Check and a GPT-2 test Search,
examples/gpt2_colossalai.json, on a channel connected before the probe)
keeps calling, and asserts:

  - the light client is answered throughout the probe (no failed call);
  - the server's peak RSS (VmHWM) stays under MEMORY_BOUND_BYTES, the bound
    docs/deploy.md states (768 MiB: the Deployment's 1 GiB limit less
    headroom);
  - the server accepts a new connection after the probe.

  DescriptorFloodTest   more TCP connections than the server's descriptor
                        limit (ulimit -n 256 for the server)
  HalfOpenStreamTest    20,000 streams opened and never finished, each with
                        a partial message, on 40 connections
  SlowReaderTest        Layout answers of 10^6 parameters asked for on raw
                        connections that never grant flow-control window
  OversizeBodyTest      four 64 MiB - 1 bodies of packed numels at once
  ResetFloodTest        20,000 HEADERS+DATA+RST_STREAM
  NoAckStreamTest       100,000 half-open streams on 20 connections that
                        never acknowledge the server's SETTINGS (so gRPC
                        1.51 does not apply the stream limit): the HTTP/2
                        relay resets each at its stream 33
  NoAckStreamGuardTest  the same, 40,000 streams, with the relay off: the
                        stream guard aborts every connection
  MetricsAbuseTest      a 256 MiB POST and 20 slow-loris connections on
                        /metrics, while Prometheus-style scrapes go on
  HeavyCallersTest      64 callers of Frontier and CPU_SWEEP on LLaMA-2 70B
                        shaped requests with wide grids

Environment: CHUNKPLAN_SERVER (required), CHUNKPLAN_PROTOC and
CHUNKPLAN_GRPC_PROTO_DIR, as in server_test.py.

  CHUNKPLAN_SERVER=build/bin/chunkplan-server \
  /usr/bin/python3 tests/e2e/flood_test.py -v
"""

import os
import re
import resource
import select
import socket
import sys
import threading
import time
import unittest
import urllib.request

import grpc

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
from h2_raw import DATA, RawConnection, frame, grpc_frame  # noqa: E402
from h2_raw import SETTINGS_MAX_CONCURRENT_STREAMS  # noqa: E402
from server_test import (ROOT, SERVICE, Server, load,  # noqa: E402
                         search_stub, stubs, to_message)

# docs/deploy.md, "Limits": the Deployment's 1 GiB less 256 MiB of headroom.
MEMORY_BOUND_BYTES = 768 << 20
# Under AddressSanitizer (scripts/sanitize.sh exports ASAN_OPTIONS) the
# shadow memory and the quarantine of freed blocks are not the server's:
# its memory is printed there, not held to the bound.
SANITIZED = "ASAN_OPTIONS" in os.environ
# Bound on each wait of these probes, in seconds.
PATIENCE_S = 60
GPT2 = load(os.path.join(ROOT, "examples", "gpt2_colossalai.json"))
LLAMA = load(os.path.join(ROOT, "bench", "workloads", "llama-2-70b.json"))
SEARCH_PATH = f"/{SERVICE}/Search"
LAYOUT_PATH = f"/{SERVICE}/Layout"


def peak_rss_bytes(pid):
    """VmHWM of process `pid`, in bytes."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmHWM for {pid}")


def health_stub(channel):
    _, health, _ = stubs()
    return channel.unary_unary(
        "/grpc.health.v1.Health/Check",
        request_serializer=health.HealthCheckRequest.SerializeToString,
        response_deserializer=health.HealthCheckResponse.FromString)


def check_health(address, timeout=PATIENCE_S):
    """SERVING over a new channel to `address`, waiting for it to connect
    for up to `timeout`; raises grpc.RpcError otherwise."""
    _, health, _ = stubs()
    with grpc.insecure_channel(address) as channel:
        answer = health_stub(channel)(health.HealthCheckRequest(),
                                      timeout=timeout, wait_for_ready=True)
    return answer.status == health.HealthCheckResponse.SERVING


class LightClient:
    """Health Check and a GPT-2 test Search in a loop on one channel,
    connected before start() returns; stop() returns (answered, failures)."""

    def __init__(self, address):
        self.channel = grpc.insecure_channel(address)
        self.check = health_stub(self.channel)
        self.search = search_stub(self.channel)
        _, health, _ = stubs()
        self.check_request = health.HealthCheckRequest()
        self.search_request = to_message(GPT2)
        self.answered = 0
        self.failures = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self):
        self.check(self.check_request, timeout=PATIENCE_S,
                   wait_for_ready=True)
        self.thread.start()
        return self

    def _run(self):
        while not self.stopping.is_set():
            try:
                self.check(self.check_request, timeout=PATIENCE_S)
                self.search(self.search_request, timeout=PATIENCE_S)
                self.answered += 1
            except grpc.RpcError as error:
                self.failures.append((error.code().name, error.details()))
            self.stopping.wait(0.05)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=2 * PATIENCE_S)
        self.channel.close()
        return self.answered, self.failures


class FloodCase(unittest.TestCase):
    """A fresh server per test, the light client around the probe, and the
    three assertions of the module's docstring."""

    SERVER_FLAGS = ("--threads=2", "--sweep_threads=1") + tuple(
        os.environ.get("FLOOD_EXTRA_FLAGS", "").split())
    PREEXEC = None

    def setUp(self):
        self.server = Server(*self.SERVER_FLAGS, preexec_fn=self.PREEXEC)
        self.host, self.port = self.server.address.rsplit(":", 1)
        self.port = int(self.port)
        self.light = LightClient(self.server.address).start()

    def tearDown(self):
        self.light.stopping.set()
        self.server.stop()

    def finish_probe(self):
        """The module's three assertions; returns the peak RSS."""
        answered, failures = self.light.stop()
        peak = peak_rss_bytes(self.server.process.pid)
        print(f"\n{self.id()}: light client answered {answered}, failed "
              f"{len(failures)}; peak RSS {peak / 2**20:.0f} MiB",
              file=sys.stderr)
        self.assertEqual(failures, [], self.server.log()[-4000:])
        self.assertGreater(answered, 0)
        if not SANITIZED:
            self.assertLessEqual(peak, MEMORY_BOUND_BYTES)
        self.assertTrue(check_health(self.server.address),
                        self.server.log()[-4000:])
        return peak


def on_streams(conns, per_connection, path, act):
    """Opens `per_connection` streams to `path` on each of `conns` and calls
    act(conn, stream id) on each; a connection the server has closed is
    left at its first error."""
    for conn in conns:
        for _ in range(per_connection):
            try:
                act(conn, conn.open_stream(path))
            except OSError:
                break


def low_descriptor_limit():
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))


class DescriptorFloodTest(FloodCase):
    PREEXEC = staticmethod(low_descriptor_limit)
    CONNECTIONS = 600

    def test_server_accepts_again_after_a_descriptor_flood(self):
        flood = []
        for _ in range(self.CONNECTIONS):
            try:
                flood.append(socket.create_connection((self.host, self.port),
                                                      timeout=5))
            except OSError:
                pass
        # The server has seen them all (the light client's calls queue
        # behind its accepts).
        for _ in range(20):
            self.light.stopping.wait(0.1)
        for s in flood:
            s.close()
        self.finish_probe()


class HalfOpenStreamTest(FloodCase):
    CONNECTIONS = 40
    STREAMS = 500

    def test_half_open_streams_are_bounded(self):
        conns = [RawConnection((self.host, self.port))
                 for _ in range(self.CONNECTIONS)]
        # Acknowledged, as every conforming client does: gRPC 1.51 enforces
        # the stream limit only from its acknowledgement (docs/deploy.md).
        settings = [conn.first_settings() for conn in conns][0]
        partial = grpc_frame(b"\x0a" * 100, announced=(64 << 20) - 1)
        on_streams(conns, self.STREAMS, SEARCH_PATH,
                   lambda conn, sid: conn.send_data(sid, partial))
        for _ in range(20):
            self.light.stopping.wait(0.1)
        for conn in conns:
            conn.close()
        self.finish_probe()
        self.assertIn(SETTINGS_MAX_CONCURRENT_STREAMS, settings)
        self.assertLessEqual(settings[SETTINGS_MAX_CONCURRENT_STREAMS], 32)


def layout_bytes(params):
    """A valid LayoutRequest of `params` numels of 1024 with chunks of 1024:
    one chunk per parameter, an answer of about 16 bytes each."""
    pb, _, _ = stubs()
    request = pb.LayoutRequest(
        search=pb.ChunkSearchRequest(numels=[1024] * params,
                                     search_range_m=1, search_interval=1024),
        configs=[pb.ChunkConfig(dp_degree=1, chunk_size=1024)])
    return request.SerializeToString()


class SlowReaderTest(FloodCase):
    CONNECTIONS = 3
    CALLS_PER_CONNECTION = 10

    def test_answers_never_read_are_bounded(self):
        request = grpc_frame(layout_bytes(1_000_000))
        conns = [RawConnection((self.host, self.port))
                 for _ in range(self.CONNECTIONS)]
        on_streams(conns, self.CALLS_PER_CONNECTION, LAYOUT_PATH,
                   lambda conn, sid: conn.send_data(sid, request,
                                                    end_stream=True))
        # Let the server compute and try to send every answer.
        for _ in range(100):
            self.light.stopping.wait(0.1)
        self.finish_probe()
        for conn in conns:
            conn.close()


class OversizeBodyTest(FloodCase):
    PARALLEL = 4

    def test_oversize_bodies_cost_little(self):
        # (64 MiB - 1) - 6 bytes of tag, length and 1-byte varints: about
        # 67 million numels, far beyond --max_params.
        body = b"\x0a" + b"\xf9\xff\xff\x1f" + b"\x01" * ((64 << 20) - 6)
        outcomes = []

        def send():
            with grpc.insecure_channel(
                    self.server.address,
                    options=[("grpc.max_send_message_length", -1)]) as ch:
                call = ch.unary_unary(SEARCH_PATH)
                try:
                    call(body, timeout=PATIENCE_S)
                    outcomes.append("OK")
                except grpc.RpcError as error:
                    outcomes.append(error.code().name)

        threads = [threading.Thread(target=send)
                   for _ in range(self.PARALLEL)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=2 * PATIENCE_S)
        self.finish_probe()
        self.assertEqual(outcomes, ["RESOURCE_EXHAUSTED"] * self.PARALLEL)


class MetricsFloodCase(FloodCase):
    """A probe against a server that also serves /metrics on loopback:
    self.metrics is its (host, port)."""

    def setUp(self):
        self.SERVER_FLAGS = self.SERVER_FLAGS + (
            "--metrics_listen=127.0.0.1:0",)
        super().setUp()
        match = re.search(r"metrics on http://(\S+)/metrics",
                          self.server.log())
        host, port = match.group(1).rsplit(":", 1)
        self.metrics = (host, int(port))

    def scrape(self):
        url = f"http://{self.metrics[0]}:{self.metrics[1]}/metrics"
        with urllib.request.urlopen(url, timeout=PATIENCE_S) as answer:
            return answer.status, answer.read()


class ResetFloodTest(MetricsFloodCase):
    CONNECTIONS = 4
    STREAMS = 5000

    def invalid_argument_count(self):
        metrics = self.scrape()[1].decode()
        return sum(int(float(m.group(1))) for m in re.finditer(
            r'chunkplan_calls_total\{[^}]*code="INVALID_ARGUMENT"[^}]*\} (\S+)',
            metrics))

    def test_reset_streams_are_not_bad_requests(self):
        request = grpc_frame(to_message(GPT2).SerializeToString())
        conns = [RawConnection((self.host, self.port))
                 for _ in range(self.CONNECTIONS)]
        # Acknowledged first, as a conforming client does: the relay resets
        # a connection that opens more than 32 streams before.
        for conn in conns:
            conn.first_settings()

        def send_half_and_reset(conn, sid):
            conn.send_data(sid, request[:len(request) // 2])
            conn.reset(sid)

        on_streams(conns, self.STREAMS, SEARCH_PATH, send_half_and_reset)
        for conn in conns:
            conn.close()
        self.finish_probe()
        self.assertEqual(self.invalid_argument_count(), 0)


def closed_by_server(conns, wanted, timeout):
    """How many of `conns` the server has closed (their sockets read to the
    end or reset), reading what they hold until `wanted` are or `timeout`
    seconds have passed."""
    open_socks = {conn.sock for conn in conns}
    for sock in open_socks:
        sock.setblocking(False)
    closed = 0
    deadline = time.monotonic() + timeout
    while open_socks and closed < wanted and time.monotonic() < deadline:
        readable, _, _ = select.select(list(open_socks), [], [], 0.2)
        for sock in readable:
            try:
                ended = not sock.recv(1 << 16)
            except BlockingIOError:
                ended = False
            except OSError:
                ended = True
            if ended:
                open_socks.discard(sock)
                closed += 1
    return closed


class NoAckStreamTest(MetricsFloodCase):
    """A client that never acknowledges the server's SETTINGS (it never
    reads), to which gRPC 1.51 does not apply --max_concurrent_streams:
    5000 half-open streams on each of 20 connections, 100,000 in all (peak
    RSS 1229 MiB unguarded). The server's HTTP/2 relay resets each
    connection at its stream 33, before gRPC reads it (on main, the stream
    guard closed them after gRPC had opened 680 to 5,000 streams each: peak
    172-209 MiB)."""
    CONNECTIONS = 20
    STREAMS = 5000
    LIMIT = 32  # --max_concurrent_streams' default

    def closes_counted(self):
        match = re.search(r'chunkplan_connections_closed_total\{reason='
                          r'"streams_over_limit"\} (\d+)',
                          self.scrape()[1].decode())
        return int(match.group(1)) if match else 0

    def flood(self):
        """The probe; returns (connections closed by the server, peak RSS
        less the RSS before it)."""
        baseline = peak_rss_bytes(self.server.process.pid)
        conns = [RawConnection((self.host, self.port))
                 for _ in range(self.CONNECTIONS)]
        partial = grpc_frame(b"\x0a" * 100, announced=(64 << 20) - 1)
        # Raw DATA frames: RawConnection.send_data may read (and so
        # acknowledge) the server's SETTINGS while it waits for window.
        on_streams(conns, self.STREAMS, SEARCH_PATH,
                   lambda conn, sid: conn.sock.sendall(
                       frame(DATA, 0, sid, partial)))
        closed = closed_by_server(conns, self.CONNECTIONS, PATIENCE_S)
        for conn in conns:
            conn.close()
        peak = self.finish_probe()
        print(f"closed by the server: {closed} of {self.CONNECTIONS}; "
              f"RSS {baseline >> 20} -> {peak >> 20} MiB", file=sys.stderr)
        return closed, peak - baseline

    def test_streams_beyond_the_limit_close_the_connection(self):
        closed, growth = self.flood()
        self.assertEqual(closed, self.CONNECTIONS)
        self.assertEqual(self.closes_counted(), self.CONNECTIONS)
        # The log's lines (10 a second at most) name the streams each
        # connection had opened: the limit and the one over it, no more.
        opened = [int(n) for n in re.findall(
            r"closed the connection from \S+: (\d+) streams opened",
            self.server.log())]
        self.assertTrue(opened, self.server.log()[-4000:])
        self.assertEqual(set(opened), {self.LIMIT + 1})
        # gRPC held at most 32 streams of about 13 KB per connection (and
        # the relay 128 KiB of buffers): a few MiB in all.
        if not SANITIZED:
            self.assertLess(growth, 48 << 20)


class NoAckStreamGuardTest(NoAckStreamTest):
    """The same flood, lighter, with the relay off: the stream guard closes
    every connection after the fact (also the path of TLS listeners)."""
    STREAMS = 2000
    SERVER_FLAGS = FloodCase.SERVER_FLAGS + ("--h2_preack_filter=false",)

    def test_streams_beyond_the_limit_close_the_connection(self):
        closed, _ = self.flood()
        # Each holds up to 1968 streams beyond the limit, more than the
        # 1024 the guard leaves in all (docs/deploy.md): every one is
        # closed.
        self.assertEqual(closed, self.CONNECTIONS)
        self.assertEqual(self.closes_counted(), self.CONNECTIONS)


class MetricsAbuseTest(MetricsFloodCase):
    SLOW_LORIS = 20
    POST_BYTES = 256 << 20

    def big_post(self):
        """Sends up to POST_BYTES of a body; returns the bytes the server
        took before it answered or closed."""
        sent = 0
        with socket.create_connection(self.metrics, timeout=PATIENCE_S) as s:
            s.sendall(b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: "
                      + str(self.POST_BYTES).encode() + b"\r\n\r\n")
            block = b"x" * (1 << 20)
            try:
                while sent < self.POST_BYTES:
                    s.sendall(block)
                    sent += len(block)
            except OSError:
                pass
        return sent

    def test_metrics_abuse_neither_grows_memory_nor_stalls_scrapes(self):
        baseline = peak_rss_bytes(self.server.process.pid)
        loris = []
        for _ in range(self.SLOW_LORIS):
            s = socket.create_connection(self.metrics, timeout=PATIENCE_S)
            s.sendall(b"GET /metrics HTTP/1.1\r\n")
            loris.append(s)
        stop = threading.Event()

        def trickle():
            while not stop.wait(1):
                for s in loris:
                    try:
                        s.sendall(b"X")
                    except OSError:
                        pass

        trickler = threading.Thread(target=trickle, daemon=True)
        trickler.start()
        posted = self.big_post()
        scrapes = [self.scrape()[0] for _ in range(5)]
        stop.set()
        trickler.join()
        for s in loris:
            s.close()
        peak = self.finish_probe()
        print(f"POST took {posted >> 20} MiB; RSS {baseline >> 20} -> "
              f"{peak >> 20} MiB", file=sys.stderr)
        self.assertEqual(scrapes, [200] * 5)
        if not SANITIZED:
            self.assertLess(peak - baseline, 64 << 20)


def heavy_requests():
    """Frontier and CPU_SWEEP on LLaMA-2 70B's numels with wide grids: the
    sweep 2^24 + 1 candidates (about 1.2e10 candidate-size steps, within
    --max_sweep_work), the Frontier 2^30 + 1."""
    pb, _, _ = stubs()
    sweep = to_message(dict(LLAMA, search_range_m=16, search_interval=1,
                            engine="ENGINE_CPU_SWEEP"))
    frontier = pb.LayoutRequest(search=to_message(
        dict(LLAMA, search_range_m=1024, search_interval=1)))
    return [(SEARCH_PATH, sweep), (f"/{SERVICE}/Frontier", frontier)]


class HeavyCallersTest(FloodCase):
    CALLERS = 64
    SECONDS = 15
    CALL_TIMEOUT_S = 10

    def test_cheap_calls_are_answered_among_heavy_callers(self):
        requests = heavy_requests()
        stop = threading.Event()
        heavy_outcomes = []

        def caller(i):
            path, message = requests[i % 2]
            with grpc.insecure_channel(self.server.address) as ch:
                call = ch.unary_unary(
                    path, request_serializer=type(message).SerializeToString)
                while not stop.is_set():
                    try:
                        call(message, timeout=self.CALL_TIMEOUT_S)
                        heavy_outcomes.append("OK")
                    except grpc.RpcError as error:
                        heavy_outcomes.append(error.code().name)

        callers = [threading.Thread(target=caller, args=(i,), daemon=True)
                   for i in range(self.CALLERS)]
        for t in callers:
            t.start()
        stop.wait(self.SECONDS)
        stop.set()
        for t in callers:
            t.join(timeout=2 * PATIENCE_S)
        tally = {c: heavy_outcomes.count(c) for c in set(heavy_outcomes)}
        print(f"heavy callers' outcomes: {tally}", file=sys.stderr)
        self.finish_probe()


if __name__ == "__main__":
    unittest.main()
