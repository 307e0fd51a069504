"""`python3 -m chunkplan layout --hf-config ...` against the real server:
the table of one degree, the rows of several and the JSON carry the
oracle's layout; --device-memory says fits / does not fit with the headroom
worked out from the oracle's bytes; usage errors exit 2."""

import argparse
import json
import re
import subprocess
import sys

import pytest

from chunkplan.layout_command import parse_degrees, parse_memory
from layout_cases import oracle_layout
from oracle_cases import HF_CONFIGS
import models as oracle_models  # noqa: E402  (tests/oracle/models)

TIMEOUT_S = 120
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")
# GiB figures of 2 decimals need a real model: LLaMA-2 7B (12 GiB at dp 8).
LLAMA_7B = str(HF_CONFIGS / "llama-2-7b.json")
# Small sweeps (at most 513 candidates): the oracle is Python.
SWEEP = ["--search-range-m", "0.25", "--search-interval", "512",
         "--min-chunk-size-m", "0"]
SEARCH = {"search_range_m": 0.25, "search_interval": 512,
          "min_chunk_size_m": 0}
GIB = 2**30


def run(*args):
    return subprocess.run([sys.executable, "-m", "chunkplan", *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def layout_out(server, *args):
    result = run("layout", "--server", server.target, *args)
    assert result.returncode == 0, result.stderr
    # The interval's line, on stderr beside --json or --emit.
    assert result.stderr in ("", "search interval 512 (--search-interval)\n")
    return result.stdout


def expected(dp, gemini=None, config=GPT2_TEST):
    """The oracle's layout of the model of `config` at `dp` with SWEEP."""
    return oracle_layout({
        "search": {"numels": oracle_models.describe(config).numels,
                   "dp_degrees": [dp], **SEARCH},
        "gemini": gemini or {}})


def gib(nbytes):
    return "%.2f" % (int(nbytes) / GIB)


def test_table_of_one_degree(server):
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP)
    answer = expected(8, config=LLAMA_7B)
    group = answer["groups"][0]
    assert re.search(r"(?m)^model\s+llama \(LlamaForCausalLM\), 291 "
                     r"parameters, hidden size 4096$", out), out
    # The two ranks differ where the padding sits: in the optimizer states.
    assert gib(answer["most_loaded_rank"]["optimizer_bytes"]) != gib(
        answer["least_loaded_rank"]["optimizer_bytes"])
    assert re.search(r"(?m)^\s*8\s+%s\s+no\s+%d\s+%s$" % (
        group["chunk_size"], len(group["chunks"]), group["padding"]),
        out), out
    assert re.search(r"(?m)^search waste\s+%s elements" %
                     answer["search"]["min_chunk_waste"], out), out
    assert re.search(r"(?m)^layout padding\s+%s elements" %
                     answer["layout_padding"], out), out
    for name, part in (("params", "param_bytes"),
                       ("master weights", "master_bytes"),
                       ("gradients", "grad_bytes"),
                       ("optimizer states", "optimizer_bytes"),
                       ("frozen", "frozen_bytes"),
                       ("device total", "device_bytes"),
                       ("pinned host", "pinned_host_bytes")):
        assert re.search(r"(?m)^%s\s+%s\s+\S+\s+%s$" % (
            name, re.escape(gib(answer["most_loaded_rank"][part])),
            re.escape(gib(answer["least_loaded_rank"][part]))), out), (
                name, out)
    assert re.search(r"(?m)^gathered chunk\s+%s GiB" % re.escape(
        gib(answer["gathered_chunk_bytes"])), out), out
    assert "device memory" not in out


def test_settings_reach_the_request(server):
    out = layout_out(server, "--hf-config", GPT2_TEST, "--dp", "2", *SWEEP,
                     "--json", "--no-master-weights",
                     "--gradient-accumulation", "--no-pin-memory",
                     "--optimizer", "none", "--precision", "bf16")
    got = json.loads(out)
    answer = expected(2, {"precision": "PRECISION_BF16",
                          "master_weights": False,
                          "gradient_accumulation": True,
                          "pin_memory": False,
                          "optimizer": "OPTIMIZER_NONE"})
    for key in ("groups", "layout_padding", "most_loaded_rank",
                "least_loaded_rank", "gathered_chunk_bytes"):
        assert got[key] == answer[key], key
    assert got["most_loaded_rank"]["optimizer_bytes"] == "0"
    assert got["most_loaded_rank"]["pinned_host_bytes"] == "0"


def test_one_row_per_degree_with_the_fit(server):
    degrees = [1, 2, 4, 8]
    answers = [expected(d, config=LLAMA_7B) for d in degrees]
    # A device between the dp 2 and the dp 1 figures: dp 1 does not fit.
    dp1, dp2 = (int(a["most_loaded_rank"]["device_bytes"])
                for a in answers[:2])
    assert dp2 < dp1
    memory_mib = (dp1 + dp2) // 2 // 2**20
    memory = memory_mib * 2**20
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "1,2,4,8",
                     *SWEEP, "--device-memory", f"{memory_mib}MiB")
    assert re.search(r"(?m)^device memory\s+%s GiB$" % re.escape(gib(memory)),
                     out), out
    rows = [line for line in out.splitlines()
            if re.match(r"^\s*\d+\s+\d+", line)]
    assert len(rows) == len(degrees), out
    for degree, answer, row in zip(degrees, answers, rows):
        device = int(answer["most_loaded_rank"]["device_bytes"])
        verdict = "fits" if device <= memory else "does not fit"
        assert re.match(r"^\s*%d\s+%s\s+no\s+%s\s+%s\s+%s\s+%s\s+%s$" % (
            degree, answer["groups"][0]["chunk_size"],
            answer["layout_padding"], answer["search"]["min_chunk_waste"],
            re.escape(gib(device)), verdict,
            re.escape("%.2f" % ((memory - device) / GIB))), row), (row, out)
    assert "does not fit" in rows[0] and "does not fit" not in rows[1]


