#!/usr/bin/env bash
# The GPU check, in one script: configures and builds the planner with the
# CUDA engine and bench/gpu_check.cc (no gRPC, no GoogleTest needed), runs it
# and prints its table. It compares ENGINE_CUDA with CPU_PLATEAU on fresh
# random problems, on tie-heavy, 1.2M-candidate and beyond-2**31 grids, the
# layout objectives' frontiers (CUDA against CPU_SWEEP, random requests and a
# LLaMA-2 70B shape, in two slicings), then
# times CUDA, CPU_SWEEP (all cores) and CPU_PLATEAU on a LLaMA-2-70B-like
# sweep (8.4M candidates x 723 sizes) against the GPU's integer ceiling, and
# prints the cost model's estimates next to measured times. Exit status: 0
# when everything agreed (GPU absent counts as agreed, and says so), 1 on a
# disagreement, 2 on a build problem, 3 when a GPU is visible (nvidia-smi)
# but the engine cannot use it, 124 past the time limit.
#
#   bench/gpu_check.sh                # build in build-gpu-check/, run
#   bench/gpu_check.sh --stage-absl   # (here) copy this machine's abseil to
#                                     # build-absl-carry/ for a machine without
#
# abseil: the planner needs absl::status, statusor, strings and
# flat_hash_map. Where CMake finds no abseil (the GPU machine has CUDA, CMake
# and ninja, nothing else of ours), stage Debian's copy here with
# --stage-absl (headers, shared libraries and CMake config, about 8 MB, under
# an ignored build* folder) and carry build-absl-carry to the GPU machine;
# this script uses it whenever it exists.
#
# Environment: BUILD_DIR (default build-gpu-check), NVCC (default nvcc on
# PATH, else /usr/local/cuda/bin/nvcc), GPU_CHECK_TIMEOUT (seconds for the
# check program, default 420; the build takes about a minute on 16 cores).
set -euo pipefail
cd "$(dirname "$0")/.."

stage_dir=build-absl-carry

if [ "${1:-}" = --stage-absl ]; then
  config=$(dirname "$(find /usr/lib /usr/local/lib /usr/lib64 -name abslConfig.cmake \
                         -path '*cmake/absl/*' 2>/dev/null | head -n 1)")
  if [ "$config" = . ]; then
    echo "gpu_check: no abseil CMake config found on this machine" >&2
    exit 2
  fi
  # <prefix>/lib/<arch>/cmake/absl -> <prefix>, as the config computes it.
  libdir=$(cd "$config/../.." && pwd)
  prefix=$(cd "$libdir/.." && pwd)
  [ -d "$prefix/include/absl" ] || prefix=$(cd "$prefix/.." && pwd)
  rel=${libdir#"$prefix"/}
  rm -rf "$stage_dir"
  mkdir -p "$stage_dir/include" "$stage_dir/$rel/cmake"
  cp -r "$prefix/include/absl" "$stage_dir/include/"
  cp -r "$config" "$stage_dir/$rel/cmake/"
  # Real files under every name (links travel as links): the config names
  # the full version, the loader the soname.
  for f in "$libdir"/libabsl_*.so*; do cp -L "$f" "$stage_dir/$rel/"; done
  echo "gpu_check: staged abseil from $prefix in $stage_dir ($(du -sh "$stage_dir" | cut -f1));"
  echo "  carry [\"$stage_dir\"] to the GPU machine and run bench/gpu_check.sh there"
  exit 0
fi

build_dir=${BUILD_DIR:-build-gpu-check}
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
gpu_visible=no
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  gpu_visible=yes
  nvidia-smi -L
fi

cmake_args=(-S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
            -DCHUNKPLAN_BUILD_TESTS=OFF)
if [ -x "$nvcc" ]; then
  "$nvcc" --version | tail -n 2 | head -n 1
  cmake_args+=(-DCHUNKPLAN_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$nvcc")
else
  echo "gpu_check: no nvcc ($nvcc): building the CPU engines only"
  cmake_args+=(-DCHUNKPLAN_WITH_CUDA=OFF)
fi
if [ -d "$stage_dir" ]; then
  echo "gpu_check: using the staged abseil in $stage_dir"
  cmake_args+=(-DCMAKE_PREFIX_PATH="$PWD/$stage_dir")
  # abseil 20220623's headers lean on <cstdint> arriving indirectly, which
  # GCC 13 and later no longer do.
  cmake_args+=("-DCMAKE_CXX_FLAGS=-include cstdint" "-DCMAKE_CUDA_FLAGS=-include cstdint")
  export LD_LIBRARY_PATH="$PWD/$(dirname "$(find "$stage_dir" -name 'libabsl_status.so*' | head -n 1)"):${LD_LIBRARY_PATH:-}"
fi

start=$SECONDS
mkdir -p "$build_dir"
if ! cmake "${cmake_args[@]}" >"$build_dir/configure.log" 2>&1; then
  tail -n 30 "$build_dir/configure.log"
  if grep -q 'absl' "$build_dir/configure.log"; then
    echo "gpu_check: CMake found no abseil. On a machine that has it, run"
    echo "  bench/gpu_check.sh --stage-absl   and carry build-absl-carry here."
  fi
  exit 2
fi
grep -E '^-- chunkplan:' "$build_dir/configure.log" || true
grep -E '^absl_DIR' "$build_dir/CMakeCache.txt" || true
if ! cmake --build "$build_dir" -j "$(nproc)" --target gpu_check >"$build_dir/build.log" 2>&1; then
  tail -n 40 "$build_dir/build.log"
  exit 2
fi
echo "gpu_check: configured and built in $((SECONDS - start)) s"

args=()
[ "$gpu_visible" = yes ] && args+=(--require-gpu)
set +e
timeout "${GPU_CHECK_TIMEOUT:-420}" "$build_dir/bin/gpu_check" "${args[@]}"
status=$?
set -e
echo "gpu_check: exit $status after $((SECONDS - start)) s in all"
exit "$status"
