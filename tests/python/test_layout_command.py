"""`python3 -m chunkplan layout --hf-config ...` against the real server:
the table of one degree, the rows of several and the JSON carry the
oracle's layout; the verdict (device need = device bytes + gathered chunk
+ --reserve against --device-memory, host per node against --host-memory,
docs/plan.md's rules) and its headroom are worked out from the oracle's
bytes, in the tables and in the JSON; a workload adds the activation
oracle's estimate (tests/oracle/activation_oracle.py); usage errors exit
2."""

import argparse
import json
import re
import subprocess
import sys

import pytest

from chunkplan.layout_command import parse_degrees, parse_memory
from layout_cases import oracle_layout
from oracle_cases import HF_CONFIGS
import activation_oracle  # noqa: E402  (tests/oracle)
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


def need_of(answer, reserve=0):
    """The device need of an oracle layout, by docs/plan.md's rule: the most
    loaded rank's device bytes + the gathered chunk + the reserve."""
    return (int(answer["most_loaded_rank"]["device_bytes"]) +
            int(answer["gathered_chunk_bytes"]) + reserve)


def host_per_node_of(answer, gpus_per_node, dp):
    """Host bytes per node, by docs/plan.md's rule: min(gpus_per_node, dp)
    x the larger of rank 0's host bytes under the two extreme orders."""
    return min(gpus_per_node, dp) * max(
        int(answer["most_loaded_rank"]["host_bytes"]),
        int(answer["most_loaded_rank_least"]["host_bytes"]))


def rows_of(out):
    return [line for line in out.splitlines()
            if re.match(r"^\s*\d+\s+\d+", line)]


def test_one_row_per_degree_with_the_fit(server):
    degrees = [1, 2, 4, 8]
    answers = [expected(d, config=LLAMA_7B) for d in degrees]
    # A device between the dp 2 and the dp 1 needs: dp 1 does not fit.
    dp1, dp2 = (need_of(a) for a in answers[:2])
    assert dp2 < dp1
    memory_mib = (dp1 + dp2) // 2 // 2**20
    memory = memory_mib * 2**20
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "1,2,4,8",
                     *SWEEP, "--device-memory", f"{memory_mib}MiB")
    assert re.search(r"(?m)^device memory\s+%s GiB$" % re.escape(gib(memory)),
                     out), out
    rows = rows_of(out)
    assert len(rows) == len(degrees), out
    for degree, answer, row in zip(degrees, answers, rows):
        device = int(answer["most_loaded_rank"]["device_bytes"])
        need = need_of(answer)
        verdict = "fits" if need <= memory else "does not fit"
        assert re.match(r"^\s*%d\s+%s\s+no\s+%s\s+%s\s+%s\s+%s\s+%s\s+%s$" % (
            degree, answer["groups"][0]["chunk_size"],
            answer["layout_padding"], answer["search"]["min_chunk_waste"],
            re.escape(gib(device)), re.escape(gib(need)),
            re.escape("%.2f" % ((memory - need) / GIB)), verdict), row), (
                row, out)
    assert "does not fit" in rows[0] and "does not fit" not in rows[1]