def test_one_degree_with_device_memory(server):
    answer = expected(8, config=LLAMA_7B)
    device = int(answer["most_loaded_rank"]["device_bytes"])
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                     "--device-memory", "80GiB")
    assert re.search(r"(?m)^device memory\s+80\.00 GiB: the most loaded "
                     r"rank fits, headroom %s GiB$" % re.escape(
                         "%.2f" % ((80 * GIB - device) / GIB)), out), out
    assert 10**10 < device < 80 * GIB
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                     "--device-memory", "10GB")
    assert re.search(r"(?m)^device memory\s+9\.31 GiB: the most loaded "
                     r"rank does not fit, headroom %s GiB$" % re.escape(
                         "%.2f" % ((10**10 - device) / GIB)), out), out


def test_json_one_line_per_degree(server):
    out = layout_out(server, "--hf-config", GPT2_TEST, "--dp", "4,1", *SWEEP,
                     "--json")
    lines = out.splitlines()
    assert len(lines) == 2
    for line, dp in zip(lines, (4, 1)):
        got = json.loads(line)
        answer = expected(dp)
        assert got["groups"] == answer["groups"]
        assert got["most_loaded_rank"] == answer["most_loaded_rank"]
        assert got["search"]["configs"] == answer["search"]["configs"]


@pytest.mark.parametrize("text, nbytes", [
    ("80GiB", 80 * 2**30), ("80 GiB", 80 * 2**30), ("80gib", 80 * 2**30),
    ("79.5GiB", 159 * 2**29), ("81920MiB", 80 * 2**30), ("80GB", 80 * 10**9),
    ("1.5MB", 1_500_000), (".5MiB", 2**19), ("0GiB", 0),
    ("1.0000000001GB", 10**9),  # rounded down to a whole byte
])
def test_memory_units(text, nbytes):
    assert parse_memory(text) == nbytes


@pytest.mark.parametrize("text", ["80", "80G", "80TiB", "-1GiB", "GiB",
                                  "1e3GiB", "8 0GiB", ""])
def test_memory_without_a_known_unit_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError):
        parse_memory(text)


def test_degrees():
    assert parse_degrees("4,8,16,32") == [4, 8, 16, 32]
    assert parse_degrees(" 8 ") == [8]
    for text in ("0", "4,,8", "4,4", "x", "-2", ""):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_degrees(text)


@pytest.mark.parametrize("args, prefix", [
    (["--dp", "4,x"], "INVALID_ARGUMENT: argument --dp"),
    (["--device-memory", "80"], "INVALID_ARGUMENT: argument --device-memory"),
    (["--optimizer", "sgd"], "INVALID_ARGUMENT: argument --optimizer"),
    (["--precision", "fp32"], "INVALID_ARGUMENT: argument --precision"),
])
def test_usage_errors(args, prefix):
    result = run("layout", "--hf-config", GPT2_TEST, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(prefix), result.stderr
    assert result.stderr.count("\n") == 1


def test_server_error_is_one_line(server):
    result = run("layout", "--hf-config", GPT2_TEST, "--server",
                 server.target, "--search-interval", "0")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith(
        "INVALID_ARGUMENT: search.search_interval")
    assert result.stderr.count("\n") == 1


# Issue 27: the placement flags, the sweep and the notes, against the
# oracle's placement (tests/oracle/placement_oracle.py).
def test_offload_sweep_rows_carry_the_oracles_counts(server):
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                     "--offload-sweep")
    configs = expected(8, config=LLAMA_7B)["groups"]
    rows = re.findall(r"(?m)^\s+([01]\.\d\d)\s+(\d+) \.\. (\d+)\s", out)
    assert [float(r[0]) for r in rows] == [i / 20 for i in range(21)], out
    for fraction, least, most in rows:
        answer = oracle_layout({
            "search": {"numels": oracle_models.describe(LLAMA_7B).numels,
                       "dp_degrees": [8], **SEARCH},
            "configs": [{"dp_degree": g["dp_degree"],
                         "chunk_size": g["chunk_size"],
                         "keep_gathered": g["keep_gathered"]}
                        for g in configs],
            "gemini": {"offload_optim_frac": float(fraction)}})
        p = answer["placement"]
        assert (least, most) == (p["offloaded_chunks"],
                                 p["offloaded_chunks_max"]), fraction


def test_placement_table_has_host_bytes_per_node_and_notes(server):
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                     "--offload-optim-frac", "0.1", "--gpus-per-node", "8")
    answer = expected(8, {"offload_optim_frac": 0.1}, config=LLAMA_7B)
    most = answer["most_loaded_rank"]
    assert re.search(r"(?m)^host total\s+%s\s+%s\s+%s$" % (
        re.escape(gib(most["host_bytes"])),
        re.escape(gib(answer["most_loaded_rank_least"]["host_bytes"])),
        re.escape(gib(answer["least_loaded_rank"]["host_bytes"]))), out), out
    assert "host per node   %s GiB" % gib(8 * int(most["host_bytes"])) in out
    for note in answer["placement"]["notes"]:
        assert "note            " + note in out


def test_emit_carries_the_placement_keywords(server):
    out = layout_out(server, "--hf-config", GPT2_TEST, "--dp", "8", *SWEEP,
                     "--placement", "auto", "--emit", "colossalai")
    lines = out.splitlines()
    assert lines[1] == ('GeminiPlugin(placement_policy="auto", '
                        'chunk_config_dict=%s)' % lines[0]), out
