#!/usr/bin/env bash
# The performance report in one command: the planner against the oracle on
# every workload, and Search's rate against Check's under h2load.
#
#   bench/report.sh [BUILD_DIR] [--require-targets]
#
# Runs, one after the other on this machine:
#   1. bench/compare_oracle.py --bench BUILD_DIR/bin/chunkplan_bench
#      --estimate-above 1e9: the Python oracle against chunkplan_bench's
#      engines on every .json in bench/workloads/ (the ColossalAI GPT-2 test
#      and Mixtral with the experts at dp 2 included), answers checked; its
#      Markdown table;
#   2. bench/load.sh BUILD_DIR with the LLaMA-2 70B request
#      (bench/workloads/llama-2-70b.json), --rounds 3 --target-ratio 0.8;
#   3. bench/load.sh BUILD_DIR with the ColossalAI GPT-2 test
#      (bench/workloads/gpt2-colossalai-test.json), --rounds 3
#      --target-ratio 0.9;
# then a summary: per workload CPU_PLATEAU's speed-up over the oracle
# against its target (10,000x; 100,000x for the stress sweep), the two
# median Search/Check rates against theirs, the failed calls (grpc-status
# checked on every call) and each server's peak RSS (target < 100 MiB).
# BUILD_DIR defaults to build; it needs chunkplan_bench, chunkplan-server and
# chunkplan_python built.
#
# Exit status: 0 when every answer agreed with the oracle and no call
# failed; 1 when one did not (or, with --require-targets, when a target was
# missed); 2 on a setup error (a step that could not run).
#
# Environment, for shorter runs (appended to each step's arguments, so they
# override the defaults above; split on spaces):
#   ORACLE_ARGS  more compare_oracle.py arguments, e.g.
#                "--only gpt2-colossalai-test llama-2-70b --smoke"
#   LOAD_ARGS    more bench/load/drive.py arguments for both load runs,
#                e.g. "-n 3000"
#   REPORT_DIR   where the steps' JSON files go (default: a temporary
#                directory, removed at the end)
#
#   bench/report.sh build
#   LOAD_ARGS="-n 3000" ORACLE_ARGS="--only gpt2-colossalai-test --smoke" \
#       bench/report.sh build
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="build"
require_targets=0
for arg in "$@"; do
  case "$arg" in
    --require-targets) require_targets=1 ;;
    -h|--help) sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' |
               sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "report.sh: unknown option $arg" >&2; exit 2 ;;
    *) build="$arg" ;;
  esac
done
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac

read -r -a oracle_args <<< "${ORACLE_ARGS:-}"
read -r -a load_args <<< "${LOAD_ARGS:-}"
if [ -n "${REPORT_DIR:-}" ]; then
  out="$REPORT_DIR"
  mkdir -p "$out" || exit 2
else
  out="$(mktemp -d -t chunkplan_report.XXXXXX)" || exit 2
  trap 'rm -rf "$out"' EXIT
fi
rm -f "$out/oracle.json" "$out/load-llama-2-70b.json" \
      "$out/load-gpt2-colossalai-test.json"

echo "== 1/3 oracle against the engines (bench/compare_oracle.py)"
/usr/bin/python3 "$root/bench/compare_oracle.py" \
  --bench "$build/bin/chunkplan_bench" --estimate-above 1e9 \
  --json "$out/oracle.json" "${oracle_args[@]}"
oracle_rc=$?

echo
echo "== 2/3 load: LLaMA-2 70B (bench/load.sh)"
"$root/bench/load.sh" "$build" -- \
  --request "$root/bench/workloads/llama-2-70b.json" --rounds 3 \
  --target-ratio 0.8 --json "$out/load-llama-2-70b.json" "${load_args[@]}"
llama_rc=$?

echo
echo "== 3/3 load: ColossalAI GPT-2 test (bench/load.sh)"
"$root/bench/load.sh" "$build" -- \
  --request "$root/bench/workloads/gpt2-colossalai-test.json" --rounds 3 \
  --target-ratio 0.9 --json "$out/load-gpt2-colossalai-test.json" \
  "${load_args[@]}"
gpt2_rc=$?

echo
/usr/bin/python3 - "$out" "$require_targets" "$oracle_rc" "$llama_rc" \
  "$gpt2_rc" <<'EOF'
