#!/usr/bin/env bash
# Every test under AddressSanitizer and UndefinedBehaviorSanitizer, in the
# one sanitized tree (scripts/configure-sanitized.sh: clang-14, the fuzzers'
# coverage flags too, so that tests/fuzz/run-fuzz.sh reuses it): installs
# what is missing, configures, builds the tests and both fuzzers, runs
# ctest. Fails when a test fails or when any process wrote a sanitizer
# report; the reports are printed at the end.
#
#   scripts/sanitize.sh               # build dir: build-asan/
#   BUILD_DIR=out scripts/sanitize.sh
#   CTEST_ARGS="-R service" scripts/sanitize.sh
#   SANITIZE_ALL=1 scripts/sanitize.sh   # every test at full size
#   SANITIZE_BUILD_ONLY=1 scripts/sanitize.sh   # configure and build, no
#       test run (.ci/run builds the tree in the background beside the
#       Release suite, then runs this script again: its build is a no-op)
#
# LeakSanitizer reads tests/sanitizers/lsan.supp, which suppresses only leaks
# inside gRPC/protobuf/abseil themselves. UndefinedBehaviorSanitizer has no
# suppression here; tests/transport alone adds
# tests/sanitizers/out_of_descriptors.supp (see the files for which and why).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

scripts/install-deps.sh

build_dir="${BUILD_DIR:-build-asan}"
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
jobs="$(nproc)"

# Every report goes to a file under $reports (one per process): the Python
# tests start chunkplan-server and the CLI and do not always look at their
# exit status (a server stopped with SIGTERM, a CLI expected to fail), so a
# report from one of them would otherwise pass unseen. Any file there fails
# the script. Set before the build as well: gtest_discover_tests runs the
# test binaries at build time.
reports="$build_dir/sanitizer-reports"
rm -rf "$reports"
mkdir -p "$reports"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:strict_init_order=1:check_initialization_order=1:detect_stack_use_after_return=1:log_path=$reports/asan}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:log_path=$reports/ubsan}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0}"

# The default selection leaves the benchmarks' smoke runs out: their C++ is
# not built either (SANITIZE_ALL=1 builds and runs them).
build_bench=OFF
if [ "${SANITIZE_ALL:-0}" = 1 ]; then build_bench=ON; fi
scripts/configure-sanitized.sh "$build_dir" -DCHUNKPLAN_BUILD_BENCH="$build_bench"
cmake --build "$build_dir" -j "$jobs"
if [ "${SANITIZE_BUILD_ONLY:-0}" = 1 ]; then
  echo "sanitize: built $build_dir; tests not run (SANITIZE_BUILD_ONLY=1)"
  exit 0
fi
# Sanitized code runs a few times slower: a longer per-test timeout than
# scripts/test.sh's. What this pass adds over scripts/test.sh is the C++
# under the sanitizers, so by default it leaves out what spends its time
# elsewhere: the oracles' own tests (Python only; peak_trace_test too), the
# workload differential tests (fixed inputs that scripts/test.sh already
# runs; their time is the Python oracle's), the Python client's tests (the server and the command
# line they drive are the e2e and service tests' too), the benchmarks'
# smoke runs, the fuzz corpora's replays (label fuzz: tests/fuzz/run-
# fuzz.sh runs every committed input of both corpora first, on this tree's
# fuzzers), and the transport floods (labels flood and front_door: their
# work is in gRPC's HTTP/2 code and HAProxy, neither instrumented; the
# service code they reach is the e2e tests' too, and their figures, peak
# memory under a probe, are what the Release run asserts), the activation
# estimate's torch measurement (EagerEqualsWhatAutogradSaves: its time is
# torch's autograd and profiler on small models; the C++ estimate it checks
# runs here under RandomTraitsMatchTheOracle and the unit tests), and it runs
# the random differential tests on 300 fresh requests each instead of 2000
# (CHUNKPLAN_DIFF_REQUESTS). CTEST_ARGS
# replaces the selection; SANITIZE_ALL=1 runs everything at full size.
if [ "${SANITIZE_ALL:-0}" = 1 ]; then
  default_selection=""
else
  export CHUNKPLAN_DIFF_REQUESTS="${CHUNKPLAN_DIFF_REQUESTS:-300}"
  default_selection="-LE ^(python|bench|fuzz|flood|front_door)$ -E ^oracle_test$|_oracle_test$|^models_(order|random)_test$|WorkloadsMatchTheOracle|EagerEqualsWhatAutogradSaves$|^peak_trace_test$"
fi
status=0
# shellcheck disable=SC2086
ctest --test-dir "$build_dir" --no-tests=error --output-on-failure \
  --timeout 1800 -j "$jobs" \
  ${CTEST_ARGS:-$default_selection} || status=$?

if [ -n "$(ls -A "$reports")" ]; then
  for report in "$reports"/*; do
    echo "==== sanitizer report $report"
    cat "$report"
  done
  echo "sanitize: sanitizer reports above (files in $reports)" >&2
  exit 1
fi
exit "$status"
