#!/usr/bin/python3
"""The load test behind bench/load.sh: chunkplan-server driven by h2load.

Starts chunkplan-server on 127.0.0.1:0 with its metrics endpoint, checks one
call of each method with nghttp (whose verbose output shows the trailers:
grpc-status must be 0), then runs h2load twice with the same settings --
grpc.health.v1.Health/Check (the floor of the RPC stack: no work behind it)
and chunkplan.v1.ChunkSearch/Search with the LLaMA-2 70B request -- and
prints calls, calls per second, p50 and p99 latency, failed calls and the
server's peak RSS.

h2load counts an HTTP 200 as a success even when grpc-status is not 0, so a
call counts as served only where the server says so:
  Search  chunkplan_calls_total{method="Search",code="OK"} on /metrics, its
          rise over the run; every other call of the run failed;
  Check   the response messages received: an OK Check answers one message
          of exactly 7 bytes (5-byte frame header + status SERVING), a
          failed one none (grpc-status travels in the trailers), so the
          served calls are h2load's DATA bytes / 7.
Latency percentiles come from h2load's per-request log (--log-file).

Exit status: 0 when no call failed, 1 when one did, 2 on a setup error. The
targets (Search at least half of Check's rate, peak RSS under 100 MiB) are
reported, not enforced.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
WORKLOAD = os.path.join(ROOT, "bench", "workloads", "llama-2-70b.json")
HF_CONFIG = os.path.join(ROOT, "tests", "python", "data", "hf_configs",
                         "llama-2-70b.json")
SEARCH = "/chunkplan.v1.ChunkSearch/Search"
CHECK = "/grpc.health.v1.Health/Check"
# An empty HealthCheckRequest, framed: not compressed, length 0.
CHECK_BODY = bytes(5)
# A Check answer: frame header + HealthCheckResponse{status: SERVING (1)}.
CHECK_RESPONSE_BYTES = 5 + 2
READY = re.compile(r"chunkplan-server listening on (\S+?)(?:\"|\s|$)")
METRICS_AT = re.compile(r"chunkplan-server metrics on (http://\S+/metrics)")
# chunkplan_calls_total{method="Search",code="..."} N, labels in any order.
SEARCH_CALLS = re.compile(
    r'^chunkplan_calls_total\{(?=[^}]*method="Search")'
    r'(?=[^}]*code="([A-Z_]+)")[^}]*\} (\S+)$', re.M)
GRPC_HEADERS = ["content-type: application/grpc", "te: trailers"]
# Bound on start-up, the preflight calls and shutdown, in seconds.
PATIENCE_S = 60
TARGET_RATE_RATIO = 0.5
TARGET_RSS_MIB = 100


class SetupError(Exception):
    pass


def framed(message_bytes):
    """A gRPC message frame: flag 0 (not compressed), 4-byte big-endian
    length, the message."""
    return b"\0" + len(message_bytes).to_bytes(4, "big") + message_bytes


def llama2_70b_request(python_dir, request_path):
    """The serialized ChunkSearchRequest: `request_path` (protobuf JSON), else
    bench/workloads/llama-2-70b.json, else LLaMA-2 70B from its HF config at
    GeminiPlugin's defaults (range 32 MiB, minimum 32 MiB, interval = hidden
    size 8192, dp 8). Returns (bytes, where it came from)."""
    sys.path.insert(0, python_dir)
    from google.protobuf import json_format
    from chunkplan.v1 import chunk_search_pb2
    request = chunk_search_pb2.ChunkSearchRequest()
    path = request_path or (WORKLOAD if os.path.exists(WORKLOAD) else None)
    if path:
        with open(path) as f:
            json_format.Parse(f.read(), request)
        return request.SerializeToString(), path
    from chunkplan import models
    model = models.describe(HF_CONFIG)
    request.numels.extend(model.numels)
    request.dp_degrees.append(8)
    request.search_range_m = 32
    request.search_interval = model.hidden_size
    request.min_chunk_size_m = 32
    request.filter_exlarge_params = True
    return request.SerializeToString(), f"{HF_CONFIG} (GeminiPlugin defaults)"


class Server:
    """chunkplan-server on 127.0.0.1:0 with metrics on 127.0.0.1:0; its log
    goes to `log_path`."""

    def __init__(self, binary, flags, log_path):
        self.log_path = log_path
        self._log = open(log_path, "w")
        self.process = subprocess.Popen(
            [binary, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
             *flags], stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + PATIENCE_S
        self.address = self.metrics_url = None
        while time.monotonic() < deadline and self.process.poll() is None:
            text = self.log()
            ready, metrics = READY.search(text), METRICS_AT.search(text)
            if ready and metrics:
                self.address = ready.group(1)
                self.metrics_url = metrics.group(1)
                return
            time.sleep(0.05)
        self.stop()
        raise SetupError("chunkplan-server did not report its addresses:\n"
                         + self.log())

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def peak_rss_kib(self):
        """VmHWM of the server process, in KiB."""
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        raise SetupError("no VmHWM in /proc/PID/status")

    def search_calls_by_code(self):
        """{code: count} of chunkplan_calls_total for Search."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(self.metrics_url, timeout=PATIENCE_S) as response:
            text = response.read().decode()
        return {code: int(float(value))
                for code, value in SEARCH_CALLS.findall(text)}

    def stop(self):
        """SIGTERM; returns the exit code (SIGKILL after PATIENCE_S)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=PATIENCE_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode


def preflight(address, path, body_path):
    """One call with nghttp; raises SetupError unless its trailers say
    grpc-status: 0."""
    command = ["nghttp", "-v", "-n", "-d", body_path,
               *[arg for h in GRPC_HEADERS for arg in ("-H", h)],
               f"http://{address}{path}"]
    result = subprocess.run(command, capture_output=True, text=True,
                            errors="replace", timeout=PATIENCE_S)
    status = re.findall(r"grpc-status: (\d+)", result.stdout)
    if result.returncode != 0 or status != ["0"]:
        raise SetupError(f"preflight {path}: grpc-status {status}, exit "
                         f"{result.returncode}:\n{result.stdout[-3000:]}"
                         f"{result.stderr[-2000:]}")


def percentile(sorted_values, fraction):
    """Nearest-rank percentile of a sorted list."""
    rank = max(1, math.ceil(fraction * len(sorted_values)))
    return sorted_values[rank - 1]


def h2load(address, path, body_path, settings, work_dir, name):
    """Runs h2load with `settings` (requests, clients, streams, threads);
    returns a dict of its figures, latencies from its per-request log."""
    log_path = os.path.join(work_dir, f"{name}.h2load.log")
    command = ["h2load", "-n", str(settings.requests),
               "-c", str(settings.clients), "-m", str(settings.streams),
               "-t", str(settings.threads), "-d", body_path,
               *[arg for h in GRPC_HEADERS for arg in ("-H", h)],
               f"--log-file={log_path}", f"http://{address}{path}"]
    result = subprocess.run(command, capture_output=True, text=True)
    out = result.stdout
    with open(os.path.join(work_dir, f"{name}.h2load.out"), "w") as f:
        f.write(" ".join(command) + "\n" + out + result.stderr)
    if result.returncode != 0:
        raise SetupError(f"h2load {path} exited {result.returncode}:\n"
                         f"{out}{result.stderr}")

    def grab(pattern):
        match = re.search(pattern, out, re.M)
        if not match:
            raise SetupError(f"h2load output lacks {pattern!r}:\n{out}")
        return match

    finished = grab(r"^finished in ([\d.]+)(\w+), ([\d.]+) req/s")
    requests = grab(r"^requests: (\d+) total, (\d+) started, (\d+) done, "
                    r"(\d+) succeeded, (\d+) failed, (\d+) errored, "
                    r"(\d+) timeout")
    codes = grab(r"^status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
    traffic = grab(r"^traffic: .*, [\d.]+\w* \((\d+)\) data")
    unit = {"s": 1.0, "ms": 1e-3, "us": 1e-6}[finished.group(2)]
    latencies = []
    with open(log_path) as f:
        for line in f:
            fields = line.split("\t")
            if len(fields) >= 3 and fields[1] == "200":
                latencies.append(int(fields[2]))
    latencies.sort()
    return {
        "requests": int(requests.group(1)),
        "succeeded_http": int(requests.group(4)),
        "http_2xx": int(codes.group(1)),
        "seconds": float(finished.group(1)) * unit,
        "rate": float(finished.group(3)),
        "data_bytes": int(traffic.group(1)),
        "p50_ms": percentile(latencies, 0.50) / 1e3 if latencies else None,
        "p99_ms": percentile(latencies, 0.99) / 1e3 if latencies else None,
    }


def write_bodies(search_bytes, work_dir):
    """{"check": path, "search": path} of the framed request bodies."""
    bodies = {}
    for name, body in (("check", CHECK_BODY),
                       ("search", framed(search_bytes))):
        bodies[name] = os.path.join(work_dir, f"{name}.body")
        with open(bodies[name], "wb") as f:
            f.write(body)
    return bodies


def measure(server, bodies, args, work_dir):
    """Runs the preflight calls and both loads against `server`; returns
    (Check figures, Search figures, peak RSS in KiB). Each figures dict has
    h2load's and "served" (calls answered OK by the server's account);
    Search's also "codes", {status code: calls} of those not OK."""
    preflight(server.address, CHECK, bodies["check"])
    preflight(server.address, SEARCH, bodies["search"])
    check = h2load(server.address, CHECK, bodies["check"], args, work_dir,
                   "check")
    # An OK Check answers exactly one 7-byte message, a failed one none.
    check["served"] = check["data_bytes"] // CHECK_RESPONSE_BYTES
    if check["data_bytes"] % CHECK_RESPONSE_BYTES:
        check["served"] = 0  # not a whole number of answers: all suspect
    before = server.search_calls_by_code()
    search = h2load(server.address, SEARCH, bodies["search"], args, work_dir,
                    "search")
    after = server.search_calls_by_code()
    moved = {code: after.get(code, 0) - before.get(code, 0) for code in after}
    search["served"] = moved.get("OK", 0)
    search["codes"] = {c: n for c, n in moved.items() if n and c != "OK"}
    for figures in (check, search):
        figures["failed"] = figures["requests"] - figures["served"]
    return check, search, server.peak_rss_kib()


