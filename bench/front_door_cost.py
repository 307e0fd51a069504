#!/usr/bin/python3
"""What the front door costs: chunkplan-server driven by h2load directly
and through HAProxy (deploy/haproxy/haproxy.cfg, started as
tests/e2e/front_door_test.py starts it), alternated --rounds times in one
run of each. Prints per run the calls per second and the CPU seconds per
1,000 calls of the server and of HAProxy; a call counts as served only
where the server's metrics say OK (h2load counts any HTTP 200).

The configuration's per-client call rate (10,000 per 10 s) would refuse
h2load's one address within a second, so that one rule is left out of the
copy this runs; everything else is the deployed file.

  CHUNKPLAN_SERVER=build/bin/chunkplan-server \
  /usr/bin/python3 bench/front_door_cost.py [--calls 20000] [--rounds 3]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import front_door_test as door_test  # noqa: E402
from server_test import Server  # noqa: E402


def served(server):
    """Search calls the server has answered OK."""
    url = re.search(r"metrics on (http://\S+/metrics)", server.log()).group(1)
    with urllib.request.urlopen(url, timeout=60) as answer:
        metrics = answer.read().decode()
    match = re.search(r'^chunkplan_calls_total\{[^}]*method="Search"[^}]*'
                      r'code="OK"[^}]*\} (\S+)$', metrics, re.M)
    return int(float(match.group(1))) if match else 0


def run(address, body, calls, server, door):
    before = (served(server), door_test.cpu_seconds(server.process.pid),
              door_test.cpu_seconds(door.process.pid))
    out = subprocess.run(
        ["h2load", "-n", str(calls), "-c", "4", "-m", "8", "-d", body,
         "-H", "content-type: application/grpc", "-H", "te: trailers",
         f"http://{address}{door_test.SEARCH_PATH}"],
        capture_output=True, text=True, check=True, timeout=600).stdout
    rate = float(re.search(r"finished in \S+, ([\d.]+) req/s", out).group(1))
    ok = served(server) - before[0]
    server_cpu = door_test.cpu_seconds(server.process.pid) - before[1]
    door_cpu = door_test.cpu_seconds(door.process.pid) - before[2]
    return rate, ok, 1000 * server_cpu / calls, 1000 * door_cpu / calls


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    with open(door_test.CONFIG) as f:
        config = "".join(line for line in f
                         if "sc_http_req_rate(0) gt" not in line)
    with tempfile.TemporaryDirectory() as tmp:
        door_test.CONFIG = os.path.join(tmp, "haproxy.cfg")
        with open(door_test.CONFIG, "w") as f:
            f.write(config)
        body = os.path.join(tmp, "search.grpc")
        with open(body, "wb") as f:
            f.write(door_test.grpc_frame(
                door_test.to_message(door_test.GPT2).SerializeToString()))
        server = Server("--threads=2", "--sweep_threads=1",
                        "--metrics_listen=127.0.0.1:0")
        door = door_test.FrontDoor(server.address)
        try:
            print("run             calls/s  served  server CPU s/1000  "
                  "HAProxy CPU s/1000")
            for _ in range(options.rounds):
                for name, address in (("direct", server.address),
                                      ("through HAProxy", door.address)):
                    rate, ok, server_cpu, door_cpu = run(
                        address, body, options.calls, server, door)
                    print(f"{name:15} {rate:8.0f} {ok:7d} {server_cpu:18.3f} "
                          f"{door_cpu:19.3f}")
        finally:
            door.stop()
            server.stop()


if __name__ == "__main__":
    main()
