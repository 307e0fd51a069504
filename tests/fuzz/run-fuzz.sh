#!/usr/bin/env bash
# Runs each fuzz target, bounded in runs and time, over a copy of its seed
# corpus:
#   search_request_fuzzer  a Search call's body      tests/fuzz/corpus/
#   config_fuzzer          a model's config.json     tests/fuzz/config_corpus/
#                          (dictionary tests/fuzz/config.dict)
# from the sanitized tree that scripts/sanitize.sh builds
# (scripts/configure-sanitized.sh: clang-14, libFuzzer, ASan, UBSan; build
# dir build-asan/): after scripts/sanitize.sh the build below has nothing
# left to do; alone, it builds the two fuzzers and what they need there.
# Exits non-zero on any finding: a crash, a sanitizer report, a leak, an
# input slower than FUZZ_TIMEOUT seconds, or memory beyond FUZZ_RSS_MB; the
# input that caused it is saved in <build dir>/fuzz-artifacts/.
#
#   tests/fuzz/run-fuzz.sh                      # the CI run
#   FUZZ_RUNS=2000000 FUZZ_SECONDS=3600 tests/fuzz/run-fuzz.sh
#   tests/fuzz/run-fuzz.sh path/to/crash-...    # replay inputs on the
#       search fuzzer, no fuzzing (FUZZ_TARGET=config_fuzzer: the other)
set -euo pipefail
cd "$(dirname "$0")/../.."

scripts/install-deps.sh

build_dir="${BUILD_DIR:-build-asan}"
runs="${FUZZ_RUNS:-200000}"
seconds="${FUZZ_SECONDS:-60}"  # each target
timeout="${FUZZ_TIMEOUT:-10}"
rss_mb="${FUZZ_RSS_MB:-2048}"

scripts/configure-sanitized.sh "$build_dir" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" \
  --target search_request_fuzzer config_fuzzer

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:check_initialization_order=1:strict_init_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

if [ $# -gt 0 ]; then
  exec "$build_dir/bin/${FUZZ_TARGET:-search_request_fuzzer}" \
    -timeout="$timeout" -rss_limit_mb="$rss_mb" "$@"
fi

# libFuzzer adds what it finds to its first corpus directory: a scratch copy
# keeps the committed seeds as they are.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$build_dir/fuzz-artifacts"

# fuzz TARGET SEEDS MAX_LEN [libFuzzer flags...]
fuzz() {
  local target="$1" seeds="$2" max_len="$3"
  shift 3
  mkdir -p "$work/$target"
  cp "$seeds"/* "$work/$target/"
  "$build_dir/bin/$target" \
    -runs="$runs" -max_total_time="$seconds" \
    -timeout="$timeout" -rss_limit_mb="$rss_mb" -max_len="$max_len" \
    -artifact_prefix="$build_dir/fuzz-artifacts/$target-" \
    -print_final_stats=1 "$@" "$work/$target" || return
  echo "run-fuzz: $target: no findings ($(find "$work/$target" -type f | wc -l) inputs in the corpus at the end)"
}

fuzz_search() {
  fuzz search_request_fuzzer tests/fuzz/corpus 16384 >"$work/search.log" 2>&1
}
fuzz_config() {
  fuzz config_fuzzer tests/fuzz/config_corpus 65536 \
    -dict=tests/fuzz/config.dict >"$work/config.log" 2>&1
}
# Both targets at once where there are two cores or more (each still gets
# a core and its FUZZ_SECONDS: the same fuzzing in half the time), one after
# the other otherwise; the output of each is printed once both are done.
status=0
if [ "$(nproc)" -ge 2 ]; then
  fuzz_search &
  search_pid=$!
  fuzz_config &
  config_pid=$!
  wait "$search_pid" || status=1
  wait "$config_pid" || status=1
else
  fuzz_search || status=1
  fuzz_config || status=1
fi
cat "$work/search.log" "$work/config.log"
exit "$status"
