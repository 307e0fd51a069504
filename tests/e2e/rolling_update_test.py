#!/usr/bin/python3
"""A rolling update of chunkplan-server on loopback, and its drain (issue 32,
finding 8).

  RollingUpdateTest  three replicas under load from clients with the
                     documented client configuration (the Python client's
                     DEFAULT_OPTIONS: round_robin over
                     "ipv4:127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3" and
                     UNAVAILABLE retried); one replica gets SIGTERM (and
                     drains with --shutdown_delay), another SIGKILL: no call
                     fails, every answer is ColossalAI's published GPT-2
                     figure. Then the same without the retry policy, measured
                     and printed, not asserted.
  DrainTest          after SIGTERM the health service answers NOT_SERVING
                     while Searches are still served for --shutdown_delay;
                     a stream whose request never completes does not hold
                     the drain for --shutdown_grace.

Environment: CHUNKPLAN_SERVER (required), CHUNKPLAN_PROTOC and
CHUNKPLAN_GRPC_PROTO_DIR, as in server_test.py.

  CHUNKPLAN_SERVER=build/bin/chunkplan-server \
  /usr/bin/python3 tests/e2e/rolling_update_test.py -v
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

import grpc

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
from h2_raw import RawConnection, grpc_frame  # noqa: E402
from server_test import (ROOT, SERVICE, Server, load,  # noqa: E402
                         search_stub, stubs, to_message)

PATIENCE_S = 60
GPT2 = load(os.path.join(ROOT, "examples", "gpt2_colossalai.json"))
# ColossalAI's published chunk size for its GPT-2 test model.
GPT2_CHUNK_SIZE = 527872
DRAIN_FLAGS = ("--threads=2", "--sweep_threads=1", "--shutdown_delay=1s",
               "--shutdown_grace=30s")


def documented_options():
    """The Python client's DEFAULT_OPTIONS (docs/deploy.md, "Client
    configuration"), from chunkplan/channel_options.py loaded by its path, so
    that this test needs neither the generated chunkplan.v1 package nor
    numpy."""
    import importlib.util
    path = os.path.join(ROOT, "client", "python", "chunkplan",
                        "channel_options.py")
    spec = importlib.util.spec_from_file_location("channel_options", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(module.DEFAULT_OPTIONS)


def without_retries(options):
    """`options` with the service config's retry policy dropped."""
    out = []
    for key, value in options:
        if key == "grpc.service_config":
            config = json.loads(value)
            config.pop("methodConfig", None)
            value = json.dumps(config)
        out.append((key, value))
    return out


class Load:
    """`threads` callers of a GPT-2 test Search on one channel over
    `servers`; stop() returns the outcomes (code name, chunk size or
    details)."""

    def __init__(self, servers, options, threads=4):
        target = "ipv4:" + ",".join(s.address for s in servers)
        self.channel = grpc.insecure_channel(target, options=options)
        self.call = search_stub(self.channel)
        self.message = to_message(GPT2)
        self.outcomes = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True)
                        for _ in range(threads)]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def _run(self):
        while not self.stopping.is_set():
            try:
                answer = self.call(self.message, timeout=PATIENCE_S)
                outcome = ("OK", answer.configs[0].chunk_size)
            except grpc.RpcError as error:
                outcome = (error.code().name, error.details())
            with self.lock:
                self.outcomes.append(outcome)

    def count(self):
        with self.lock:
            return len(self.outcomes)

    def wait_calls(self, more):
        """Waits until `more` calls have finished beyond now."""
        target = self.count() + more
        deadline = time.monotonic() + PATIENCE_S
        while self.count() < target and time.monotonic() < deadline:
            time.sleep(0.05)

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=2 * PATIENCE_S)
        self.channel.close()
        return list(self.outcomes)


def roll(options):
    """Three replicas under Load with `options`: SIGTERM to one, SIGKILL to
    another; returns (outcomes, SIGTERMed replica's exit code)."""
    replicas = [Server(*DRAIN_FLAGS) for _ in range(3)]
    try:
        load_ = Load(replicas, options).start()
        load_.wait_calls(300)
        replicas[0].process.send_signal(signal.SIGTERM)
        load_.wait_calls(300)
        replicas[1].process.send_signal(signal.SIGKILL)
        load_.wait_calls(300)
        outcomes = load_.stop()
    finally:
        codes = [r.stop() for r in replicas]
    return outcomes, codes[0]


class RollingUpdateTest(unittest.TestCase):
    def test_sigterm_and_sigkill_fail_no_call(self):
        options = documented_options()
        outcomes, drained = roll(options)
        failed = [o for o in outcomes if o[0] != "OK"]
        print(f"\nwith the documented configuration: {len(outcomes)} calls, "
              f"{len(failed)} failed", file=sys.stderr)
        self.assertEqual(failed, [])
        self.assertGreaterEqual(len(outcomes), 900)
        self.assertEqual({o[1] for o in outcomes}, {GPT2_CHUNK_SIZE})
        self.assertEqual(drained, 0)
        # Measured, not asserted: what the retry policy saves.
        outcomes, _ = roll(without_retries(options))
        failed = [o for o in outcomes if o[0] != "OK"]
        print(f"without the retry policy: {len(outcomes)} calls, "
              f"{len(failed)} failed: {sorted(set(f[0] for f in failed))}",
              file=sys.stderr)


class DrainTest(unittest.TestCase):
    def test_not_serving_is_seen_before_shutdown(self):
        _, health, _ = stubs()
        server = Server("--shutdown_delay=3s", "--shutdown_grace=30s")
        with server.channel() as channel:
            check = channel.unary_unary(
                "/grpc.health.v1.Health/Check",
                request_serializer=health.HealthCheckRequest.SerializeToString,
                response_deserializer=health.HealthCheckResponse.FromString)
            search = search_stub(channel)
            check(health.HealthCheckRequest(), timeout=PATIENCE_S)
            server.process.send_signal(signal.SIGTERM)
            status = health.HealthCheckResponse.SERVING
            deadline = time.monotonic() + PATIENCE_S
            while (status == health.HealthCheckResponse.SERVING and
                   time.monotonic() < deadline):
                status = check(health.HealthCheckRequest(service=SERVICE),
                               timeout=PATIENCE_S).status
            self.assertEqual(status, health.HealthCheckResponse.NOT_SERVING)
            # Still served: the delay has not run out (it is 3 s; this
            # Search follows the NOT_SERVING answer at once).
            answer = search(to_message(GPT2), timeout=PATIENCE_S)
            self.assertEqual(answer.configs[0].chunk_size, GPT2_CHUNK_SIZE)
        self.assertEqual(server.stop(), 0, server.log())

    def test_half_open_stream_does_not_hold_the_drain(self):
        grace_s = 300
        server = Server("--shutdown_grace=%ds" % grace_s)
        host, port = server.address.rsplit(":", 1)
        conn = RawConnection((host, int(port)))
        conn.first_settings()
        sid = conn.open_stream(f"/{SERVICE}/Search")
        conn.send_data(sid, grpc_frame(b"\x0a", announced=1000))
        time.sleep(0.5)  # let the server take the stream
        started = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        try:
            code = server.process.wait(timeout=grace_s / 5)
        except subprocess.TimeoutExpired:
            code = None
        took = time.monotonic() - started
        conn.close()
        print(f"\ndrain with one half-open stream took {took:.2f} s "
              f"(grace {grace_s} s)", file=sys.stderr)
        self.assertEqual(code, 0, server.log())
        server.stop()


if __name__ == "__main__":
    unittest.main()
