#!/usr/bin/python3
"""Times the Python oracle and chunkplan_bench on the same workloads, in one
run, checks that every engine's answer equals the oracle's, and prints one
table (Markdown).

The workloads are every .json file in --workloads (default bench/workloads/,
which chunkplan_bench also reads whole), in name order, or those --only
names.

The oracle is tests/oracle/chunk_search_oracle.py's search(): ColossalAI's
search_chunk_configuration on plain data, the seed's loops kept literally --
what a trainer runs today. It is timed on the request dict (no torch model to
walk), best of --repeats runs; workloads above --single-run-steps
candidates x swept params run once. chunkplan_bench times Planner::Search
(request to answer) per engine, in wall-clock time, best of --repeats
repetitions (each a mean over many calls), so that both sides are a best
of the same number of runs.

  /usr/bin/python3 bench/compare_oracle.py --build build
  /usr/bin/python3 bench/compare_oracle.py --build build --estimate-above 1e9
  /usr/bin/python3 bench/compare_oracle.py --bench build/bin/chunkplan_bench \\
      --only gpt2-xl --smoke
  /usr/bin/python3 bench/compare_oracle.py --build build --json out.json

--estimate-above STEPS: a workload of more candidates x swept params is not
run through the oracle in full (the stress sweep takes minutes in Python);
the oracle is timed on the same request with search_range_m divided by 16
and by 64 -- prefixes of the same grid -- and the full time extrapolated
linearly from the per-candidate cost between the two. Such times are marked
"~" and such workloads are checked engine against engine (CPU_SWEEP against
CPU_PLATEAU), not against the oracle; the table says so. Default: every
workload runs the oracle in full.

--smoke: one oracle run and the shortest benchmark runs, answers checked,
no targets: a correctness check that takes seconds (ctest bench.oracle_smoke).

--json FILE: also write the figures, per workload and in seconds, with the
verdicts, the disagreements and the exit status, as one JSON object
(bench/report.sh reads it).

Targets (reported, not enforced unless --require-targets): CPU_PLATEAU at
least 10,000x faster than the oracle on every model workload (every
workload not named stress-*: the ColossalAI GPT-2 test and Mixtral with the
experts at dp 2 included) and 100,000x on the stress sweep (workloads named
stress-*); CPU_SWEEP at least 10**9 candidate x swept-param steps per second
on one core (its workers:1 run).

Exit status: 0 when every answer agreed, 1 on a disagreement or a failed
benchmark (or a missed target with --require-targets), 2 on a usage or
setup error.
"""

import argparse
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile
import time

import numpy

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
sys.path.insert(0, os.path.join(_ROOT, "tests", "oracle"))
import chunk_search_oracle  # noqa: E402  (path set just above)

PLATEAU_TARGET_MODEL = 1e4
PLATEAU_TARGET_STRESS = 1e5
SWEEP_TARGET_PER_CORE = 1e9

# chunkplan_bench's names, and what Google Benchmark appends to them.
_NAME = re.compile(r"^(CPU_PLATEAU|CPU_SWEEP|CUDA)/([^/]+)(?:/workers:(\d+))?"
                   r"(?:/iterations:\d+)?(?:/real_time)?$")


class SetupError(Exception):
    """Something outside the comparison failed: exit status 2."""


# ---------------------------------------------------------------------------
# The oracle.


def answer_label(answer):
    """The oracle's answer in chunkplan_bench's label form: "DEGREE:CHUNK
    [:gathered] ... waste=W total=T"."""
    if "error" in answer:
        return "error: " + answer["error"]
    parts = [f"{c['dp_degree']}:{c['chunk_size']}" +
             (":gathered" if c["keep_gathered"] else "")
             for c in answer["configs"]]
    parts.append(f"waste={answer['min_chunk_waste']}")
    parts.append(f"total={answer['total_param_size']}")
    return " ".join(parts)


def grid_count(request, range_m):
    """Candidates in the seed's range() for `request` at `range_m`:
    round(range_m * 2**20) // interval + 1."""
    return round(range_m * 1024**2) // int(request["search_interval"]) + 1


def time_oracle(request, repeats):
    """(best seconds of `repeats` runs, the answer)."""
    best = math.inf
    answer = None
    for _ in range(repeats):
        start = time.perf_counter()
        answer = chunk_search_oracle.search(request)
        best = min(best, time.perf_counter() - start)
    return best, answer


