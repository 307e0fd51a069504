#!/bin/sh
# Fails when the committed chunkplanv1/ differs from what generate.sh makes
# from proto/chunkplan/v1/chunk_search.proto now (run generate.sh and commit).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$here/generate.sh" "$tmp"
if ! diff -ru "$here/chunkplanv1" "$tmp/chunkplanv1"; then
  echo "client/go/chunkplanv1 drifted from the proto: run client/go/generate.sh" >&2
  exit 1
fi
echo "client/go/chunkplanv1 matches the proto"
