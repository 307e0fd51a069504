#!/usr/bin/env bash
# Fails, listing what clang-format-14 would change, when any tracked C++ or
# CUDA file is not formatted as .clang-format says. CI runs it first.
#
#   scripts/check-format.sh          # check
#   clang-format-14 -i FILE...       # fix
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format-14 >/dev/null || scripts/install-deps.sh
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
clang-format-14 --dry-run -Werror "${files[@]}"
echo "check-format: ${#files[@]} files formatted"
