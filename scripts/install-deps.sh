#!/usr/bin/env bash
# Installs, with apt-get, every Debian 12 package chunkplan's build, tests and
# run script need. Idempotent: installs only what is missing, and does
# nothing (not even `apt-get update`) when everything is there.
#
#   scripts/install-deps.sh                        # everything
#   CHUNKPLAN_DEPS=server scripts/install-deps.sh  # the server's build only
set -euo pipefail

# CHUNKPLAN_DEPS=server installs only these: building the server, the CLI
# and the Python client, and the server's end-to-end tests (ctest -L
# server). The container image's build stage uses it.
packages=(
  # toolchain
  cmake ninja-build g++ pkg-config
  ccache  # used where CCACHE_DIR is set (scripts/test.sh)
  # libraries
  libabsl-dev libgrpc++-dev libprotobuf-dev protobuf-compiler
  protobuf-compiler-grpc grpc-proto libspdlog-dev libfmt-dev
  nlohmann-json3-dev  # server/models: config.json, a DOM with exact uint64
  # configuring with tests; openssl makes the TLS tests' certificates
  googletest libgtest-dev libgmock-dev libbenchmark-dev openssl
  # the oracle and the Python client: Debian's interpreter and modules
  python3 python3-numpy python3-grpcio python3-protobuf
)
# The default (CHUNKPLAN_DEPS=all) adds everything else the tests, the
# benchmarks, the fuzzer and CI use.
more_packages=(
  yamllint
  nghttp2-client  # h2load and nghttp, for bench/load.sh and the gzip bomb of tests/e2e/front_door_test.py
  # the front door: tests/e2e/front_door_test.py runs the deployed
  # deploy/haproxy/haproxy.cfg in front of the server, and
  # deploy/check-manifests.sh checks it with `haproxy -c` (Debian's 2.6,
  # the version deploy/haproxy/Dockerfile installs)
  haproxy
  python3-pytest python3-torch python3-matplotlib  # the Python tests: torch modules, the plot
  # fuzzing (tests/fuzz/run-fuzz.sh): clang with libFuzzer and the sanitizer
  # runtimes (scripts/sanitize.sh uses g++'s own)
  clang-14 libclang-rt-14-dev
  # the house style (scripts/check-format.sh)
  clang-format-14
  # the Go client (client/go), a module built offline over Debian's sources
  # (client/go/offline-workspace.sh): the toolchain, the generators (for
  # client/go/generate.sh and its drift check), grpc-go and both protobuf
  # APIs. protoc-gen-go writes
  # code for google.golang.org/protobuf (golang-google-protobuf-dev), and
  # grpc-go 1.33 marshals through github.com/golang/protobuf, which must be
  # 1.5 (the 1.3 that golang-google-grpc-dev would pull in otherwise does
  # not know the generated messages).
  golang-go protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev
  golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev
)
case "${CHUNKPLAN_DEPS:-all}" in
  all) packages+=("${more_packages[@]}") ;;
  server) ;;
  *) echo "install-deps: CHUNKPLAN_DEPS is all or server," \
          "not '${CHUNKPLAN_DEPS}'" >&2
     exit 2 ;;
esac

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
