#!/usr/bin/python3
"""Hostile HTTP/2 through the front door (issue 39): chunkplan-server on
loopback with HAProxy in front, started with the deployed configuration
(deploy/haproxy/haproxy.cfg, the file the Deployment's ConfigMap holds), and
one probe per class, each on a fresh pair of processes and bounded to
PROBE_S (10) seconds of sending and waiting for HAProxy to act:

  RapidResetTest        HEADERS + a whole message + RST_STREAM, 80,000
                        times on 16 connections; and HEADERS + RST_STREAM
                        alone as fast as 4 threads write them for 6 s
                        (flood_test.RapidResetTest's probe), the server
                        under 256 MB
  PingFloodTest         PING frames, never reading the acknowledgements
  SettingsFloodTest     SETTINGS frames, never reading the acknowledgements
  PreAckStreamsTest     half-open streams opened before acknowledging
                        HAProxy's SETTINGS (never reading)
  ContinuationFloodTest header blocks that never end: CONTINUATION frames
                        with header fields, and empty ones
  OversizeFrameTest     frames announcing 16 MiB against a 16 KiB limit
  GzipBombTest          a gzip message of 1 MiB that inflates to 1 GiB
  IdleConnectionTest    connections that send nothing, or only the preface
  SlowClientTest        a header block and a message sent a byte at a time
  DescriptorFloodTest   more connections than one client may hold, then
                        more than HAProxy's maxconn from many addresses
  ConfigNumberTest      a config.json whose n_layer is 1e400
  SoftStopTest          SIGUSR1 (the image's stop signal) during a call
  TlsTest, MutualTlsTest  the TLS and mutual-TLS listeners

Each asserts that the peak RSS of both processes (VmHWM, read from /proc)
stays under its bound (SERVER_BOUND and HAPROXY_BOUND, within the pod's
container limits, docs/deploy.md) and that light calls (a health Check and
the GPT-2 test Search) on a fresh connection through HAProxy are answered.

The attacker and the light client are two clients: the probes connect from
ATTACKER (127.0.0.2; every 127/8 address is this host's), the light calls
from 127.0.0.1, as a hostile client and a well-behaved one come from two
addresses in the cluster. So HAProxy's per-client limits (connections at
once, request rate: stick tables keyed by the source address) stop the
attacker without refusing the light calls, however far the attacker goes
past them, and no probe has to wait for a rate to decay.

Skipped, with the reason, where haproxy is not installed (Debian's package:
scripts/install-deps.sh). Environment: CHUNKPLAN_SERVER (required),
CHUNKPLAN_PROTOC and CHUNKPLAN_GRPC_PROTO_DIR as in server_test.py;
CHUNKPLAN_HAPROXY (default: haproxy on PATH or /usr/sbin/haproxy),
CHUNKPLAN_NGHTTP (default: nghttp on PATH; the gzip bomb's client),
CHUNKPLAN_OPENSSL (the TLS tests' certificates).

  CHUNKPLAN_SERVER=build/bin/chunkplan-server \
  /usr/bin/python3 tests/e2e/front_door_test.py -v
"""

import collections
import functools
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import types
import unittest
import urllib.request
import zlib
from unittest import mock

import grpc

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
import h2_raw  # noqa: E402
from flood_test import (FLOOD_S, GPT2, MEMORY_BOUND_BYTES,  # noqa: E402
                        SANITIZED, SEARCH_PATH, SMALL_BOUND_BYTES,
                        closed_by_server, drain, health_stub, in_parallel,
                        peak_rss_bytes, until)
from h2_raw import (DATA, END_STREAM, GOAWAY, HEADERS,  # noqa: E402
                    RST_STREAM, SETTINGS, RawConnection, frame, grpc_frame)
from server_test import (GPT2_CHUNK_SIZE, ROOT, Server,  # noqa: E402
                         search_stub, stubs, to_message)

CONFIG = os.path.join(ROOT, "deploy", "haproxy", "haproxy.cfg")
# The attacker's source address; the light calls come from 127.0.0.1.
ATTACKER = "127.0.0.2"
# How long a probe may send (and wait for HAProxy to act) before its checks.
PROBE_S = 10
# Bound on every other wait (start-up, light calls, shutdown).
PATIENCE_S = 60
# The server's bound: flood_test.py's (docs/deploy.md, "Limits": the
# server container's 1 GiB limit less 256 MiB of headroom).
SERVER_BOUND = MEMORY_BOUND_BYTES
# HAProxy's: its container's limit (deploy/kubernetes/base/deployment.yaml,
# 512 MiB) less 128 MiB of headroom.
HAPROXY_BOUND = 384 << 20
PING, CONTINUATION = 6, 9


