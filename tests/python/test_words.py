"""The Python command's words: its help and tables say "ColossalAI's search"
(or "ColossalAI's pick"), never "seed" outside the objective's name
seed_waste; the frontier's value column carries its unit (elements, or
bytes for peak_rank_bytes)."""

import os
import re
import subprocess
import sys

import pytest

from oracle_cases import HF_CONFIGS

TIMEOUT_S = 120
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")
SWEEP = ["--search-range-m", "0.25", "--search-interval", "512",
         "--min-chunk-size-m", "0"]
SEED_WORD = re.compile(r"(?<![\w-])seed(?!_)(?!\w)", re.IGNORECASE)


def run(*args):
    if not os.access(os.environ.get("CHUNKPLAN_CLI", ""), os.X_OK):
        pytest.skip("chunkplan not built (CHUNKPLAN_CLI)")
    result = subprocess.run([sys.executable, "-m", "chunkplan", *args],
                            capture_output=True, text=True,
                            timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("args", [
    ["--help"], ["search", "--help"], ["layout", "--help"],
    ["frontier", "--help"], ["plan", "--help"],
    ["search", "--hf-config", GPT2_TEST, "--local", *SWEEP],
    ["layout", "--hf-config", GPT2_TEST, "--local", *SWEEP],
    ["layout", "--hf-config", GPT2_TEST, "--local", "--dp", "1,2", *SWEEP],
    ["frontier", "--hf-config", GPT2_TEST, "--local", *SWEEP],
])
def test_no_seed_in_help_and_tables(args):
    out = run(*args)
    assert SEED_WORD.search(out) is None, out


@pytest.mark.parametrize("objective,unit", [
    ("seed_waste", "elements"), ("layout_padding", "elements"),
    ("peak_rank_bytes", "bytes")])
def test_frontier_value_has_its_unit(objective, unit):
    out = run("frontier", "--hf-config", GPT2_TEST, "--local", *SWEEP,
              "--objective", objective)
    header = next(line for line in out.splitlines()
                  if line.startswith("candidate"))
    assert f"value ({unit})" in header
    assert "search waste (elements)" in header