def milliseconds(value):
    return "-" if value is None else f"{value:.3f}"


def print_report(args, source, request_bytes, check, search, peak_kib,
                 exit_code):
    """Prints the settings, the table of both methods and the targets."""
    print(f"chunkplan-server {' '.join(args.server_flag)}".rstrip())
    print(f"request: LLaMA-2 70B from {os.path.relpath(source, ROOT)}, "
          f"{request_bytes} bytes")
    print(f"h2load: -n {args.requests} -c {args.clients} -m {args.streams} "
          f"-t {args.threads}, the same for both methods")
    print()
    print(f"{'method':34} {'calls':>7} {'calls/s':>9} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'failed':>7}")
    for name, figures in ((CHECK, check), (SEARCH, search)):
        print(f"{name.lstrip('/'):34} {figures['requests']:>7} "
              f"{figures['rate']:>9.0f} {milliseconds(figures['p50_ms']):>8} "
              f"{milliseconds(figures['p99_ms']):>8} {figures['failed']:>7}")
    print()
    print(f"Search/Check rate: {search['rate'] / check['rate']:.2f} "
          f"(target >= {TARGET_RATE_RATIO})")
    print(f"server peak RSS (VmHWM): {peak_kib / 1024:.1f} MiB "
          f"(target < {TARGET_RSS_MIB} MiB)")
    if search["codes"]:
        print(f"Search calls not OK, by code: {json.dumps(search['codes'])}")
    print(f"server exit code after SIGTERM: {exit_code}")


