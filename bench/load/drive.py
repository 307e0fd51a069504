#!/usr/bin/python3
"""The load test behind bench/load.sh: chunkplan-server driven by h2load.

Starts chunkplan-server on 127.0.0.1:0 with its metrics endpoint, checks one
call of each method with nghttp (whose verbose output shows the trailers:
grpc-status must be 0), then, within that one server run, alternates h2load
runs with the same settings --rounds times: grpc.health.v1.Health/Check (the
floor of the RPC stack: no work behind it), then chunkplan.v1.ChunkSearch/
Search with the request (default: the LLaMA-2 70B workload,
bench/workloads/llama-2-70b.json; --request another). For each round it
prints both methods' calls per second, p50 and p99 latency and failed calls,
and Search's rate over Check's; then the median of those ratios over the
rounds, the failed calls in all and the server's peak RSS over the whole
run. Default h2load settings: -n 50000 -c 4 -m 8 -t 1.

h2load counts an HTTP 200 as a success even when grpc-status is not 0, so a
call counts as served only where the server says so:
  Search  chunkplan_calls_total{method="Search",code="OK"} on /metrics, its
          rise over the run; every other call of the run failed;
  Check   the response messages received: an OK Check answers one message
          of exactly 7 bytes (5-byte frame header + status SERVING), a
          failed one none (grpc-status travels in the trailers), so the
          served calls are h2load's DATA bytes / 7.
Latency percentiles come from h2load's per-request log (--log-file).

--json FILE also writes the settings, every round's figures, the median
ratio, the verdicts and the exit status as one JSON object (bench/report.sh
reads it).

Exit status: 0 when no call failed, 1 when one did (or the server exited
other than 0 after SIGTERM), 2 on a setup error. The targets -- the median
Search/Check rate at least --target-ratio (default 0.8, the issue's figure
for LLaMA-2 70B; 0.9 for the ColossalAI GPT-2 test), peak RSS under 100 MiB
-- are reported, not enforced.
"""

import argparse
import json
import math
import os
import re
import shutil
import signal
import statistics
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
TARGET_RATE_RATIO = 0.8
TARGET_RSS_MIB = 100


class SetupError(Exception):
    pass


def framed(message_bytes):
    """A gRPC message frame: flag 0 (not compressed), 4-byte big-endian
    length, the message."""
    return b"\0" + len(message_bytes).to_bytes(4, "big") + message_bytes