def extrapolate_oracle(request):
    """(the oracle's time on `request` estimated from two prefixes of its
    grid, the candidates of the longer prefix). The prefixes are the request
    with search_range_m / 64 and / 16; the estimate is the longer one's time
    plus the remaining candidates at the per-candidate cost between the
    two."""
    range_m = float(request["search_range_m"])
    times = []
    counts = []
    for divisor in (64, 16):
        prefix = dict(request, search_range_m=range_m / divisor)
        times.append(time_oracle(prefix, 1)[0])
        counts.append(grid_count(request, range_m / divisor))
    n_full = grid_count(request, range_m)
    per_candidate = (times[1] - times[0]) / (counts[1] - counts[0])
    return times[1] + (n_full - counts[1]) * per_candidate, counts[1]


# ---------------------------------------------------------------------------
# The benchmark.


def _regex_literal(name):
    """A workload name as a POSIX extended regular expression matching it
    literally (Google Benchmark's --benchmark_filter). Raises SetupError for
    a name of other characters than letters, digits, ".", "_" and "-"."""
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        raise SetupError(f"workload name {name!r}: use letters, digits, "
                         "'.', '_' and '-' only")
    return name.replace(".", "[.]")


def run_bench(bench, workloads_dir, names, smoke, repeats):
    """chunkplan_bench's runs for the workloads `names`, as
    {(engine, workload, workers): benchmark dict} plus its JSON context:
    each benchmark run `repeats` times (--benchmark_repetitions), the
    fastest repetition kept -- best of `repeats`, as the oracle is timed --
    or one that failed. The console output goes to stderr as it runs."""
    # The search engines only: LAYOUT/<workload> is no search to compare.
    pattern = ("^(CPU_PLATEAU|CPU_SWEEP|CUDA)/(" +
               "|".join(_regex_literal(n) for n in names) + ")(/|$)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        command = [bench, f"--workloads={workloads_dir}",
                   f"--benchmark_filter={pattern}",
                   f"--benchmark_out={out}", "--benchmark_out_format=json"]
        if smoke:
            command.append("--benchmark_min_time=0.01")
        elif repeats > 1:
            command.append(f"--benchmark_repetitions={repeats}")
        print("$ " + " ".join(command), file=sys.stderr, flush=True)
        result = subprocess.run(command, stdout=sys.stderr, check=False)
        if result.returncode != 0:
            raise SetupError(f"chunkplan_bench exited {result.returncode}")
        try:
            with open(out, encoding="utf-8") as f:
                report = json.load(f)
        except (OSError, ValueError) as error:
            raise SetupError(f"chunkplan_bench wrote no report: {error}")
    runs = {}
    for b in report["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue  # the repetitions' mean, median, ...: not a run
        match = _NAME.match(b.get("run_name", b["name"]))
        if not match:
            raise SetupError(f"unexpected benchmark name {b['name']!r}")
        engine, workload, workers = match.groups()
        key = (engine, workload, int(workers or 1))
        kept = runs.get(key)
        if kept is None or (not kept.get("error_occurred") and (
                b.get("error_occurred") or seconds(b) < seconds(kept))):
            runs[key] = b
    return runs, report.get("context", {})


def seconds(run):
    """A benchmark's wall time per iteration, in seconds."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[run["time_unit"]]
    return run["real_time"] * scale


# ---------------------------------------------------------------------------
# The table.


def fmt_seconds(value, estimated=False):
    mark = "~" if estimated else ""
    if value >= 1:
        return f"{mark}{value:.3g} s"
    if value >= 1e-3:
        return f"{mark}{value * 1e3:.3g} ms"
    return f"{mark}{value * 1e6:.3g} µs"


def fmt_ratio(value):
    if value >= 1e3:
        return f"{value:,.0f}×"
    return f"{value:.3g}×"


def fmt_rate(value):
    return f"{value / 1e9:.2f} G"


def load_requests(directory, only):
    """{workload name: request dict} for the .json files in `directory`, in
    name order; only those named in `only` when it is given. Raises
    SetupError for a name in `only` that is not there."""
    names = sorted(f[:-5] for f in os.listdir(directory)
                   if f.endswith(".json"))
    if only:
        missing = sorted(set(only) - set(names))
        if missing:
            raise SetupError(f"no workload named {', '.join(missing)} in "
                             f"{directory}")
        names = [n for n in names if n in only]
    requests = {}
    for name in names:
        with open(os.path.join(directory, name + ".json"),
                  encoding="utf-8") as f:
            requests[name] = json.load(f)
    return requests


def oracle_reference(request, plateau, args):
    """(oracle seconds, whether estimated, the reference answer label, the
    "answer" column's text) for one workload."""
    steps = plateau["candidates"] * plateau["swept_params"]
    if args.estimate_above is not None and steps > args.estimate_above:
        oracle_s, sampled = extrapolate_oracle(request)
        return (oracle_s, True, plateau.get("label"),
                f"engines agree (oracle timed on {sampled:,} of "
                f"{plateau['candidates']:,.0f} candidates)")
    repeats = 1 if args.smoke or steps > args.single_run_steps \
        else args.repeats
    oracle_s, answer = time_oracle(request, repeats)
    return oracle_s, False, answer_label(answer), "= oracle"


def plateau_target(name):
    """The CPU_PLATEAU speed-up over the oracle the workload `name` is to
    reach."""
    return PLATEAU_TARGET_STRESS if name.startswith("stress-") \
        else PLATEAU_TARGET_MODEL


def target_verdicts(name, oracle_s, plateau_s, per_core):
    """(the "targets" column's text, the misses as lines)."""
    target = plateau_target(name)
    ratio = oracle_s / plateau_s
    misses = []
    if ratio < target:
        misses.append(f"{name}: CPU_PLATEAU {ratio:,.0f}x < {target:,.0f}x")
    if per_core < SWEEP_TARGET_PER_CORE:
        misses.append(f"{name}: CPU_SWEEP {per_core:.3g} steps/s per core "
                      "< 1e9")
    text = (f"PLATEAU ≥ {fmt_ratio(target)}: "
            f"{'MISSED' if ratio < target else 'met'}; SWEEP ≥ 1 G/s/core: "
            f"{'MISSED' if per_core < SWEEP_TARGET_PER_CORE else 'met'}")
    return text, misses


def workload_row(name, request, runs, has_cuda, args):
    """(the table row, failures, target misses, the figures for --json) of
    one workload."""
    mine = {(e, n): r for (e, w, n), r in runs.items() if w == name}
    plateau = mine.get(("CPU_PLATEAU", 1))
    sweep1 = mine.get(("CPU_SWEEP", 1))
    if plateau is None or sweep1 is None:
        raise SetupError(f"{name}: chunkplan_bench ran no CPU_PLATEAU or no "
                         "CPU_SWEEP/workers:1 benchmark")
    sweep_n = mine[("CPU_SWEEP", max(n for e, n in mine if e == "CPU_SWEEP"))]
    cuda = mine.get(("CUDA", 1))

    print(f"oracle: {name} ...", file=sys.stderr, flush=True)
    oracle_s, estimated, reference, checked = oracle_reference(
        request, plateau, args)
    failures = [f"{r['name']}: {r.get('error_message')}"
                if r.get("error_occurred") else
                f"{r['name']}: answered {r.get('label')!r}, expected "
                f"{reference!r}"
                for _, r in sorted(mine.items())
                if r.get("error_occurred") or r.get("label") != reference]
    if failures:
        checked = "MISMATCH"

    per_core = sweep1["candidates"] * sweep1["swept_params"] / seconds(sweep1)
    targets, misses = ("—", []) if args.smoke else target_verdicts(
        name, oracle_s, seconds(plateau), per_core)
    cuda_cells = ([fmt_seconds(seconds(cuda)) if cuda else "—"]
                  if has_cuda else [])
    cuda_ratio = ([fmt_ratio(oracle_s / seconds(cuda)) if cuda else "—"]
                  if has_cuda else [])
    row = ([name, f"{plateau['params']:,.0f}",
            f"{plateau['swept_params']:,.0f}",
            f"{plateau['candidates']:,.0f}",
            fmt_seconds(oracle_s, estimated), fmt_seconds(seconds(plateau)),
            fmt_seconds(seconds(sweep1)), fmt_seconds(seconds(sweep_n))] +
           cuda_cells +
           [fmt_ratio(oracle_s / seconds(plateau)),
            fmt_ratio(oracle_s / seconds(sweep_n))] + cuda_ratio +
           [fmt_rate(per_core), checked, targets])
    ratio = oracle_s / seconds(plateau)
    figures = {
        "workload": name,
        "params": int(plateau["params"]),
        "swept_params": int(plateau["swept_params"]),
        "candidates": int(plateau["candidates"]),
        "oracle_s": oracle_s,
        "oracle_estimated": estimated,
        "plateau_s": seconds(plateau),
        "sweep_1_thread_s": seconds(sweep1),
        "sweep_steps_per_s_per_core": per_core,
        "plateau_speedup": ratio,
        "plateau_target": plateau_target(name),
        "plateau_met": ratio >= plateau_target(name),
        "sweep_met": per_core >= SWEEP_TARGET_PER_CORE,
        "answer": checked,
        "agreed": not failures,
    }
    return row, failures, misses, figures


def print_table(rows, workers, has_cuda, context, loads, args):
    header = (["workload", "params", "swept", "candidates", "oracle",
               "CPU_PLATEAU", "CPU_SWEEP 1 thread",
               f"CPU_SWEEP {workers} threads"] +
              (["CUDA"] if has_cuda else []) +
              ["oracle / PLATEAU", f"oracle / SWEEP×{workers}"] +
              (["oracle / CUDA"] if has_cuda else []) +
              ["SWEEP steps/s/core", "answer", "targets"])
    print(f"machine: {platform.node() or '?'}; "
          f"{context.get('num_cpus') or os.cpu_count()} CPUs "
          f"({context.get('mhz_per_cpu', '?')} MHz); load average "
          f"{loads[0]:.2f} before, {loads[1]:.2f} after; "
          f"Python {platform.python_version()}, numpy {numpy.__version__}; "
          f"Google Benchmark library build: "
          f"{context.get('library_build_type', '?')}")
    print()
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    print()
    print("oracle: tests/oracle/chunk_search_oracle.py search(), best of "
          f"{1 if args.smoke else args.repeats} (one run above "
          f"{args.single_run_steps:.0e} steps); engines: chunkplan_bench, "
          "Planner::Search wall time per call, best of "
          f"{1 if args.smoke else args.repeats} repetitions; steps = "
          "candidates × swept params; SWEEP steps/s/core from the 1-thread "
          "run."
          + (" ~: extrapolated from two prefixes of the grid "
             f"(--estimate-above {args.estimate_above:.0e})."
             if args.estimate_above is not None else ""))


def compare(args):
    """The whole comparison; returns the exit status."""
    workloads_dir = os.path.abspath(args.workloads)
    requests = load_requests(workloads_dir, args.only)
    load_before = os.getloadavg()[0]
    runs, context = run_bench(args.bench, workloads_dir, list(requests),
                              args.smoke, args.repeats)
    has_cuda = any(engine == "CUDA" for engine, _, _ in runs)
    rows, failures, misses, figures = [], [], [], []
    for name, request in requests.items():
        row, wrong, missed, mine = workload_row(name, request, runs,
                                                has_cuda, args)
        rows.append(row)
        failures += wrong
        misses += missed
        figures.append(mine)
    workers = max(n for engine, _, n in runs if engine == "CPU_SWEEP")
    print_table(rows, workers, has_cuda, context,
                (load_before, os.getloadavg()[0]), args)
    for line in failures:
        print(f"FAIL {line}")
    for line in misses:
        print(f"target missed: {line}")
    status = 1 if failures or (misses and args.require_targets) else 0
    if args.json:
        write_json(args.json, {
            "smoke": args.smoke,
            "targets_judged": not args.smoke,
            "plateau_target_model": PLATEAU_TARGET_MODEL,
            "plateau_target_stress": PLATEAU_TARGET_STRESS,
            "sweep_target_per_core": SWEEP_TARGET_PER_CORE,
            "cpus": context.get("num_cpus") or os.cpu_count(),
            "workloads": figures,
            "failures": failures,
            "target_misses": misses,
            "exit_status": status,
        })
    return status


def write_json(path, value):
    """`value` as JSON in the file `path`. Raises SetupError where it cannot
    be written."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=2)
            f.write("\n")
    except OSError as error:
        raise SetupError(f"cannot write {path}: {error}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--build", help="a build directory: its "
                       "bin/chunkplan_bench")
    where.add_argument("--bench", help="the chunkplan_bench binary")
    parser.add_argument("--workloads", default=os.path.join(_HERE,
                                                            "workloads"),
                        help="the workload directory (default: "
                        "bench/workloads)")
    parser.add_argument("--only", nargs="+", metavar="NAME",
                        help="these workloads only (file names without "
                        ".json)")
    parser.add_argument("--repeats", type=int, default=3,
                        help="oracle runs and benchmark repetitions per "
                        "workload, the best kept (default 3)")
    parser.add_argument("--single-run-steps", type=float, default=1e8,
                        help="workloads above this many steps run the "
                        "oracle once (default 1e8)")
    parser.add_argument("--estimate-above", type=float, default=None,
                        metavar="STEPS",
                        help="time the oracle on prefixes of the grid and "
                        "extrapolate for workloads of more steps than this")
    parser.add_argument("--smoke", action="store_true",
                        help="shortest runs, answers only, no targets")
    parser.add_argument("--require-targets", action="store_true",
                        help="exit 1 when a target is missed")
    parser.add_argument("--json", metavar="FILE",
                        help="also write the figures and verdicts to FILE "
                        "as JSON")
    args = parser.parse_args(argv)
    if args.build:
        args.bench = os.path.join(args.build, "bin", "chunkplan_bench")
    if not os.access(args.bench, os.X_OK):
        print(f"compare_oracle: {args.bench} is not an executable (build "
              "the chunkplan_bench target; it needs libbenchmark-dev)",
              file=sys.stderr)
        return 2
    try:
        return compare(args)
    except SetupError as error:
        print(f"compare_oracle: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
