#!/usr/bin/env bash
# Builds the CPU image from the Dockerfile with podman, without a Docker
# engine or a registry: the Debian 12 base is made here with debootstrap and
# `podman import`, and RUN steps use chroot isolation (this machine's crun
# cannot create containers). Then checks the image without running it: its
# configuration (user, ports, entrypoint) and, in a chroot of its exported
# file system, that chunkplan-server and chunkplan start with only the
# image's libraries and answer a health check. Last, the front door's image
# from the same base (deploy/haproxy/podman-build.sh).
#
#   deploy/podman-build.sh [TAG]        # default TAG: localhost/chunkplan:0.1.0-cpu
#
# Environment: CHUNKPLAN_ROOTFS_CACHE (default /var/tmp/chunkplan-debian12)
# keeps the debootstrap tree between runs; CTEST_ARGS, BUILD_TARGETS and
# SKIP_TESTS are passed to the image's scripts/test.sh, and CHUNKPLAN_DEPS
# and CCACHE_DIR (below) too. Needs root and Debian's package mirror; installs
# podman and debootstrap with apt-get where they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-localhost/chunkplan:0.1.0-cpu}"
base="localhost/chunkplan-debian12:base"
rootfs="${CHUNKPLAN_ROOTFS_CACHE:-/var/tmp/chunkplan-debian12}"
start=$SECONDS

# Like scripts/install-deps.sh: install what is missing, nothing else.
missing=()
for tool in podman debootstrap; do
  command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "== apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if ! podman image exists "$base"; then
  if [ ! -x "$rootfs/bin/sh" ]; then
    echo "== debootstrap bookworm into $rootfs"
    rm -rf "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian
  fi
  echo "== podman import $base"
  tar -C "$rootfs" -c . | podman import - "$base"
fi

echo "== podman build $tag"
build_args=(--build-arg VARIANT=cpu
            --build-arg "DEBIAN_IMAGE=$base"
            --build-arg "DEBIAN_RUNTIME_IMAGE=$base"
            # Not used by the cpu variant; local so that nothing is pulled.
            --build-arg "CUDA_IMAGE=$base"
            --build-arg "CUDA_RUNTIME_IMAGE=$base")
for arg in CTEST_ARGS BUILD_TARGETS CHUNKPLAN_DEPS SKIP_TESTS; do
  if [ -n "${!arg+set}" ]; then
    build_args+=(--build-arg "$arg=${!arg}")
  fi
done
# Where CCACHE_DIR is set (.ci/run sets it for scripts/test.sh), the image's
# build compiles through the same cache: the same compiler, flags and
# relative paths, so most objects are hits.
# ccache also hashes the locale variables, so those set here are set there.
if [ -n "${CCACHE_DIR:-}" ]; then
  mkdir -p "$CCACHE_DIR"
  build_args+=(--volume "$(realpath "$CCACHE_DIR"):/ccache"
               --build-arg CCACHE_DIR=/ccache)
  for arg in LANG LC_ALL LC_CTYPE LC_MESSAGES; do
    if [ -n "${!arg+set}" ]; then
      build_args+=(--build-arg "$arg=${!arg}")
    fi
  done
fi
podman build --isolation=chroot --network=host "${build_args[@]}" \
  -t "$tag" -f Dockerfile .
echo "== built in $((SECONDS - start)) s"

echo "== image configuration"
config="$(podman image inspect --format \
  '{{.Config.User}}|{{json .Config.Entrypoint}}|{{json .Config.ExposedPorts}}' "$tag")"
echo "$config"
case "$config" in
  65532:65532\|*chunkplan-server*--listen=0.0.0.0:50051*\|*50051/tcp*9090/tcp*) ;;
  *) echo "unexpected image configuration" >&2; exit 1 ;;
esac

echo "== binaries in the exported file system"
work="$(mktemp -d)"
chmod 755 "$work"  # the image's root: the non-root user must enter it
container=""
cleanup() {
  if [ -n "${server_pid:-}" ]; then kill "$server_pid" 2>/dev/null || true; fi
  if [ -n "$container" ]; then podman rm -f "$container" >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
container="$(podman create "$tag")"
podman export "$container" | tar -C "$work" -x
chroot "$work" /usr/local/bin/chunkplan-server --version
chroot "$work" /usr/local/bin/chunkplan version
chroot --userspec=65532:65532 "$work" /usr/local/bin/chunkplan-server \
  --listen=127.0.0.1:0 >"$work/tmp/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -qs "listening on" "$work/tmp/server.log" && break
  sleep 0.1
done
address="$(sed -n 's/.*listening on \([^ "]*\).*/\1/p' "$work/tmp/server.log")"
[ -n "$address" ] || { cat "$work/tmp/server.log"; exit 1; }
# A client's first connection can fail at once (no wait-for-ready): CI's run
# of stop 50 got "UNKNOWN: ipv4:127.0.0.1:PORT: No such file or directory"
# from a server that had printed its address (30 runs here: none failed; a
# refused connection reads "Failed to connect to remote host: ...", so that
# error came from elsewhere in the client's connect). Like a readiness
# probe, up to five tries a second apart; after a failure the server's log,
# and the next tries with gRPC's own trace of the client's TCP connect and
# subchannel, so that the next such failure says where.
healthy=""
trace=()
for attempt in 1 2 3 4 5; do
  if env "${trace[@]}" chroot "$work" /usr/local/bin/chunkplan health \
      --server "$address" --deadline 10s; then
    healthy=1
    break
  fi
  echo "health check $attempt of 5 failed; the server's log:" >&2
  cat "$work/tmp/server.log" >&2
  trace=(GRPC_VERBOSITY=debug GRPC_TRACE=tcp,subchannel)
  sleep 1
done
[ -n "$healthy" ] || exit 1
echo "podman-build: $tag OK in $((SECONDS - start)) s"

# The front door's image (Debian's HAProxy) from the same base, checked the
# same way: about 45 s, 15 s with its layers cached.
deploy/haproxy/podman-build.sh "$base"