def config_number(pattern):
    """The number `pattern` (a regular expression with one group) finds in
    CONFIG: the probes size themselves by the deployed limits."""
    with open(CONFIG) as f:
        return int(re.search(pattern, f.read(), re.M).group(1))


# HAProxy's limits (CONFIG): connections at once in all, and per client.
MAXCONN = config_number(r"^\s+maxconn (\d+)$")
PER_CLIENT = config_number(r"sc_conn_cur\(0\) gt (\d+)")
CALLS_PER_10S = config_number(r"sc_http_req_rate\(0\) gt (\d+)")


def haproxy_binary():
    found = (os.environ.get("CHUNKPLAN_HAPROXY") or shutil.which("haproxy")
             or shutil.which("haproxy", path="/usr/sbin:/usr/local/sbin"))
    if not found:
        raise unittest.SkipTest(
            "haproxy not installed (Debian's package haproxy: "
            "scripts/install-deps.sh); the front door is not tested")
    return found


def attacker_connection(address, source=ATTACKER):
    """A RawConnection (h2_raw.py) to `address` whose socket is bound to
    `source`: h2_raw opens it with socket.create_connection, which is given
    the source address here for the one call."""
    bound = functools.partial(socket.create_connection,
                              source_address=(source, 0))
    with mock.patch.object(h2_raw, "socket",
                           types.SimpleNamespace(create_connection=bound)):
        return RawConnection(address, timeout=PROBE_S)


def many_address(i):
    """The source address of connection `i` of a flood from many clients,
    PER_CLIENT connections each: 127.0.1.1, 127.0.1.2, ..."""
    client = i // PER_CLIENT
    return f"127.0.{1 + client // 250}.{1 + client % 250}"


def tcp_from(address, source=ATTACKER):
    """A bare TCP connection to `address` from `source`."""
    return socket.create_connection(address, timeout=PROBE_S,
                                    source_address=(source, 0))