def search_request(python_dir, request_path):
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
        try:
            with open(path) as f:
                json_format.Parse(f.read(), request)
        except (OSError, json_format.ParseError) as error:
            raise SetupError(f"request {path}: {error}")
        return request.SerializeToString(), path
    # The config itself (ChunkSearchRequest.model): the server describes it.
    with open(HF_CONFIG) as f:
        request.model.hf_config_json = f.read()
    request.dp_degrees.append(8)
    request.search_range_m = 32
    request.search_interval = 8192  # LLaMA-2 70B's hidden size
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

    def cpu_seconds(self):
        """User plus system CPU time the server process has used."""
        with open(f"/proc/{self.process.pid}/stat") as f:
            # Fields after the command name, which is in parentheses.
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf(
            "SC_CLK_TCK")

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
    returns a dict of its figures, latencies from its per-request log. Its
    output and log are `name`.h2load.out and .log in `work_dir`."""
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


def load_check(server, bodies, args, work_dir, name):
    """One h2load run of Check; its figures with "served", the calls
    answered OK: an OK Check answers exactly one 7-byte message, a failed
    one none."""
    cpu = server.cpu_seconds()
    check = h2load(server.address, CHECK, bodies["check"], args, work_dir,
                   name)
    check["server_cpu_us"] = (server.cpu_seconds() - cpu) / \
        check["requests"] * 1e6
    check["served"] = check["data_bytes"] // CHECK_RESPONSE_BYTES
    if check["data_bytes"] % CHECK_RESPONSE_BYTES:
        check["served"] = 0  # not a whole number of answers: all suspect
    check["codes"] = {}
    return check


def load_search(server, bodies, args, work_dir, name):
    """One h2load run of Search; its figures with "served", the rise of the
    server's OK count over the run, and "codes", {status code: calls} of
    those not OK."""
    before = server.search_calls_by_code()
    cpu = server.cpu_seconds()
    search = h2load(server.address, SEARCH, bodies["search"], args, work_dir,
                    name)
    search["server_cpu_us"] = (server.cpu_seconds() - cpu) / \
        search["requests"] * 1e6
    after = server.search_calls_by_code()
    moved = {code: after.get(code, 0) - before.get(code, 0) for code in after}
    search["served"] = moved.get("OK", 0)
    search["codes"] = {c: n for c, n in moved.items() if n and c != "OK"}
    return search


def measure(server, bodies, args, work_dir):
    """Runs the preflight calls, then Check and Search --rounds times
    against `server`; returns ([{"check": figures, "search": figures,
    "ratio": Search's rate / Check's}, ...], peak RSS in KiB). Each figures
    dict has h2load's, "served" (calls answered OK by the server's account)
    and "failed"."""
    preflight(server.address, CHECK, bodies["check"])
    preflight(server.address, SEARCH, bodies["search"])
    rounds = []
    for number in range(1, args.rounds + 1):
        check = load_check(server, bodies, args, work_dir, f"check.{number}")
        search = load_search(server, bodies, args, work_dir,
                             f"search.{number}")
        for figures in (check, search):
            figures["failed"] = figures["requests"] - figures["served"]
        rounds.append({"check": check, "search": search,
                       "ratio": search["rate"] / check["rate"]})
    return rounds, server.peak_rss_kib()


def milliseconds(value):
    return "-" if value is None else f"{value:.3f}"


def verdict(met):
    return "met" if met else "MISSED"


def summary(args, source, request_bytes, rounds, peak_kib, exit_code):
    """The run's figures and verdicts as a dict (the --json object, less
    the exit status)."""
    ratios = [r["ratio"] for r in rounds]
    median = statistics.median(ratios)
    # The round whose ratio is the median (the lower middle one for an even
    # count of rounds).
    middle = sorted(range(len(rounds)), key=lambda i: ratios[i])[
        (len(rounds) - 1) // 2]
    codes = {}
    for r in rounds:
        for code, calls in r["search"]["codes"].items():
            codes[code] = codes.get(code, 0) + calls
    peak_mib = peak_kib / 1024
    return {
        "request": os.path.relpath(source, ROOT),
        "request_bytes": request_bytes,
        "server_flags": args.server_flag,
        "h2load": {"requests": args.requests, "clients": args.clients,
                   "streams": args.streams, "threads": args.threads},
        "rounds": rounds,
        "median_ratio": median,
        # Server CPU per call (user + system, in µs, at the clock tick's
        # resolution): less moved by the client's share of the cores than
        # the rates are.
        "median_cpu_us": {
            method: statistics.median(r[method]["server_cpu_us"]
                                      for r in rounds)
            for method in ("check", "search")},
        "median_round": middle + 1,
        "target_ratio": args.target_ratio,
        "ratio_met": median >= args.target_ratio,
        "failed": sum(r["check"]["failed"] + r["search"]["failed"]
                      for r in rounds),
        "search_not_ok": codes,
        "peak_rss_mib": peak_mib,
        "target_rss_mib": TARGET_RSS_MIB,
        "rss_met": peak_mib < TARGET_RSS_MIB,
        "server_exit_code": exit_code,
    }


def print_report(report):
    """Prints the settings, the table of the rounds and the targets."""
    h2 = report["h2load"]
    print(f"chunkplan-server {' '.join(report['server_flags'])}".rstrip())
    print(f"request: {report['request']}, {report['request_bytes']} bytes")
    print(f"h2load: -n {h2['requests']} -c {h2['clients']} "
          f"-m {h2['streams']} -t {h2['threads']}, the same for both "
          f"methods; {len(report['rounds'])} round(s) of Check then Search "
          "in one server run")
    print()
    print(f"{'':5} {'Health/Check':^33}   "
          f"{'ChunkSearch/Search':^33}".rstrip())
    columns = f"{'calls/s':>9} {'p50 ms':>7} {'p99 ms':>7} {'failed':>7}"
    print(f"{'round':5} {columns}   {columns}   {'Search/Check':>12}")
    for number, r in enumerate(report["rounds"], 1):
        cells = []
        for figures in (r["check"], r["search"]):
            cells.append(f"{figures['rate']:>9.0f} "
                         f"{milliseconds(figures['p50_ms']):>7} "
                         f"{milliseconds(figures['p99_ms']):>7} "
                         f"{figures['failed']:>7}")
        print(f"{number:>5} {cells[0]}   {cells[1]}   {r['ratio']:>12.2f}")
    print()
    print(f"Search/Check rate, median of {len(report['rounds'])} round(s): "
          f"{report['median_ratio']:.2f} (round {report['median_round']}; "
          f"target >= {report['target_ratio']}: "
          f"{verdict(report['ratio_met'])})")
    cpu = report["median_cpu_us"]
    print(f"server CPU per call, median over rounds: Check "
          f"{cpu['check']:.1f} µs, Search {cpu['search']:.1f} µs "
          f"(Check/Search {cpu['check'] / cpu['search']:.2f})")
    print(f"failed calls, all rounds: {report['failed']}")
    print(f"server peak RSS (VmHWM): {report['peak_rss_mib']:.1f} MiB "
          f"(target < {report['target_rss_mib']} MiB: "
          f"{verdict(report['rss_met'])})")
    if report["search_not_ok"]:
        print("Search calls not OK, by code: "
              f"{json.dumps(report['search_not_ok'])}")
    print(f"server exit code after SIGTERM: {report['server_exit_code']}")


def run(args):
    """The whole load test; returns the exit status."""
    for tool in ("h2load", "nghttp"):
        if not shutil.which(tool):
            raise SetupError(f"{tool} not found (Debian: nghttp2-client)")
    if not os.access(args.server, os.X_OK):
        raise SetupError(f"no chunkplan-server at {args.server}")
    search_bytes, source = search_request(args.python_dir, args.request)
    work_dir = tempfile.mkdtemp(prefix="chunkplan_load_")
    bodies = write_bodies(search_bytes, work_dir)
    server = Server(args.server, args.server_flag,
                    os.path.join(work_dir, "server.log"))
    try:
        rounds, peak_kib = measure(server, bodies, args, work_dir)
    except SetupError as error:
        raise SetupError(f"{error}\n(logs in {work_dir})") from None
    finally:
        exit_code = server.stop()
    report = summary(args, source, len(search_bytes), rounds, peak_kib,
                     exit_code)
    print_report(report)
    failed = report["failed"]
    status = 1 if failed or exit_code != 0 else 0
    if args.json:
        try:
            with open(args.json, "w") as f:
                json.dump(dict(report, exit_status=status), f, indent=2)
                f.write("\n")
        except OSError as error:
            raise SetupError(f"cannot write {args.json}: {error}")
    if status:
        print(f"FAIL: {failed} failed call(s), server exit {exit_code}; "
              f"logs kept in {work_dir}")
        return status
    if args.keep_logs:
        print(f"logs: {work_dir}")
    else:
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0


def positive(text):
    """argparse's type for a count of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: not a positive count")
    return value


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", required=True,
                        help="the chunkplan-server binary")
    parser.add_argument("--python_dir", required=True,
                        help="<build>/python (the chunkplan package)")
    parser.add_argument("--request", help="a ChunkSearchRequest in protobuf "
                        "JSON (default: the LLaMA-2 70B workload)")
    parser.add_argument("-n", "--requests", type=positive, default=50000,
                        help="calls per method and round (default 50000)")
    parser.add_argument("-c", "--clients", type=positive, default=4,
                        help="h2load connections (default 4)")
    parser.add_argument("-m", "--streams", type=positive, default=8,
                        help="concurrent streams per connection (default 8)")
    parser.add_argument("-t", "--threads", type=positive, default=1,
                        help="h2load threads (default 1)")
    parser.add_argument("--rounds", type=positive, default=3,
                        help="Check-then-Search rounds in the one server "
                        "run; the ratio reported is their median "
                        "(default 3)")
    parser.add_argument("--target-ratio", type=float,
                        default=TARGET_RATE_RATIO,
                        help="the median Search/Check rate to reach "
                        f"(reported, not enforced; default "
                        f"{TARGET_RATE_RATIO})")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the figures and verdicts to FILE "
                        "as JSON")
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
