#!/usr/bin/python3
"""A real call's server instructions: chunkplan-server under callgrind.

    callgrind_server.py --build BUILD [--request FILE] [-n N]
        [--server_flag FLAG ...] [--fn REGEX ...] [--keep DIR]

Starts BUILD/bin/chunkplan-server under `valgrind --tool=callgrind`, sends
--warmup calls of each method with h2load, then for Check (the floor: no
work behind it) and for Search with the request (default: LLaMA-2 70B,
bench/workloads/llama-2-70b.json) zeroes the counters
(`callgrind_control -z`), sends N calls (-c 4 -m 8, as bench/load.sh) and
dumps them (`callgrind_control -d`). Prints each method's instructions (Ir)
per call, over every thread of the server, and for Search the inclusive Ir
per call of each --fn (bench/callgrind_per_call.py). Callgrind counts
user-space instructions only: the kernel's share of a call (about a third
of its CPU time on the development machine, `perf record`) is not in them.
Instruction counts do not move with the machine's load, unlike times.

    bench/callgrind_server.py --build build -n 2000
    bench/callgrind_server.py --build build -n 2000 \\
        --server_flag=--max_inline_work=0     # every search to the pool

--append HEX adds bytes to the serialized request (7b7c: an empty group of
the unknown field 15, which protobuf keeps as an unknown field).
"""

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "load"))
sys.path.insert(0, HERE)
import drive  # noqa: E402  (bench/load/drive.py: bodies, h2load)
import callgrind_per_call  # noqa: E402

DEFAULT_FNS = [
    r"service::ParseAndCheck\(",
    r"service::ParseRequest\(",
    r"service::CheckAndConvert\(",
    r"planner::BuildSearchPlan\(",
    r"CpuPlateauEngine::Best\(",
    r"planner::Planner::Search\(",
]


class Settings:
    def __init__(self, requests, clients=4, streams=8, threads=1):
        self.requests, self.clients = requests, clients
        self.streams, self.threads = streams, threads


def start(server, flags, work_dir, valgrind_args):
    """The server under callgrind, its process and address."""
    log_path = os.path.join(work_dir, "server.log")
    log = open(log_path, "w")
    process = subprocess.Popen(
        ["valgrind", "--tool=callgrind", *valgrind_args,
         f"--callgrind-out-file={work_dir}/callgrind.out",
         server, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
         *flags], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        with open(log_path) as f:
            ready = drive.READY.search(f.read())
        if ready:
            return process, ready.group(1)
        time.sleep(0.2)
    process.kill()
    with open(log_path) as f:
        raise SystemExit("the server did not start:\n" + f.read()[-3000:])


def control(pid, option):
    subprocess.run(["callgrind_control", option, str(pid)], check=True,
                   capture_output=True)


def measured(pid, address, path, body, calls, work_dir, name):
    """The profile of `calls` calls of `path`: its file."""
    before = set(glob.glob(f"{work_dir}/callgrind.out.*"))
    control(pid, "-z")
    drive.h2load(address, path, body, Settings(calls), work_dir, name)
    control(pid, "-d")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        new = set(glob.glob(f"{work_dir}/callgrind.out.*")) - before
        if new:
            time.sleep(1)  # the dump is written in one go; let it finish
            return new.pop()
        time.sleep(0.2)
    raise SystemExit("callgrind_control -d wrote no profile")


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--build", required=True)
    parser.add_argument("--request", help="protobuf JSON of the Search")
    parser.add_argument("-n", type=int, default=2000, help="calls measured")
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--append", default="", help="hex bytes appended "
                        "to the serialized Search request")
    parser.add_argument("--server_flag", action="append", default=[])
    parser.add_argument("--valgrind_arg", action="append", default=[],
                        help="e.g. --cache-sim=yes: the simulated cache "
                        "misses per call are printed too")
    parser.add_argument("--fn", action="append", help="functions to report "
                        "per Search call (default: the fast paths)")
    parser.add_argument("--keep", help="keep the profiles in this folder")
    args = parser.parse_args()
    work_dir = args.keep or tempfile.mkdtemp(prefix="chunkplan_cg_")
    os.makedirs(work_dir, exist_ok=True)
    search_bytes, source = drive.search_request(
        os.path.join(args.build, "python"), args.request)
    bodies = drive.write_bodies(search_bytes + bytes.fromhex(args.append),
                                work_dir)
    process, address = start(
        os.path.join(args.build, "bin", "chunkplan-server"),
        args.server_flag, work_dir, args.valgrind_arg)
    try:
        for method, path in (("check", drive.CHECK), ("search", drive.SEARCH)):
            drive.h2load(address, path, bodies[method],
                         Settings(args.warmup), work_dir, f"warm-{method}")
        print(f"request {source}; server flags {args.server_flag}; "
              f"{args.n} calls each")
        for method, path in (("check", drive.CHECK), ("search", drive.SEARCH)):
            profile = measured(process.pid, address, path, bodies[method],
                               args.n, work_dir, method)
            callees, total = callgrind_per_call.read_profile(profile)
            print(f"{method}: {total / args.n:,.0f} Ir per call")
            events = callgrind_per_call.read_totals(profile)
            if len(events) > 1:
                print("  " + ", ".join(f"{name} {value / args.n:,.0f}"
                                       for name, value in events.items()))
            if method != "search":
                continue
            for pattern in args.fn or DEFAULT_FNS:
                calls, inclusive, _ = callgrind_per_call.matching(
                    callees, pattern)
                if calls:
                    print(f"  {pattern}: {calls:,} calls, "
                          f"{inclusive / calls:,.0f} Ir per call")
    finally:
        process.terminate()
        process.wait(timeout=300)
    if args.keep:
        print(f"profiles in {work_dir}")
    else:
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
