#!/usr/bin/env bash
# Builds the front door's image (deploy/haproxy/Dockerfile: Debian 12's
# HAProxy) with podman from a local Debian 12 base, then checks it without
# running a container: its configuration (user, stop signal, entrypoint)
# and, in a chroot of its exported file system as user 65532, that its
# HAProxy is the upstream version the tests ran and accepts
# deploy/haproxy/haproxy.cfg with plaintext and mutual TLS (`haproxy -c`).
#
#   deploy/haproxy/podman-build.sh BASE [TAG]
#
# BASE: a local Debian 12 image (deploy/podman-build.sh makes it and calls
# this); TAG defaults to localhost/chunkplan-haproxy:0.1.0. Needs root.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
base="${1:?usage: podman-build.sh BASE [TAG]}"
tag="${2:-localhost/chunkplan-haproxy:0.1.0}"
start=$SECONDS

echo "== podman build $tag"
podman build --isolation=chroot --network=host \
  --build-arg "DEBIAN_RUNTIME_IMAGE=$base" -t "$tag" -f "$here/Dockerfile" \
  "$here"

echo "== image configuration"
config="$(podman image inspect --format \
  '{{.Config.User}}|{{.Config.StopSignal}}|{{json .Config.Entrypoint}}' "$tag")"
echo "$config"
case "$config" in
  '65532:65532|SIGUSR1|["/usr/sbin/haproxy","-db"]') ;;
  *) echo "unexpected image configuration" >&2; exit 1 ;;
esac

echo "== haproxy in the exported file system"
work="$(mktemp -d)"
chmod 755 "$work"
container=""
cleanup() {
  if [ -n "$container" ]; then podman rm -f "$container" >/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
container="$(podman create "$tag")"
podman export "$container" | tar -C "$work" -x
# The upstream version (2.6.12): Debian's revision may differ by security
# updates (debootstrap's base has no security suite; debian:12-slim has).
upstream='s/^HAProxy version \([0-9.]*\).*/\1/p'
version="$(chroot "$work" /usr/sbin/haproxy -v | sed -n "$upstream")"
echo "HAProxy $version"
if command -v haproxy >/dev/null; then
  [ "$version" = "$(haproxy -v | sed -n "$upstream")" ] ||
    { echo "the image's HAProxy is not the one the tests ran" >&2; exit 1; }
fi
mkdir -p "$work/etc/chunkplan/haproxy" "$work/tmp/tls"
cp "$here/haproxy.cfg" "$work/etc/chunkplan/haproxy/"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$work/tmp/tls/cert.pem.key" -out "$work/tmp/tls/cert.pem" \
  -days 1 -subj /CN=check 2>/dev/null
chmod -R a+rX "$work/tmp/tls"
for tls in "" "CHUNKPLAN_TLS_BIND=:50443 CHUNKPLAN_TLS_CERT=/tmp/tls/cert.pem
            CHUNKPLAN_TLS_CLIENT_CA=/tmp/tls/cert.pem"; do
  # shellcheck disable=SC2086
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    CHUNKPLAN_H2C_BIND=127.0.0.1:50051 CHUNKPLAN_UPSTREAM=127.0.0.1:50052 $tls \
    chroot --userspec=65532:65532 "$work" /usr/sbin/haproxy -c \
      -f /etc/chunkplan/haproxy/haproxy.cfg
done
echo "podman-build: $tag OK in $((SECONDS - start)) s"