"""The summary of the three steps' JSON files; exits with the report's
status."""
import json
import os
import sys

out, require = sys.argv[1], sys.argv[2] == "1"
rcs = dict(zip(("oracle", "llama", "gpt2"), map(int, sys.argv[3:6])))
loads = (("llama", "llama-2-70b", "load-llama-2-70b.json"),
         ("gpt2", "gpt2-colossalai-test", "load-gpt2-colossalai-test.json"))


def read(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def verdict(met):
    return "met" if met else "MISSED"


setup_errors, failures, misses = [], [], []
failed_calls = disagreements = 0
print("== summary")
oracle = read("oracle.json")
if oracle is None:
    setup_errors.append(f"compare_oracle.py wrote no figures (exit "
                        f"{rcs['oracle']})")
else:
    note = " (--smoke: one oracle run, shortest benchmarks)" \
        if oracle["smoke"] else ""
    print(f"CPU_PLATEAU speed-up over the oracle{note}:")
    print(f"  {'workload':28} {'oracle/PLATEAU':>14} {'target':>9}  "
          f"{'':6}  answer".rstrip())
    for w in oracle["workloads"]:
        estimated = "~" if w["oracle_estimated"] else ""
        print(f"  {w['workload']:28} "
              f"{estimated + format(w['plateau_speedup'], ',.0f') + 'x':>14}"
              f" {format(w['plateau_target'], ',.0f') + 'x':>9}  "
              f"{verdict(w['plateau_met']):6}  {w['answer']}")
        if not w["plateau_met"]:
            misses.append(f"{w['workload']}: CPU_PLATEAU "
                          f"{w['plateau_speedup']:,.0f}x < "
                          f"{w['plateau_target']:,.0f}x")
    failures += [f"oracle: {line}" for line in oracle["failures"]]
    disagreements = len(oracle["failures"])
    if rcs["oracle"] not in (0, 1):
        setup_errors.append(f"compare_oracle.py exited {rcs['oracle']}")
print()
print("Search/Check under h2load (median over rounds; grpc-status checked "
      "on every call):")
print(f"  {'request':28} {'rounds':>16} {'median':>7} {'target':>7}  "
      f"{'':6} {'failed':>7} {'peak RSS':>10}  < 100 MiB")
for key, label, name in loads:
    load = read(name)
    if load is None:
        print(f"  {label:28} (no figures: load.sh exited {rcs[key]})")
        setup_errors.append(f"{label} load wrote no figures (exit "
                            f"{rcs[key]})")
        continue
    rounds = " ".join(f"{r['ratio']:.2f}" for r in load["rounds"])
    print(f"  {label:28} {rounds:>16} {load['median_ratio']:>7.2f} "
          f"{load['target_ratio']:>7}  {verdict(load['ratio_met']):6} "
          f"{load['failed']:>7} {load['peak_rss_mib']:>6.1f} MiB  "
          f"{verdict(load['rss_met'])}")
    failed_calls += load["failed"]
    if load["failed"]:
        failures.append(f"{label}: {load['failed']} failed call(s)")
    if load["server_exit_code"] != 0:
        failures.append(f"{label}: server exited {load['server_exit_code']}")
    if not load["ratio_met"]:
        misses.append(f"{label}: Search/Check {load['median_ratio']:.2f} < "
                      f"{load['target_ratio']}")
    if not load["rss_met"]:
        misses.append(f"{label}: peak RSS {load['peak_rss_mib']:.1f} MiB >= "
                      f"{load['target_rss_mib']} MiB")
    if rcs[key] not in (0, 1):
        setup_errors.append(f"{label} load exited {rcs[key]}")
print()
for line in failures:
    print(f"FAIL {line}")
for line in setup_errors:
    print(f"SETUP ERROR {line}")
for line in misses:
    print(f"target missed: {line}")
print(f"failed calls: {failed_calls}; answers not the oracle's (or failed "
      f"benchmarks): {disagreements}; targets missed: {len(misses)}"
      + ("" if require else " (reported; --require-targets to enforce)"))
if setup_errors:
    sys.exit(2)
sys.exit(1 if failures or (require and misses) else 0)
EOF