def test_the_verdict_counts_the_gathered_chunk_and_the_reserve(server):
    """A device that holds the rank's device bytes but not the gathered
    chunk on top does not fit; nor one that holds both but not the
    reserve."""
    answer = expected(8, config=LLAMA_7B)
    device = int(answer["most_loaded_rank"]["device_bytes"])
    gathered = int(answer["gathered_chunk_bytes"])
    assert gathered > 2**20
    reserve = 3 * 2**20
    for memory_mib, reserve_mib, fits in (
            (device // 2**20 + 1, 0, False),              # buffer left out
            ((device + gathered) // 2**20 + 1, 0, True),
            ((device + gathered) // 2**20 + 1, 3, False),  # reserve left out
            ((device + gathered + reserve) // 2**20 + 1, 3, True)):
        out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                         "--device-memory", f"{memory_mib}MiB", "--reserve",
                         f"{reserve_mib}MiB")
        need = need_of(answer, reserve_mib * 2**20)
        memory = memory_mib * 2**20
        assert (need <= memory) == fits
        assert re.search(r"(?m)^device need\s+%s GiB \(" % re.escape(
            gib(need)), out), out
        assert re.search(r"(?m)^device memory\s+%s GiB, headroom %s GiB$" % (
            re.escape(gib(memory)), re.escape(gib(memory - need))), out), out
        verdict = ("fits" if fits else "does not fit: device: %d > %d by %d"
                   % (need, memory, need - memory))
        assert re.search(r"(?m)^verdict\s+%s$" % re.escape(verdict), out), (
            out)


def test_host_per_node_against_the_host_memory(server):
    """min(--gpus-per-node, dp) ranks' host bytes, the larger over the two
    chunk orders (they differ under a partial offload), held against
    --host-memory: a node of 4 holds dp 8's (4 ranks of an eighth) and
    not dp 2's (2 ranks of a half)."""
    gemini = {"offload_optim_frac": 0.1}
    answers = {dp: expected(dp, gemini, config=LLAMA_7B) for dp in (2, 8)}
    host = {dp: host_per_node_of(a, 4, dp) for dp, a in answers.items()}
    assert answers[8]["most_loaded_rank"]["host_bytes"] != (
        answers[8]["most_loaded_rank_least"]["host_bytes"])
    assert host[8] < host[2]
    memory_mib = (host[2] + host[8]) // 2 // 2**20
    memory = memory_mib * 2**20
    assert host[8] < memory < host[2]
    flags = ["--hf-config", LLAMA_7B, *SWEEP, "--offload-optim-frac", "0.1",
             "--gpus-per-node", "4", "--host-memory", f"{memory_mib}MiB"]
    rows = rows_of(layout_out(server, "--dp", "2,8", *flags))
    for dp, row in zip((2, 8), rows):
        fits = host[dp] <= memory
        tail = ["fits"] if fits else ["does", "not", "fit"]
        assert row.split()[-2 - len(tail):] == [
            gib(host[dp]), gib(memory - host[dp])] + tail, row
    assert "does not fit" in rows[0] and "does not fit" not in rows[1]
    one = layout_out(server, "--dp", "2", *flags)
    assert re.search(r"(?m)^host per node\s+%s GiB \(2 ranks: " % re.escape(
        gib(host[2])), one), one
    assert re.search(r"(?m)^verdict\s+does not fit: host: %d > %d by %d$" % (
        host[2], memory, host[2] - memory), one), one


def test_json_keeps_the_verdict(server):
    answer = expected(8, {"offload_optim_frac": 0.1}, config=LLAMA_7B)
    reserve = 2 * GIB
    need = need_of(answer, reserve)
    host = host_per_node_of(answer, 8, 8)
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                     "--offload-optim-frac", "0.1", "--device-memory",
                     "12GiB", "--reserve", "2GiB", "--gpus-per-node", "8",
                     "--host-memory", "1TiB", "--format", "json")
    got = json.loads(out)
    assert got["most_loaded_rank"] == answer["most_loaded_rank"]
    assert need > 12 * GIB  # so the JSON says why not
    assert got["verdict"] == {
        "device_need_bytes": str(need), "reserve_bytes": str(reserve),
        "host_bytes_per_node": str(host),
        "device_memory_bytes": str(12 * GIB),
        "device_headroom_bytes": str(12 * GIB - need),
        "host_memory_bytes": str(2**40),
        "host_headroom_bytes": str(2**40 - host),
        "fits": False,
        "why_not": "device: %d > %d by %d" % (need, 12 * GIB,
                                              need - 12 * GIB)}


def oracle_activations(config, workload):
    """The activation oracle's total for the model of `config` (its shape
    read from the config text) running `workload`."""
    with open(config, encoding="utf-8") as f:
        hf = json.load(f)
    shape = {"num_layers": hf["num_hidden_layers"],
             "hidden_size": hf["hidden_size"],
             "num_attention_heads": hf["num_attention_heads"],
             "vocab_size": hf["vocab_size"]}
    return activation_oracle.estimate(shape, workload)["total_bytes"]


def test_a_workload_adds_the_activation_estimate(server):
    """--micro-batch and --sequence-length: the layout is the oracle's as
    without, and the device need adds the activation oracle's estimate, in
    the table (named an ESTIMATE), the rows and the JSON verdict."""
    answer = expected(8, config=LLAMA_7B)
    work = {"micro_batch": 1, "sequence_length": 2048,
            "activation_checkpointing": False, "flash_attention": True}
    activations = oracle_activations(LLAMA_7B, work)
    need = need_of(answer, GIB) + activations
    flags = [*SWEEP, "--device-memory", "80GiB", "--reserve", "1GiB",
             "--micro-batch", "1", "--sequence-length", "2048",
             "--flash-attention"]
    got = json.loads(layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8",
                                *flags, "--json"))
    for key in ("groups", "layout_padding", "most_loaded_rank",
                "gathered_chunk_bytes"):
        assert got[key] == answer[key], key
    assert got["activation_bytes"] == str(activations)
    assert got["verdict"]["activation_bytes"] == str(activations)
    assert got["verdict"]["device_need_bytes"] == str(need)
    assert got["verdict"]["device_headroom_bytes"] == str(80 * GIB - need)
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *flags)
    assert re.search(r"(?m)^activations\s+%s GiB per rank, an ESTIMATE "
                     r"\(docs/plan\.md\)$" % re.escape(gib(activations)),
                     out), out
    assert re.search(r"(?m)^device need\s+%s GiB \(.* \+ the activations\)$"
                     % re.escape(gib(need)), out), out
    rows = rows_of(layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8,4",
                              *flags))
    assert re.search(r"\s%s\s" % re.escape(gib(need)), rows[0]), rows


