#!/bin/sh
# Regenerates the Go messages and stubs of proto/chunkplan/v1/chunk_search.proto
# into client/go/chunkplanv1/ (committed), or into OUT_DIR/chunkplanv1/ when
# given (the drift check), and copies the --gpu presets' data file,
# common/gpu_presets.inc, to internal/cmdline/ (go:embed takes no file
# outside the module; the ctest go_gpu_presets_match holds the copy equal). Uses Debian's protoc, protoc-gen-go and
# protoc-gen-go-grpc (scripts/install-deps.sh), or $PROTOC and the plugins
# on PATH.
#
#   client/go/generate.sh [OUT_DIR]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here}
mkdir -p "$out"
"${PROTOC:-protoc}" --proto_path="$root/proto" \
  --go_out="$out" --go_opt=module=github.com/chunkplan/chunkplan/client/go \
  --go-grpc_out="$out" \
  --go-grpc_opt=module=github.com/chunkplan/chunkplan/client/go \
  chunkplan/v1/chunk_search.proto
[ "$out" = "$here" ] && cp "$root/common/gpu_presets.inc" "$here/internal/cmdline/gpu_presets.inc"
exit 0
