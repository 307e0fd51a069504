#!/usr/bin/env bash
# The HTTP/2 relay's cost (docs/deploy.md, "Limits"): bench/load.sh's
# h2load drive of Check and Search against chunkplan-server with
# --h2_preack_filter=true and =false, alternated PAIRS times (default 3;
# on-off, then off-on, ...) in the one invocation, so that both see the same
# machine. Prints, per pair and as the median over pairs, the relay-on /
# relay-off ratios of Search's and Check's calls per second, p50 latency and
# server CPU per call (the process's, the relay's thread included), the
# relay thread's share of that CPU where it runs, and the failed calls (grpc-status not 0, as bench/load.sh counts them);
# exits 1 if any call failed.
#
#   bench/relay_cost.sh [BUILD_DIR] [PAIRS] [-- DRIVER_ARGS...]
#   bench/relay_cost.sh build 3 -- -n 20000 --rounds 1
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-build}"
pairs="${2:-3}"
shift $(( $# > 2 ? 2 : $# ))
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for pair in $(seq 1 "$pairs"); do
  order="true false"
  if [ $((pair % 2)) -eq 0 ]; then order="false true"; fi
  for relay in $order; do
    "$root/bench/load.sh" "$build" -- --target-ratio 0 "$@" \
      --server_flag="--h2_preack_filter=$relay" \
      --json "$work/$pair.$relay.json" >/dev/null || true
  done
done

exec /usr/bin/python3 - "$work" "$pairs" <<'PY'
import json, statistics, sys
work, pairs = sys.argv[1], int(sys.argv[2])
def figures(pair, relay):
    with open(f"{work}/{pair}.{relay}.json") as f:
        report = json.load(f)
    rounds = report["rounds"]
    out = {}
    for method in ("search", "check"):
        out[method + " rate"] = statistics.median(
            r[method]["rate"] for r in rounds)
        out[method + " p50"] = statistics.median(
            r[method]["p50_ms"] for r in rounds)
        out[method + " cpu"] = statistics.median(
            r[method]["server_cpu_us"] for r in rounds)
        out[method + " relay share"] = statistics.median(
            r[method]["relay_cpu_us"] / r[method]["server_cpu_us"]
            for r in rounds)
        out[method + " failed"] = sum(r[method]["failed"] for r in rounds)
    return out
keys = ("search rate", "search p50", "search cpu", "check rate",
        "check p50", "check cpu")
ratios = {k: [] for k in keys}
failed = 0
print(f"{'pair':>4} " + " ".join(f"{k + ' on/off':>17}" for k in keys))
for pair in range(1, pairs + 1):
    on, off = figures(pair, "true"), figures(pair, "false")
    failed += sum(v for k, v in {**on, **off}.items() if k.endswith("failed"))
    row = []
    for k in keys:
        ratios[k].append(on[k] / off[k])
        row.append(f"{on[k]:>7.4g}/{off[k]:<7.4g}={on[k] / off[k]:.3f}")
    print(f"{pair:>4} " + " ".join(f"{c:>17}" for c in row))
print("median " + " ".join(f"{k}: {statistics.median(ratios[k]):.3f}"
                           for k in keys))
for method in ("search", "check"):
    shares = [figures(p, "true")[method + " relay share"]
              for p in range(1, pairs + 1)]
    print(f"{method}: the relay thread's share of the server's CPU per call "
          f"(relay on), median {statistics.median(shares):.3f}, "
          f"pairs {min(shares):.3f}-{max(shares):.3f}")
print(f"failed calls (grpc-status not 0): {failed}")
sys.exit(1 if failed else 0)
PY