class FrontDoor:
    """HAProxy with CONFIG in front of the server at `upstream`, listening
    on sockets this process opened on 127.0.0.1 (port 0, handed over as
    fd@N: no port is chosen twice). `tls` maps CHUNKPLAN_TLS_CERT and
    CHUNKPLAN_TLS_CLIENT_CA to files, and adds a TLS listener. Its log (its
    standard output) is kept, the last 400 lines."""

    def __init__(self, upstream, tls=None):
        env = dict(os.environ, CHUNKPLAN_UPSTREAM=upstream)
        listeners = {"CHUNKPLAN_H2C_BIND": self._listener()}
        if tls:
            listeners["CHUNKPLAN_TLS_BIND"] = self._listener()
            env.update(tls)
        env.update({name: f"fd@{s.fileno()}" for name, s in listeners.items()})
        self.address = self._address(listeners["CHUNKPLAN_H2C_BIND"])
        self.tls_address = (self._address(listeners["CHUNKPLAN_TLS_BIND"])
                            if tls else None)
        self.log = collections.deque(maxlen=400)
        checked = subprocess.run(
            [haproxy_binary(), "-c", "-f", CONFIG], env=env,
            pass_fds=[s.fileno() for s in listeners.values()],
            capture_output=True, text=True, timeout=PATIENCE_S)
        if checked.returncode != 0:
            for s in listeners.values():
                s.close()
            raise AssertionError(f"haproxy -c refuses {CONFIG}:\n"
                                 + checked.stdout + checked.stderr)
        self.process = subprocess.Popen(
            [haproxy_binary(), "-db", "-f", CONFIG], env=env,
            pass_fds=[s.fileno() for s in listeners.values()],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for s in listeners.values():
            s.close()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        try:
            answer_light_calls(self.address)
        except grpc.RpcError as error:
            self.stop()
            raise AssertionError(f"no answer through HAProxy: {error}\n"
                                 + self.text())

    @staticmethod
    def _listener():
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(1024)
        return s

    @staticmethod
    def _address(s):
        host, port = s.getsockname()
        return f"{host}:{port}"

    def _read(self):
        for line in self.process.stdout:
            self.log.append(line)

    def text(self):
        return "".join(self.log)

    def host_port(self):
        host, port = self.address.rsplit(":", 1)
        return host, int(port)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
        try:
            self.process.wait(timeout=PATIENCE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(timeout=PATIENCE_S)
        self.process.stdout.close()


def cpu_seconds(pid):
    """User and system CPU time process `pid` has used, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fresh_channel(address, credentials=None):
    """A channel with a connection of its own (no subchannel shared with
    another channel of this process)."""
    options = [("grpc.use_local_subchannel_pool", 1)]
    if credentials is None:
        return grpc.insecure_channel(address, options=options)
    return grpc.secure_channel(address, credentials, options=options)


def answer_light_calls(address, credentials=None):
    """A health Check (SERVING) and the GPT-2 Search (ColossalAI's chunk
    size) on a fresh connection to `address`; raises grpc.RpcError or
    AssertionError otherwise."""
    _, health, _ = stubs()
    with fresh_channel(address, credentials) as channel:
        status = health_stub(channel)(health.HealthCheckRequest(),
                                      timeout=PATIENCE_S,
                                      wait_for_ready=True).status
        assert status == health.HealthCheckResponse.SERVING, status
        answer = search_stub(channel)(to_message(GPT2), timeout=PATIENCE_S)
        sizes = [c.chunk_size for c in answer.configs]
        assert sizes == [GPT2_CHUNK_SIZE], sizes


class FrontDoorCase(unittest.TestCase):
    """A fresh server and HAProxy per test; finish_probe() makes the checks
    of the module's docstring."""

    SERVER_FLAGS = ("--threads=2", "--sweep_threads=1")
    TLS = None  # a function returning FrontDoor's `tls` mapping

    def setUp(self):
        haproxy_binary()  # skips the test where haproxy is missing
        self.server = Server(*self.SERVER_FLAGS)
        self.addCleanup(self.server.stop)
        self.door = FrontDoor(self.server.address,
                              tls=self.TLS() if self.TLS else None)
        self.addCleanup(self.door.stop)
        self.host, self.port = self.door.host_port()
        self.started = time.monotonic()

    def deadline(self):
        """Starts the probe's clock; returns the time its PROBE_S end."""
        self.probe_end = time.monotonic() + PROBE_S
        return self.probe_end

    def left(self):
        """Seconds left of the probe's PROBE_S (at least 0.1): every wait
        of a probe ends by then."""
        return max(0.1, self.probe_end - time.monotonic())

    def light_calls(self):
        try:
            answer_light_calls(self.door.address)
        except grpc.RpcError as error:
            self.fail(f"light calls through HAProxy: {error.code().name} "
                      f"{error.details()}\nHAProxy:\n{self.door.text()}\n"
                      f"server:\n{self.server.log()[-4000:]}")

    def finish_probe(self):
        """Light calls answered on a fresh connection; both processes alive
        and under their bounds. Returns (HAProxy's peak, server's peak)."""
        self.light_calls()
        self.assertIsNone(self.door.process.poll(), self.door.text())
        self.assertIsNone(self.server.process.poll(), self.server.log())
        door_peak = peak_rss_bytes(self.door.process.pid)
        server_peak = peak_rss_bytes(self.server.process.pid)
        print(f"\n{self.id()}: peak RSS HAProxy {door_peak / 2**20:.1f} MiB, "
              f"server {server_peak / 2**20:.1f} MiB; CPU HAProxy "
              f"{cpu_seconds(self.door.process.pid):.2f} s, server "
              f"{cpu_seconds(self.server.process.pid):.2f} s; "
              f"{time.monotonic() - self.started:.1f} s", file=sys.stderr)
        self.assertLessEqual(door_peak, HAPROXY_BOUND)
        if not SANITIZED:
            self.assertLessEqual(server_peak, SERVER_BOUND)
        return door_peak, server_peak

    def attackers(self, count, source=ATTACKER):
        """`count` RawConnections from `source` (fewer where HAProxy refuses
        some: a refused one is left out)."""
        conns = []
        for _ in range(count):
            try:
                conns.append(attacker_connection((self.host, self.port),
                                                 source))
            except OSError:
                pass
        return conns


def stream_end(conn, sid, timeout):
    """Reads conn's frames until HAProxy ends stream `sid` (a frame on it
    with END_STREAM, or RST_STREAM), sends GOAWAY or closes; returns the
    seconds that took, or None after `timeout`."""
    started = time.monotonic()
    conn.sock.settimeout(0.5)
    while time.monotonic() - started < timeout:
        try:
            kind, flags, stream, _ = conn.read_frame()
        except socket.timeout:
            continue
        except OSError:
            return time.monotonic() - started
        if (kind == GOAWAY or stream == sid and
                (kind == RST_STREAM or flags & END_STREAM)):
            return time.monotonic() - started
    return None


def response_headers(conn):
    """Sends a health Check on `conn` and returns the header blocks of its
    answer, as they came (HAProxy's HPACK encoder writes names and values
    as literals, so a text it sends can be found in them)."""
    sid = conn.open_stream("/grpc.health.v1.Health/Check")
    conn.send_data(sid, grpc_frame(b""), end_stream=True)
    blocks = b""
    conn.sock.settimeout(PROBE_S)
    while True:
        kind, flags, stream, payload = conn.read_frame()
        if stream != sid:
            continue
        if kind == HEADERS:
            blocks += payload
        if flags & END_STREAM or kind == RST_STREAM:
            return blocks


def send_until(conn, data, deadline, limit):
    """Sends `data` on conn's socket up to `limit` times or until the
    deadline or an error (HAProxy stops reading, or closes); returns the
    times sent."""
    sent = 0
    conn.sock.settimeout(1)
    while sent < limit and time.monotonic() < deadline:
        try:
            conn.sock.sendall(data)
        except OSError:
            break
        sent += 1
    return sent


class RapidResetTest(FrontDoorCase):
    """CVE-2023-44487's pattern from one client: each stream opened, given a
    whole GPT-2 request and reset at once, 5,000 on each of 16 connections.
    The server sees at most the client's rate limit (10,000 calls per 10 s)
    of them; HAProxy answers the rest RESOURCE_EXHAUSTED itself."""
    CONNECTIONS = 16
    STREAMS = 5000
    SERVER_FLAGS = FrontDoorCase.SERVER_FLAGS + (
        "--metrics_listen=127.0.0.1:0",)

    def server_calls(self):
        """Calls the server has counted (chunkplan_calls_total)."""
        match = re.search(r"metrics on (http://\S+/metrics)",
                          self.server.log())
        with urllib.request.urlopen(match.group(1),
                                    timeout=PATIENCE_S) as answer:
            metrics = answer.read().decode()
        return sum(int(float(n)) for n in re.findall(
            r"^chunkplan_calls_total\{[^}]*\} (\S+)$", metrics, re.M))

    def test_reset_streams_are_bounded(self):
        request = grpc_frame(to_message(GPT2).SerializeToString())
        before = self.server_calls()
        conns = self.attackers(self.CONNECTIONS)
        deadline = self.deadline()
        for conn in conns:
            try:
                conn.first_settings()
            except OSError:
                pass
        sent = 0
        for conn in conns:
            for _ in range(self.STREAMS):
                if time.monotonic() > deadline:
                    break
                try:
                    sid = conn.open_stream(SEARCH_PATH)
                    conn.send_data(sid, request, end_stream=True)
                    conn.reset(sid)
                except OSError:
                    break
                sent += 1
        self.light_calls()  # while the attacker's connections are open
        # The attacker's next call is refused at the door:
        # RESOURCE_EXHAUSTED, HAProxy's message.
        refused = response_headers(conns[0])
        for conn in conns:
            conn.close()
        self.finish_probe()
        seen = self.server_calls() - before - 2  # less the light calls
        print(f"streams opened and reset: {sent}; calls the server "
              f"counted: {seen}", file=sys.stderr)
        self.assertGreater(sent, CALLS_PER_10S)
        self.assertLessEqual(seen, CALLS_PER_10S)
        self.assertIn(b"calls in 10 s from this client", refused)

    def test_streams_reset_before_a_body_are_bounded(self):
        """flood_test.RapidResetTest's probe through HAProxy: HEADERS +
        RST_STREAM pairs, 100 to a write, as fast as one thread per
        connection writes them, on 4 connections for FLOOD_S seconds, each
        connection's answers read and dropped. On the server's own port
        gRPC 1.51 peaks at 1.3-2.0 GiB on it (docs/deploy.md, "Left to
        HAProxy"); here the server stays under SMALL_BOUND_BYTES."""
        before = self.server_calls()
        self.deadline()
        sent = []

        def flood():
            conns = self.attackers(1)
            if not conns:
                return
            conn = conns[0]
            reader = threading.Thread(target=drain, args=(conn.sock,),
                                      daemon=True)
            try:
                conn.first_settings()
                reader.start()
            except OSError:
                conn.close()
                return

            def burst():
                try:
                    conn.rapid_reset(SEARCH_PATH, 100)
                    return True
                except OSError:
                    return False  # closed by HAProxy, or a stalled write

            sent.append(until(FLOOD_S, burst) * 100)
            conn.close()
            reader.join(timeout=PATIENCE_S)

        in_parallel(4, flood)
        _, server_peak = self.finish_probe()
        seen = self.server_calls() - before - 1  # less the light Search
        print(f"streams opened and reset: {sum(sent)} ({sent}); calls the "
              f"server counted: {seen}", file=sys.stderr)
        self.assertGreater(sum(sent), CALLS_PER_10S)
        self.assertLessEqual(seen, CALLS_PER_10S)
        if not SANITIZED:
            self.assertLess(server_peak, SMALL_BOUND_BYTES)


class PingFloodTest(FrontDoorCase):
    """PING frames in batches of 1,000 (17 KB), up to 10^6 on each of 4
    connections, never reading HAProxy's acknowledgements."""
    CONNECTIONS = 4
    BATCHES = 1000

    def test_unread_ping_acks_are_bounded(self):
        batch = frame(PING, 0, 0, b"12345678") * 1000
        conns = self.attackers(self.CONNECTIONS)
        deadline = self.deadline()
        sent = [send_until(c, batch, deadline, self.BATCHES) for c in conns]
        print(f"\nPINGs sent: {[1000 * n for n in sent]}", file=sys.stderr)
        self.light_calls()
        for conn in conns:
            conn.close()
        self.finish_probe()


class SettingsFloodTest(FrontDoorCase):
    """SETTINGS frames (one setting each) in batches of 1,000, up to 10^6 on
    each of 4 connections, never reading the acknowledgements."""
    CONNECTIONS = 4
    BATCHES = 1000

    def test_unread_settings_acks_are_bounded(self):
        # SETTINGS_INITIAL_WINDOW_SIZE (4) = 65535: a valid, harmless value.
        batch = frame(SETTINGS, 0, 0, struct.pack(">HI", 4, 65535)) * 1000
        conns = self.attackers(self.CONNECTIONS)
        deadline = self.deadline()
        sent = [send_until(c, batch, deadline, self.BATCHES) for c in conns]
        print(f"\nSETTINGS sent: {[1000 * n for n in sent]}", file=sys.stderr)
        self.light_calls()
        for conn in conns:
            conn.close()
        self.finish_probe()


class PreAckStreamsTest(FrontDoorCase):
    """20 connections that never read (so never acknowledge HAProxy's
    SETTINGS) each open up to 5,000 streams with a partial message that
    announces 64 MiB - 1: HAProxy refuses the streams beyond its limit of
    32 per connection whatever the acknowledgement."""
    CONNECTIONS = 20
    STREAMS = 5000

    def test_streams_before_the_acknowledgement_are_bounded(self):
        conns = self.attackers(self.CONNECTIONS)
        partial = grpc_frame(b"\x0a" * 100, announced=(64 << 20) - 1)
        deadline = self.deadline()
        opened = 0
        for conn in conns:
            conn.sock.settimeout(1)
            for _ in range(self.STREAMS):
                if time.monotonic() > deadline:
                    break
                try:
                    sid = conn.open_stream(SEARCH_PATH)
                    conn.sock.sendall(frame(DATA, 0, sid, partial))
                except OSError:
                    break
                opened += 1
        print(f"\nstreams opened: {opened}", file=sys.stderr)
        self.light_calls()
        for conn in conns:
            conn.close()
        self.finish_probe()


class ContinuationFloodTest(FrontDoorCase):
    """Header blocks that never end: HEADERS without END_HEADERS, then
    CONTINUATION frames of 1 KiB of header fields (HAProxy refuses the
    block once it outgrows its buffer and closes the connection), and on
    other connections empty CONTINUATION frames (which add nothing to the
    block: HAProxy closes them at `timeout http-request`)."""
    CONNECTIONS = 4
    FRAMES = 100_000

    def test_endless_header_blocks_are_refused(self):
        fields = h2_raw._literal("x-pad", "a" * 1000)
        full = self.attackers(self.CONNECTIONS)
        empty = self.attackers(self.CONNECTIONS)
        deadline = self.deadline()
        for conns, payload in ((full, fields), (empty, b"")):
            for conn in conns:
                conn.sock.sendall(frame(HEADERS, 0, 1, fields))
                batch = frame(CONTINUATION, 0, 1, payload) * 100
                sent = send_until(conn, batch, deadline, self.FRAMES // 100)
                print(f"\nCONTINUATION frames of {len(payload)} bytes sent: "
                      f"{100 * sent}", file=sys.stderr)
        # Refused as soon as the block outgrows the buffer; the empty ones
        # at `timeout http-request` (5 s).
        closed = closed_by_server(full + empty, len(full + empty),
                                  self.left())
        self.assertEqual(closed, len(full + empty), self.door.text())
        self.light_calls()
        for conn in full + empty:
            conn.close()
        self.finish_probe()


class OversizeFrameTest(FrontDoorCase):
    """A DATA and a HEADERS frame announcing 2^24 - 1 bytes (HAProxy allows
    16 KiB), followed by 1 MiB of it: each connection is closed."""

    def test_oversize_frames_close_the_connection(self):
        self.deadline()
        conns = self.attackers(2)
        sid = conns[0].open_stream(SEARCH_PATH)
        for conn, kind, stream in ((conns[0], DATA, sid),
                                   (conns[1], HEADERS, 1)):
            header = frame(kind, 0, stream)
            try:
                conn.sock.sendall(b"\xff\xff\xff" + header[3:] +
                                  b"\0" * (1 << 20))
            except OSError:
                pass
        self.assertEqual(closed_by_server(conns, 2, self.left()), 2,
                         self.door.text())
        for conn in conns:
            conn.close()
        self.finish_probe()


def gzip_bomb(inflated=1 << 30):
    """A gzip member of `inflated` zero bytes in about inflated / 1000
    bytes: one block of 1 MiB of zeros, compressed and fully flushed (so it
    refers to nothing before it), repeated, then the final empty block and
    the trailer (CRC-32 and size)."""
    mib = bytes(1 << 20)
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(mib) + deflate.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(inflated >> 20):
        crc = zlib.crc32(mib, crc)
    return (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" +
            block * (inflated >> 20) + b"\x03\x00" +
            struct.pack("<II", crc, inflated & 0xFFFFFFFF))


class GzipBombTest(FrontDoorCase):
    """A Search whose message is gzip (grpc-encoding: gzip, the compressed
    flag set): 1 MiB on the wire, 1 GiB inflated, four at once, sent with
    nghttp (which can send a body it is given and prints grpc-status).
    Answered UNIMPLEMENTED (the server refuses compressed messages) or
    RESOURCE_EXHAUSTED, each within the probe's bound."""
    CALLS = 4

    def test_gzip_bomb_is_refused_fast(self):
        nghttp = (os.environ.get("CHUNKPLAN_NGHTTP") or shutil.which("nghttp"))
        if not nghttp:
            self.fail("nghttp not found: install Debian's nghttp2-client "
                      "(scripts/install-deps.sh)")
        bomb = gzip_bomb()
        self.assertLess(len(bomb), 1_100_000)
        with tempfile.NamedTemporaryFile(suffix=".grpc") as body:
            body.write(b"\x01" + struct.pack(">I", len(bomb)) + bomb)
            body.flush()
            started = time.monotonic()
            result = subprocess.run(
                [nghttp, "-v", "-n", "-m", str(self.CALLS),
                 f"--timeout={PROBE_S}",
                 "-H", "content-type: application/grpc",
                 "-H", "te: trailers", "-H", "grpc-encoding: gzip",
                 "-d", body.name, f"http://{self.door.address}{SEARCH_PATH}"],
                capture_output=True, text=True, timeout=2 * PROBE_S)
            elapsed = time.monotonic() - started
        statuses = re.findall(r"recv \(stream_id=\d+\) grpc-status: (\d+)",
                              result.stdout)
        print(f"\ngrpc-status {statuses} in {elapsed:.2f} s", file=sys.stderr)
        # 12 UNIMPLEMENTED, 8 RESOURCE_EXHAUSTED.
        self.assertEqual(len(statuses), self.CALLS, result.stdout[-4000:])
        self.assertLessEqual(set(statuses), {"12", "8"})
        self.assertLess(elapsed, PROBE_S)
        # A gRPC client that compresses its call reads the refusal too.
        with fresh_channel(self.door.address) as channel:
            with self.assertRaises(grpc.RpcError) as caught:
                search_stub(channel)(to_message(GPT2), timeout=PROBE_S,
                                     compression=grpc.Compression.Gzip)
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.UNIMPLEMENTED)
        self.finish_probe()


class IdleConnectionTest(FrontDoorCase):
    """A client's limit of connections (16) that send nothing, and as many
    (from another address) that send only the preface and SETTINGS:
    HAProxy closes the first at `timeout client` (5 s) and the others at
    `timeout http-request` (5 s), within the probe's bound."""

    def test_idle_connections_are_closed(self):
        self.deadline()
        silent = [tcp_from((self.host, self.port))
                  for _ in range(PER_CLIENT)]
        preface = self.attackers(PER_CLIENT, source="127.0.0.3")
        self.light_calls()
        started = time.monotonic()
        wrapped = [types.SimpleNamespace(sock=s) for s in silent] + preface
        closed = closed_by_server(wrapped, len(wrapped), self.left())
        print(f"\nclosed {closed} of {len(wrapped)} idle connections in "
              f"{time.monotonic() - started:.1f} s", file=sys.stderr)
        self.assertEqual(closed, len(wrapped))
        for s in silent:
            s.close()
        for conn in preface:
            conn.close()
        self.finish_probe()


class SlowClientTest(FrontDoorCase):
    """Slow-loris in HTTP/2, 8 connections of each kind, from two
    addresses: a header block sent a byte a second (CONTINUATION frames of
    one byte), closed with its connection at `timeout http-request`; a
    message that stops after its 5-byte prefix, and one trickled a byte a
    second, each ended (408) at 5 s while its connection stays open.
    HAProxy holds both bodies (`option http-buffer-request`), so neither
    call reaches the server."""
    CONNECTIONS = 8

    def test_slow_clients_are_cut_off(self):
        self.deadline()
        headers = self.attackers(self.CONNECTIONS)
        stalled = self.attackers(self.CONNECTIONS // 2, source="127.0.0.3")
        trickled = self.attackers(self.CONNECTIONS // 2, source="127.0.0.3")
        fields = h2_raw._literal("x-slow", "a" * 100)
        for conn in headers:
            conn.sock.sendall(frame(HEADERS, 0, 1, fields[:10]))
        bodies = [(conn, conn.open_stream(SEARCH_PATH))
                  for conn in stalled + trickled]
        for conn, sid in bodies:
            conn.send_data(sid, grpc_frame(b"", announced=16))
        stop = threading.Event()

        def trickle():
            for step in range(PROBE_S):
                if stop.wait(1):
                    return
                for conn in headers:
                    send_until(conn, frame(CONTINUATION, 0, 1,
                                           fields[10 + step:11 + step]),
                               time.monotonic() + 1, 1)
                for conn, sid in bodies[len(stalled):]:
                    send_until(conn, frame(DATA, 0, sid, b"\x0a"),
                               time.monotonic() + 1, 1)

        trickler = threading.Thread(target=trickle, daemon=True)
        trickler.start()
        ends = [stream_end(conn, sid, self.left()) for conn, sid in bodies]
        closed = closed_by_server(headers, len(headers), self.left())
        stop.set()
        trickler.join()
        print(f"\nslow messages ended within {max(ends or [0]):.1f} s; "
              f"slow header blocks closed: {closed}", file=sys.stderr)
        self.assertNotIn(None, ends)
        self.assertEqual(closed, len(headers))
        self.light_calls()
        for conn in headers + stalled + trickled:
            conn.close()
        self.finish_probe()


class DescriptorFloodTest(FrontDoorCase):
    """200 connections from the attacker: HAProxy keeps at most its
    per-client limit (16) and closes the rest at once, while the light
    calls pass. Then HAProxy's maxconn (512) at its worst: connections from
    addresses 127.0.1.1 on, 16 each, every one with 32 streams holding
    15,000 bytes of a message that never ends (each stream's buffer nearly
    full), and 64 more connections beyond maxconn, left in the accept
    queue; once they close, light calls are answered again."""

    def test_connection_limits(self):
        deadline = self.deadline()
        address = (self.host, self.port)
        flood = []
        for _ in range(200):
            try:
                flood.append(tcp_from(address))
            except OSError:
                pass
        self.light_calls()
        kept = len(flood) - closed_by_server(
            [types.SimpleNamespace(sock=s) for s in flood], len(flood),
            min(2, self.left()))
        print(f"\none client's connections kept: {kept} of 200",
              file=sys.stderr)
        self.assertLessEqual(kept, PER_CLIENT)
        for s in flood:
            s.close()

        full = [attacker_connection(address, many_address(i))
                for i in range(MAXCONN)]
        beyond = [tcp_from(address, "127.0.0.4") for _ in range(64)]
        # The streams, until the probe's deadline (all of them within 3 s
        # on an idle machine, 5 s beside a CPU hog).
        partial = grpc_frame(b"\x0a" * 15000, announced=(64 << 20) - 1)
        filled = 0
        for conn in full:
            if time.monotonic() > deadline:
                break
            try:
                for _ in range(32):
                    conn.send_data(conn.open_stream(SEARCH_PATH), partial)
                    filled += 1
            except OSError:
                pass
        print(f"connections at maxconn: {len(full)}, {filled} streams of "
              f"15,000 bytes on them; {len(beyond)} beyond",
              file=sys.stderr)
        for conn in full:
            conn.close()
        for s in beyond:
            s.close()
        self.finish_probe()


class ConfigNumberTest(FrontDoorCase):
    """A model's config.json holding "n_layer": 1e400 (beyond a double):
    INVALID_ARGUMENT naming `config n_layer`, through the front door."""

    def test_a_number_beyond_a_double_is_invalid_argument(self):
        pb, _, _ = stubs()
        request = pb.ChunkSearchRequest(
            model=pb.ModelConfig(hf_config_json=(
                '{"model_type": "gpt2", "n_embd": 128, "n_head": 4, '
                '"n_layer": 1e400, "vocab_size": 50258}')),
            search_range_m=1, search_interval=1024)
        with fresh_channel(self.door.address) as channel:
            with self.assertRaises(grpc.RpcError) as caught:
                search_stub(channel)(request, timeout=PROBE_S)
        self.assertEqual(caught.exception.code(),
                         grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("config n_layer", caught.exception.details())
        self.finish_probe()


class SoftStopTest(FrontDoorCase):
    """SIGUSR1, the stop signal of HAProxy's image (deploy/haproxy/
    Dockerfile), while a call runs: HAProxy stops listening (a new call is
    UNAVAILABLE), the call in flight gets the server's answer, and HAProxy
    exits once it has."""
    SERVER_FLAGS = FrontDoorCase.SERVER_FLAGS + ("--max_search_time=2s",)

    def test_calls_in_flight_finish(self):
        from flood_test import LLAMA
        # A sweep the server ends at --max_search_time (2 s).
        request = to_message(dict(LLAMA, search_range_m=16, search_interval=1,
                                  engine="ENGINE_CPU_SWEEP"))
        with fresh_channel(self.door.address) as channel:
            call = search_stub(channel).future(request, timeout=PATIENCE_S)
            time.sleep(1)  # the call is on its way to the server
            self.door.process.send_signal(signal.SIGUSR1)
            time.sleep(0.2)
            with self.assertRaises(grpc.RpcError) as refused:
                with fresh_channel(self.door.address) as other:
                    health_stub(other)(stubs()[1].HealthCheckRequest(),
                                       timeout=PROBE_S)
            self.assertEqual(refused.exception.code(),
                             grpc.StatusCode.UNAVAILABLE)
            with self.assertRaises(grpc.RpcError) as answered:
                call.result()
            self.assertEqual(answered.exception.code(),
                             grpc.StatusCode.DEADLINE_EXCEEDED)
            self.assertIn("--max_search_time", answered.exception.details())
        self.assertEqual(self.door.process.wait(timeout=PATIENCE_S), 0)


def tls_files(mutual):
    """FrontDoor's `tls` mapping, laid out as the pod's Secret is mounted
    (deploy/kubernetes/components/mtls): tls_test.py's server certificate
    as CERT and its key beside it as CERT.key, and its CA for clients
    where `mutual`."""
    from tls_test import certs
    c = certs()
    cert = os.path.join(os.path.dirname(c["server"]), "front-door.pem")
    shutil.copy(c["server"], cert)
    shutil.copy(c["server_key"], cert + ".key")
    files = {"CHUNKPLAN_TLS_CERT": cert}
    if mutual:
        files["CHUNKPLAN_TLS_CLIENT_CA"] = c["ca"]
    return files


def credentials(client=None):
    """Channel credentials that trust tls_test.py's CA, presenting its
    `client` certificate ("client", "other_client") where given."""
    from tls_test import certs
    c = certs()

    def read(name):
        with open(c[name], "rb") as f:
            return f.read()
    if client is None:
        return grpc.ssl_channel_credentials(root_certificates=read("ca"))
    return grpc.ssl_channel_credentials(
        root_certificates=read("ca"), private_key=read(client + "_key"),
        certificate_chain=read(client))


class TlsTest(FrontDoorCase):
    """TLS from clients (CHUNKPLAN_TLS_CERT set): answered over TLS, and
    the plaintext listener as well."""
    TLS = staticmethod(functools.partial(tls_files, mutual=False))

    def test_tls_is_terminated(self):
        answer_light_calls(self.door.tls_address, credentials())
        self.finish_probe()


class MutualTlsTest(FrontDoorCase):
    """Mutual TLS (CHUNKPLAN_TLS_CLIENT_CA set too): a client certificate
    the CA signed is answered; none, or one another CA signed, is refused
    in the handshake (UNAVAILABLE), and HAProxy serves on."""
    TLS = staticmethod(functools.partial(tls_files, mutual=True))

    def test_client_certificates_are_required(self):
        address = self.door.tls_address
        answer_light_calls(address, credentials("client"))
        for refused in (None, "other_client"):
            with self.subTest(client=refused):
                with self.assertRaises(grpc.RpcError) as caught:
                    with fresh_channel(address,
                                       credentials(refused)) as channel:
                        health_stub(channel)(
                            stubs()[1].HealthCheckRequest(), timeout=5)
                self.assertEqual(caught.exception.code(),
                                 grpc.StatusCode.UNAVAILABLE)
        answer_light_calls(address, credentials("client"))
        self.finish_probe()


if __name__ == "__main__":
    unittest.main()
