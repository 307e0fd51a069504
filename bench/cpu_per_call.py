#!/usr/bin/python3
"""Server CPU and context switches per Search call, variants alternated.

    cpu_per_call.py --build BUILD [--request FILE] [-n N] [--rounds R]
        [--variant NAME=FLAGS[@HEX][%BUILD]] ...

Each round starts chunkplan-server once per variant (FLAGS: its flags,
comma-separated; @HEX: bytes appended to the serialized request), sends
2,000 warm-up calls, then N Search calls at each of two loads: one call at a
time (h2load -c 1 -m 1: a scheduler calling an idle server) and the load of
bench/load.sh (-c 4 -m 8). It prints, per call, the server's CPU time
(user + system, /proc/PID/stat), its threads' voluntary and involuntary
context switches (/proc/PID/task/*/status), h2load's rate and median
latency; then each variant's median over the rounds. Variants run in turn
within each round, in the opposite order every other round, so a change in
the machine's load reaches them alike.
%BUILD runs that variant's server from another build folder (a temporary
build of a variant of the code; its BUILD/bin/chunkplan-server).

    bench/cpu_per_call.py --build build --rounds 3 \\
        --variant inline= --variant pool=--max_inline_work=0
    # this build against another (a build of an older commit)
    bench/cpu_per_call.py --build build --rounds 7 \\
        --variant before=%../base/build --variant after=
"""

import argparse
import glob
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "load"))
import drive  # noqa: E402  (bench/load/drive.py: the server, h2load)

LOADS = ((1, 1), (4, 8))  # (connections, streams each)


class Settings:
    def __init__(self, requests, clients, streams):
        self.requests, self.clients = requests, clients
        self.streams, self.threads = streams, 1


def switches(pid):
    """(voluntary, involuntary) context switches over the threads of pid."""
    voluntary = involuntary = 0
    for path in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        voluntary += int(line.split()[1])
                    elif line.startswith("nonvoluntary_ctxt_switches"):
                        involuntary += int(line.split()[1])
        except OSError:
            pass  # a thread that ended
    return voluntary, involuntary


def parse_variant(text, default_build):
    """(name, flags, bytes to append, build folder) of NAME=FLAGS[@HEX][%BUILD]."""
    name, _, spec = text.partition("=")
    spec, _, build = spec.partition("%")
    flags, _, append = spec.partition("@")
    return (name, [f for f in flags.split(",") if f], bytes.fromhex(append),
            build or default_build)


def one_run(args, build, flags, body_path, work_dir):
    """{(c, m): figures per call} for one server run."""
    server = drive.Server(os.path.join(build, "bin", "chunkplan-server"),
                          flags, os.path.join(work_dir, "server.log"))
    figures = {}
    try:
        drive.h2load(server.address, drive.SEARCH, body_path,
                     Settings(2000, 1, 1), work_dir, "warm")
        for clients, streams in LOADS:
            cpu, (vol, invol) = server.cpu_seconds(), switches(
                server.process.pid)
            result = drive.h2load(server.address, drive.SEARCH, body_path,
                                  Settings(args.n, clients, streams),
                                  work_dir, "run")
            cpu2, (vol2, invol2) = server.cpu_seconds(), switches(
                server.process.pid)
            figures[(clients, streams)] = {
                "cpu_us": 1e6 * (cpu2 - cpu) / args.n,
                "voluntary": (vol2 - vol) / args.n,
                "involuntary": (invol2 - invol) / args.n,
                "rate": result["rate"],
                "p50_us": 1e3 * result["p50_ms"],
            }
    finally:
        server.stop()
    return figures


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--build", required=True)
    parser.add_argument("--request", help="protobuf JSON of the Search")
    parser.add_argument("-n", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", action="append", required=True,
                        help="NAME=FLAGS[@HEX]")
    args = parser.parse_args()
    search_bytes, source = drive.search_request(
        os.path.join(args.build, "python"), args.request)
    work_dir = tempfile.mkdtemp(prefix="chunkplan_cpu_")
    variants = [parse_variant(v, args.build) for v in args.variant]
    bodies = {}
    for name, _, append, _ in variants:
        bodies[name] = os.path.join(work_dir, f"{name}.body")
        with open(bodies[name], "wb") as f:
            f.write(drive.framed(search_bytes + append))
    print(f"request {source}; {args.n} calls per load and round")
    runs = {name: [] for name, _, _, _ in variants}
    for round_index in range(args.rounds):
        # The order alternates from round to round: the first server of a
        # round ran a few µs per call cheaper here, whatever it was.
        order = variants if round_index % 2 == 0 else variants[::-1]
        for name, flags, _, build in order:
            figures = one_run(args, build, flags, bodies[name], work_dir)
            runs[name].append(figures)
            for (c, m), f in figures.items():
                print(f"round {round_index + 1} {name:>10} -c {c} -m {m}: "
                      f"CPU {f['cpu_us']:6.1f} us, switches "
                      f"{f['voluntary']:.2f} voluntary "
                      f"{f['involuntary']:.2f} involuntary, "
                      f"{f['rate']:7.0f}/s, p50 {f['p50_us']:.0f} us",
                      flush=True)
    for name, _, _, _ in variants:
        for load in LOADS:
            cpu = statistics.median(r[load]["cpu_us"] for r in runs[name])
            print(f"median {name:>10} -c {load[0]} -m {load[1]}: "
                  f"CPU {cpu:.1f} us per call")
    return 0


if __name__ == "__main__":
    sys.exit(main())