def test_one_degree_with_device_memory(server):
    answer = expected(8, config=LLAMA_7B)
    need = need_of(answer)
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                     "--device-memory", "80GiB")
    assert re.search(r"(?m)^device memory\s+80\.00 GiB, headroom %s GiB$" %
                     re.escape("%.2f" % ((80 * GIB - need) / GIB)), out), out
    assert re.search(r"(?m)^verdict\s+fits$", out), out
    assert 10**10 < need < 80 * GIB
    out = layout_out(server, "--hf-config", LLAMA_7B, "--dp", "8", *SWEEP,
                     "--device-memory", "10GB")
    assert re.search(r"(?m)^device memory\s+9\.31 GiB, headroom %s GiB$" %
                     re.escape("%.2f" % ((10**10 - need) / GIB)), out), out
    assert re.search(r"(?m)^verdict\s+does not fit: device: ", out), out


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
    ("1TiB", 2**40), ("2TB", 2 * 10**12),
])
def test_memory_units(text, nbytes):
    assert parse_memory(text) == nbytes


@pytest.mark.parametrize("text", ["80", "80G", "80PiB", "-1GiB", "GiB",
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
    (["--host-memory", "1TiB"], "INVALID_ARGUMENT: --host-memory needs "
     "--gpus-per-node"),
    (["--gpus-per-node", "0"], "INVALID_ARGUMENT: argument --gpus-per-node"),
    (["--reserve", "2"], "INVALID_ARGUMENT: argument --reserve"),
    (["--micro-batch", "1"], "INVALID_ARGUMENT: --micro-batch and "
     "--sequence-length go together"),
    (["--flash-attention"], "INVALID_ARGUMENT: --activation-checkpointing "
     "and --flash-attention describe a workload"),
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
    # Six of the 21 rows against the oracle (each oracle layout of LLaMA-2
    # 7B takes seconds): the ends, and the fractions around 0.55 where
    # LLaMA-2 7B's counts turn from some to every chunk (docs/placement.md).
    checked = {"0.00", "0.05", "0.50", "0.55", "0.60", "1.00"}
    for fraction, least, most in (r for r in rows if r[0] in checked):
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
    assert "host per node   %s GiB (8 ranks: " % gib(
        host_per_node_of(answer, 8, 8)) in out
    for note in answer["placement"]["notes"]:
        assert "note            " + note in out


def test_emit_carries_the_placement_keywords(server):
    out = layout_out(server, "--hf-config", GPT2_TEST, "--dp", "8", *SWEEP,
                     "--placement", "auto", "--emit", "colossalai")
    lines = out.splitlines()
    assert lines[1] == ('GeminiPlugin(placement_policy="auto", '
                        'chunk_config_dict=%s)' % lines[0]), out
