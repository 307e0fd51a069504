"""The warning of chunks that dwarf what they hold (a LoRA-style model:
98,304 trainable elements beside 114.6 M frozen ones). The figures are the
oracle layout's (tests/oracle/layout_oracle.py): placed = the chunks' used
elements, padding = their sizes less that, as a share of placed; the C++
command line and the Python client print the same lines; the suggested
configs, laid out by the oracle, pad less than one element per rank; a
layout whose padding is below what it places gets no warning."""

import json
import os
import subprocess

import pytest

import chunkplan
from chunkplan.padding_warning import padding_warning, suggested_configs
from layout_cases import oracle_layout

TIMEOUT_S = 60
# Three frozen base weights and two trainable LoRA adapters.
NUMELS = [41_035_776, 40_000_000, 33_607_168, 49_152, 49_152]
FROZEN = [True, True, True, False, False]
SEARCH = {"search_range_m": 32, "search_interval": 4096,
          "min_chunk_size_m": 32}


def cli():
    path = os.environ.get("CHUNKPLAN_CLI", "")
    if not os.access(path, os.X_OK):
        pytest.skip("chunkplan not built (CHUNKPLAN_CLI)")
    return path


def request(numels, frozen, dp=1, configs=None):
    body = {"search": {"numels": numels, "dp_degrees": [dp], **SEARCH},
            "frozen": frozen}
    if configs:
        body["configs"] = configs
    return body


def oracle_figures(body):
    answer = oracle_layout(body)
    chunks = [c for g in answer["groups"] for c in g.get("chunks", [])]
    placed = sum(int(c.get("used", 0)) for c in chunks)
    allocated = sum(int(c["size"]) for c in chunks)
    return placed, allocated, allocated - placed


def cpp_table(body):
    result = subprocess.run(
        [cli(), "layout", "--local", "--request", "-", "--format", "table"],
        input=json.dumps(body), capture_output=True, text=True,
        timeout=TIMEOUT_S, check=True)
    return result.stdout


@pytest.mark.parametrize("dp", [1, 4])
def test_lora_layout_warns_with_the_oracles_figures(dp):
    body = request(NUMELS, FROZEN, dp)
    placed, allocated, padding = oracle_figures(body)
    assert padding > placed
    figures = ("warning         the chunks dwarf what they hold: %d elements "
               "placed in %d allocated, padding %d elements = %.2f%% of "
               "placed" % (placed, allocated, padding,
                           100 * padding / placed))
    cpp_lines = cpp_table(body).splitlines()
    assert figures in cpp_lines
    with chunkplan.LocalClient(cli()) as client:
        layout = client.layout(NUMELS, 32, 4096, 32, dp_degree=dp,
                               frozen=FROZEN, timeout=TIMEOUT_S)
    lines = padding_warning(layout)
    assert lines[1] == figures
    # the same lines, word for word, from both languages
    start = cpp_lines.index(figures)
    assert cpp_lines[start - 1:start + 3] == lines


@pytest.mark.parametrize("dp", [1, 4])
def test_suggested_configs_pad_less_than_a_degree(dp):
    with chunkplan.LocalClient(cli()) as client:
        layout = client.layout(NUMELS, 32, 4096, 32, dp_degree=dp,
                               frozen=FROZEN, timeout=TIMEOUT_S)
    configs = suggested_configs(layout)
    assert configs == {dp: {"chunk_size": 98_304, "keep_gathered": False}}
    placed, allocated, padding = oracle_figures(request(
        NUMELS, FROZEN, dp, [{"dp_degree": d, **c}
                             for d, c in configs.items()]))
    assert placed == 98_304 and padding < dp


def test_no_warning_when_padding_is_below_placed():
    body = request([6_000_000, 5_000_000, 4_000_000], [], 1)
    placed, _, padding = oracle_figures(body)
    assert padding <= placed
    assert "warning" not in cpp_table(body)
