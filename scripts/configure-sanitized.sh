#!/usr/bin/env bash
# Configures the one sanitized tree that scripts/sanitize.sh (the tests) and
# tests/fuzz/run-fuzz.sh (the libFuzzer targets) both build and run:
# clang-14, AddressSanitizer + UndefinedBehaviorSanitizer, every object also
# compiled with -fsanitize=fuzzer-no-link (libFuzzer's coverage feedback;
# the fuzzers alone link libFuzzer, tests/fuzz/CMakeLists.txt), tests and
# fuzzers on, benchmarks and CUDA off (nvcc and ASan do not mix). Through
# ccache where CCACHE_DIR is set.
#
#   scripts/configure-sanitized.sh [BUILD_DIR [CMAKE_ARGS...]]
#       # default build-asan/; CMAKE_ARGS are added last (they win)
#   SANITIZE_OPT=-O1 scripts/configure-sanitized.sh
#
# -O2 by default: clang-14 compiles this tree's sanitized objects no faster
# at -O1 (CPU seconds of four sample objects, -O1 / -O2: 4.4/4.4, 22.0/21.7,
# 7.6/7.5, 12.5/12.0), and -O1 code runs slower. clang-14 rather than g++:
# the same objects with g++ -O2 ASan+UBSan took 5.3, 34.4, 9.6 and 23.3 s.
# -g1: line tables, all a report needs (file and line of every frame), at a
# fraction of full debug information's compile and link time.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir="${1:-build-asan}"
shift || true
opt="${SANITIZE_OPT:--O2}"
cmake_args=(-S . -B "$build_dir" -G Ninja
  -DCMAKE_BUILD_TYPE=RelWithDebInfo
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$opt -g1 -DNDEBUG"
  -DCMAKE_CXX_COMPILER=clang++-14
  -DCHUNKPLAN_BUILD_TESTS=ON
  -DCHUNKPLAN_BUILD_FUZZERS=ON
  -DCHUNKPLAN_BUILD_BENCH=OFF
  -DCHUNKPLAN_WITH_CUDA=OFF)
if [ -n "${CCACHE_DIR:-}" ] && command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake "${cmake_args[@]}" "$@"
