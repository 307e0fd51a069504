"""--gpu NAME: the presets (common/gpu_presets.inc, copied into the
package) against figures published as nvidia-smi output, docs/gpu-presets.md
listing exactly the data file's entries, and the layout and frontier
commands taking --gpu in place of --device-memory."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

from chunkplan import gpu_presets
from chunkplan.local import CLI_ENV
from oracle_cases import HF_CONFIGS

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIMEOUT_S = 120
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")

# Total memory as published nvidia-smi output prints it (MiB), read from
# the sources the docs cite: H100 SXM "0MiB / 81559MiB" (NVIDIA/nccl#1264),
# RTX 4090 "507MiB / 24564MiB" (RLinf/RLinf#255), RTX 3090 "22598MiB /
# 24576MiB" (club-3090#1128), the Modal table for H200 and A100 80GB.
PUBLISHED_MIB = {"h100-sxm": 81559, "rtx-4090": 24564, "rtx-3090": 24576,
                 "h200": 143771, "a100-80gb": 81920}


def test_presets_are_the_published_figures():
    presets = {p.name: p for p in gpu_presets.load()}
    for name, mib in PUBLISHED_MIB.items():
        assert presets[name].mib == mib, name
        assert presets[name].bytes == mib * 2**20
        assert presets[name].source.startswith("https://")


def test_the_package_reads_the_trees_file():
    assert gpu_presets.load() == gpu_presets.load(
        ROOT / "common" / "gpu_presets.inc")


def test_docs_table_lists_every_preset():
    """docs/gpu-presets.md: one row `| name | MiB | card | source |` per
    entry, in order, with the same figures."""
    text = (ROOT / "docs" / "gpu-presets.md").read_text()
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([0-9,]+) \| ([^|]+) \| "
                      r"<?(https://[^ |>]+)>? \|", text, re.MULTILINE)
    assert [(n, int(m.replace(",", "")), c.strip(), s)
            for n, m, c, s in rows] == [
        (p.name, p.mib, p.smi_name, p.source) for p in gpu_presets.load()]


def test_a_malformed_entry_is_named(tmp_path):
    path = tmp_path / "bad.inc"
    path.write_text('CHUNKPLAN_GPU("x", 12 MiB, "X", "s")\n')
    with pytest.raises(ValueError, match="bad.inc:1"):
        gpu_presets.load(path)


def run(*args):
    env = dict(os.environ)
    if not os.access(env.get(CLI_ENV, ""), os.X_OK):
        pytest.skip(f"chunkplan not built ({CLI_ENV})")
    return subprocess.run([sys.executable, "-m", "chunkplan", *args,
                           "--hf-config", GPT2_TEST, "--local"],
                          capture_output=True, text=True, timeout=TIMEOUT_S,
                          env=env)


def test_layout_takes_gpu():
    result = run("layout", "--gpu", "rtx-4090")
    assert result.returncode == 0, result.stderr
    # 24564 MiB = 23.988... GiB
    assert "\ndevice memory   23.99 GiB, headroom " in result.stdout
    assert "\nverdict         fits\n" in result.stdout


def test_gpu_and_device_memory_are_one_or_the_other():
    result = run("layout", "--gpu", "h100-sxm", "--device-memory", "80GiB")
    assert result.returncode == 2
    assert "not allowed with argument" in result.stderr


def test_unknown_gpu_lists_the_presets():
    result = run("frontier", "--gpu", "h100-pcie")
    assert result.returncode == 2
    assert "'h100-pcie' is not a preset: one of h100-sxm, h200" in (
        result.stderr)
