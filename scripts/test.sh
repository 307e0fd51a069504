#!/usr/bin/env bash
# The README's test command: installs what is missing, configures, builds
# everything and runs every test under ctest.
#
#   scripts/test.sh              # build dir: build/
#   BUILD_DIR=out scripts/test.sh
#   CTEST_ARGS="-R planner" scripts/test.sh
#   BUILD_TARGETS="chunkplan-server chunkplan" scripts/test.sh  # only these
#       (and what they need); the tests run must need nothing else
#   CCACHE_DIR=... scripts/test.sh   # compiles through ccache (CI shares
#       its cache with the container image's build; CCACHE_BASEDIR makes
#       the paths in it relative)
#   SKIP_TESTS=1 scripts/test.sh     # build only (CI's image build: the
#       tests ran on the same objects before)
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

build_dir="${BUILD_DIR:-build}"
jobs="$(nproc)"
cmake_args=(-S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
            -DCHUNKPLAN_BUILD_TESTS=ON)
if [ -x /usr/local/cuda/bin/nvcc ]; then
  cmake_args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
if [ -n "${CCACHE_DIR:-}" ] && command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

cmake "${cmake_args[@]}"
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "$jobs" ${BUILD_TARGETS:+--target $BUILD_TARGETS}
if [ "${SKIP_TESTS:-0}" = 1 ]; then
  echo "test.sh: built; tests skipped (SKIP_TESTS=1)"
  exit 0
fi
# shellcheck disable=SC2086
ctest --test-dir "$build_dir" --no-tests=error --output-on-failure --timeout 900 \
  -j "$jobs" ${CTEST_ARGS:-}
