#!/usr/bin/env bash
# Checks the front door's configuration with `haproxy -c`, renders every
# kustomize overlay under deploy/kubernetes with `kubectl kustomize`, lints
# the sources and the renderings with yamllint, and checks them against the
# real binaries and HAProxy (deploy/check_manifests.py).
#
#   deploy/check-manifests.sh BUILD_DIR/bin/chunkplan-server BUILD_DIR/bin/chunkplan
#
# Exit codes: 0 all good, 1 a check failed, 77 a tool is missing (ctest
# reports it as skipped). kubectl must embed kustomize v5 (kubectl 1.27+).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
server="${1:?usage: check-manifests.sh SERVER_BIN CLI_BIN}"
cli="${2:?usage: check-manifests.sh SERVER_BIN CLI_BIN}"
python="${CHUNKPLAN_PYTHON:-/usr/bin/python3}"
k8s="$here/kubernetes"

haproxy="${CHUNKPLAN_HAPROXY:-$(command -v haproxy || echo /usr/sbin/haproxy)}"

for tool in kubectl yamllint "$python" "$haproxy"; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found (kubectl: the machine image or Kubernetes' apt" \
         "repository; yamllint, haproxy: apt-get install yamllint haproxy," \
         "scripts/install-deps.sh)"
    exit 77
  fi
done
kustomize_version="$(kubectl version --client 2>/dev/null |
                     sed -n 's/^Kustomize Version: v\([0-9]*\).*/\1/p')"
if [ -z "$kustomize_version" ] || [ "$kustomize_version" -lt 5 ]; then
  echo "SKIP: kubectl embeds kustomize ${kustomize_version:-?}, these need v5" \
       "(kubectl 1.27+)"
  exit 77
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# The one file deployed and tested: as the test starts it (plaintext) and
# with TLS and mutual TLS (a throwaway certificate).
echo "haproxy -c deploy/haproxy/haproxy.cfg"
CHUNKPLAN_H2C_BIND=127.0.0.1:50051 CHUNKPLAN_UPSTREAM=127.0.0.1:50052 \
  "$haproxy" -c -f "$here/haproxy/haproxy.cfg"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$out/tls.pem.key" -out "$out/tls.pem" -days 1 -subj /CN=check \
  2>/dev/null
CHUNKPLAN_H2C_BIND=127.0.0.1:50051 CHUNKPLAN_UPSTREAM=127.0.0.1:50052 \
  CHUNKPLAN_TLS_BIND=127.0.0.1:50443 CHUNKPLAN_TLS_CERT="$out/tls.pem" \
  CHUNKPLAN_TLS_CLIENT_CA="$out/tls.pem" \
  "$haproxy" -c -f "$here/haproxy/haproxy.cfg"

echo "yamllint deploy/kubernetes deploy/haproxy"
yamllint -s -c "$k8s/.yamllint" "$k8s" "$here/haproxy/kustomization.yaml"

rendered=()
for overlay in "$k8s"/overlays/*/; do
  name="$(basename "$overlay")"
  echo "kubectl kustomize overlays/$name"
  kubectl kustomize "$overlay" >"$out/$name.yaml"
  # kubectl's output is its own style (no indented sequences): lint it for
  # syntax and duplicate keys, not layout.
  yamllint -s -d '{extends: relaxed, rules: {line-length: disable,
    indentation: disable}}' "$out/$name.yaml"
  rendered+=("$name=$out/$name.yaml")
done

"$python" "$here/check_manifests.py" --server "$server" --cli "$cli" \
  --proto "$root/proto/chunkplan/v1/chunk_search.proto" \
  --examples "$k8s/examples" --dockerfile "$root/Dockerfile" \
  --haproxy "$haproxy" --haproxy-config "$here/haproxy/haproxy.cfg" \
  --haproxy-dockerfile "$here/haproxy/Dockerfile" "${rendered[@]}"
