#!/usr/bin/env bash
# Load test of chunkplan-server with h2load (Debian: nghttp2-client).
#
#   bench/load.sh [BUILD_DIR] [-- DRIVER_ARGS...]
#
# Starts <BUILD_DIR>/bin/chunkplan-server (default BUILD_DIR: build) on a
# free loopback port and drives it with h2load, framed gRPC request bodies
# over HTTP/2: grpc.health.v1.Health/Check (the floor of the RPC stack) and
# chunkplan.v1.ChunkSearch/Search with the LLaMA-2 70B request
# (bench/workloads/llama-2-70b.json; --request another), the same
# connections, streams and call count for both, alternated --rounds times
# (default 3) within the one server run. Prints, per round, each method's
# calls per second, p50 and p99 latency and failed calls (grpc-status not 0,
# counted from the server's metrics and answers on every call: h2load alone
# sees only HTTP 200) and the Search/Check rate; then the median rate over
# the rounds and the server's peak RSS. Targets, reported but not enforced:
# the median Search/Check rate at least --target-ratio (0.8), RSS under
# 100 MiB. Exits 1 if any call failed, 2 on a setup error.
#
# DRIVER_ARGS (bench/load/drive.py --help): -n CALLS (50000) -c CONNECTIONS
# (4) -m STREAMS (8) -t H2LOAD_THREADS (1) --rounds N (3) --target-ratio X
# (0.8) --request JSON --json FILE --server_flag=--threads=2 (repeatable).
#
#   cmake --build build --target chunkplan-server chunkplan_python
#   bench/load.sh build
#   bench/load.sh build -- --target-ratio 0.9 \
#       --request bench/workloads/gpt2-colossalai-test.json
#   bench/load.sh build -- -n 3000 --rounds 3     # a quick check
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="build"
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build="$1"; shift; fi
if [ $# -gt 0 ] && [ "$1" = "--" ]; then shift; fi
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac

for tool in h2load nghttp; do
  if ! command -v "$tool" >/dev/null; then
    echo "load.sh: $tool not found; install Debian's nghttp2-client" \
         "(scripts/install-deps.sh)" >&2
    exit 2
  fi
done
if [ ! -x "$build/bin/chunkplan-server" ] ||
   [ ! -d "$build/python/chunkplan/v1" ]; then
  echo "load.sh: build chunkplan-server and chunkplan_python in $build" \
       "first:" \
       "cmake --build $build --target chunkplan-server chunkplan_python" >&2
  exit 2
fi

exec /usr/bin/python3 "$root/bench/load/drive.py" \
  --server "$build/bin/chunkplan-server" --python_dir "$build/python" "$@"
