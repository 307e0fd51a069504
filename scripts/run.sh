#!/usr/bin/env bash
# The README's run command: installs what is missing, builds chunkplan-server,
# the chunkplan CLI and the Python library (chunkplan_python, assembled in
# build/python) into build/, and serves on 127.0.0.1:50051 in the
# foreground (Ctrl-C or SIGTERM drains calls in flight and exits 0).
#
#   scripts/run.sh                               # 127.0.0.1:50051
#   scripts/run.sh --listen=0.0.0.0:50051 --log_format=json
#   BUILD_DIR=out scripts/run.sh
#
# Extra arguments go to chunkplan-server (`build/bin/chunkplan-server --help`).
set -euo pipefail
cd "$(dirname "$0")/.."

# CHUNKPLAN_SKIP_DEPS=1 skips the package check (the tests of this script).
if [ -x scripts/install-deps.sh ] && [ -z "${CHUNKPLAN_SKIP_DEPS:-}" ]; then
  scripts/install-deps.sh
fi

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j "$(nproc)" --target chunkplan-server chunkplan \
  chunkplan_python

# The address clients should use: the last --listen given, else the default.
listen="127.0.0.1:50051"
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --listen=*) listen="${args[i]#--listen=}" ;;
    --listen) if ((i + 1 < ${#args[@]})); then listen="${args[i + 1]}"; fi ;;
  esac
done

if [[ "$listen" == *:0 ]]; then
  echo "(port 0: use the port that the 'listening on' line below names)"
fi
cat <<MSG
chunkplan-server is starting on ${listen}. Try, from another shell:
  ${build_dir}/bin/chunkplan search --server ${listen} --request examples/gpt2_colossalai.json --format table
  ${build_dir}/bin/chunkplan health --server ${listen}
  PYTHONPATH=${build_dir}/python /usr/bin/python3 -c 'import chunkplan; m = chunkplan.models.from_hf_config("examples/gpt2_colossalai_config.json", target="${listen}"); print(chunkplan.search_chunk_configuration(m, 1, 128, 0, target="${listen}"))'
and without a server:
  ${build_dir}/bin/chunkplan search --local --hf-config examples/gpt2_colossalai_config.json --format table
  PYTHONPATH=${build_dir}/python /usr/bin/python3 -c 'import chunkplan; c = chunkplan.LocalClient(); m = chunkplan.models.from_hf_config("examples/gpt2_colossalai_config.json", client=c); print(c.search_chunk_configuration(m, 1, 128, 0))'
MSG
exec "${build_dir}/bin/chunkplan-server" --listen=127.0.0.1:50051 "$@"