def run(args):
    """The whole load test; returns the exit status."""
    for tool in ("h2load", "nghttp"):
        if not shutil.which(tool):
            raise SetupError(f"{tool} not found (Debian: nghttp2-client)")
    if not os.access(args.server, os.X_OK):
        raise SetupError(f"no chunkplan-server at {args.server}")
    work_dir = tempfile.mkdtemp(prefix="chunkplan_load_")
    search_bytes, source = llama2_70b_request(args.python_dir, args.request)
    bodies = write_bodies(search_bytes, work_dir)
    server = Server(args.server, args.server_flag,
                    os.path.join(work_dir, "server.log"))
    try:
        check, search, peak_kib = measure(server, bodies, args, work_dir)
    except SetupError as error:
        raise SetupError(f"{error}\n(logs in {work_dir})") from None
    finally:
        exit_code = server.stop()
    print_report(args, source, len(search_bytes), check, search, peak_kib,
                 exit_code)
    failed = check["failed"] + search["failed"]
    if failed or exit_code != 0:
        print(f"FAIL: {failed} failed call(s), server exit {exit_code}; "
              f"logs kept in {work_dir}")
        return 1
    if args.keep_logs:
        print(f"logs: {work_dir}")
    else:
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True,
                        help="the chunkplan-server binary")
    parser.add_argument("--python_dir", required=True,
                        help="<build>/python (the chunkplan package)")
    parser.add_argument("--request", help="a ChunkSearchRequest in protobuf "
                        "JSON (default: the LLaMA-2 70B workload)")
    parser.add_argument("-n", "--requests", type=int, default=50000,
                        help="calls per method")
    parser.add_argument("-c", "--clients", type=int, default=4,
                        help="h2load connections")
    parser.add_argument("-m", "--streams", type=int, default=16,
                        help="concurrent streams per connection")
    parser.add_argument("-t", "--threads", type=int, default=1,
                        help="h2load threads")
    parser.add_argument("--server_flag", action="append", default=[],
                        help="a flag for chunkplan-server (repeatable); "
                        "--log_level must stay at info or below: the "
                        "ready line that names the port is an info line")
    parser.add_argument("--keep_logs", action="store_true",
                        help="keep the server log and h2load's output "
                        "(always kept when a call fails)")
    args = parser.parse_args(argv)
    try:
        return run(args)
    except SetupError as error:
        print(f"load: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
