"""`python3 -m chunkplan frontier --hf-config ...` (and `layout --emit`)
against the real server: the table, the JSON and the picture carry the
oracle's frontier points (tests/oracle/layout_oracle.py), the seed's pick
and the objective's best; --emit colossalai prints the oracle's configs as
a chunk_config_dict literal; usage errors exit 2."""

import ast
import importlib.util
import json
import re
import struct
import subprocess
import sys

import pytest

import chunkplan
from frontier_cases import objective_json, oracle_frontier
from layout_cases import oracle_layout
from oracle_cases import HF_CONFIGS
import models as oracle_models  # noqa: E402  (tests/oracle/models)

TIMEOUT_S = 120
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")
# 513 candidates x 28 parameters: quick for the brute-force oracle.
SWEEP = ["--search-range-m", "0.25", "--search-interval", "512",
         "--min-chunk-size-m", "0"]
SEARCH = {"search_range_m": 0.25, "search_interval": 512,
          "min_chunk_size_m": 0}
GIB = 2**30
# frontier_plot's figure: 12 x 8 inches at 100 dpi.
PNG_SIZE = (1200, 800)


def needs_matplotlib():
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib not installed (Debian: python3-matplotlib)")


def run(*args):
    return subprocess.run([sys.executable, "-m", "chunkplan", *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def command_out(server, command, *args):
    result = run(command, "--server", server.target, "--hf-config",
                 GPT2_TEST, *SWEEP, *args)
    assert result.returncode == 0, result.stderr
    # The interval's line, on stderr beside --json or --emit.
    assert result.stderr in ("", "search interval 512 (--search-interval)\n")
    return result.stdout


def request(dp, objective):
    return {"search": {"numels": oracle_models.describe(GPT2_TEST).numels,
                       "dp_degrees": [dp], **SEARCH},
            "objective": objective_json(objective)}


def expected_config_dict(answer):
    """The configs an oracle LayoutResponse lays out, in its order."""
    return {g["dp_degree"]: {"chunk_size": int(g["chunk_size"]),
                             "keep_gathered": g["keep_gathered"]}
            for g in answer["groups"]}


def test_table_rows_are_the_oracles_points(server):
    out = command_out(server, "frontier", "--dp", "8", "--objective",
                      "layout_padding")
    points = oracle_frontier(request(8, "layout_padding"))["points"]
    assert len(points) > 1  # a frontier, not just the best
    total = sum(oracle_models.describe(GPT2_TEST).numels)
    rows = [line.split() for line in out.splitlines()
            if re.match(r"^\s*\d+\s+\d+", line)]
    assert rows == [[p["candidate"], p["chunk_size"], p["value"],
                     p["seed_waste"], p["layout_padding"],
                     "%.4f%%" % (100 * int(p["layout_padding"]) / total),
                     "%.2f" % (int(p["peak_rank_bytes"]) / GIB)]
                    for p in points], out
    assert re.search(r"(?m)^objective\s+layout_padding ", out), out


@pytest.mark.parametrize("flags, gemini, objective", [
    # The peak under a partial optimizer offload: each candidate laid out
    # and placed (issue 27).
    (["--offload-optim-frac", "0.3"], {"offload_optim_frac": 0.3},
     "peak_rank_bytes"),
    # The padding's points carry the peak with the placement too.
    (["--shard-param-frac", "0.5"], {"shard_param_frac": 0.5},
     "layout_padding"),
])
def test_table_under_a_placement_is_the_oracles(server, flags, gemini,
                                                objective):
    out = command_out(server, "frontier", "--dp", "8", "--objective",
                      objective, *flags)
    placed = oracle_frontier(dict(request(8, objective),
                                  gemini=gemini))["points"]
    # The placement changes the answer: the flags must reach the request.
    assert placed != oracle_frontier(request(8, objective))["points"]
    rows = [line.split()[-1] for line in out.splitlines()
            if re.match(r"^\s*\d+\s+\d+", line)]
    assert rows == ["%.2f" % (int(p["peak_rank_bytes"]) / GIB)
                    for p in placed], out
    values = [line.split()[2] for line in out.splitlines()
              if re.match(r"^\s*\d+\s+\d+", line)]
    assert values == [p["value"] for p in placed], out
    # The settings line says the placement, as GeminiPlugin's keywords.
    settings = [line for line in out.splitlines()
                if line.startswith("settings")]
    assert len(settings) == 1, out
    for name, value in gemini.items():
        assert "%s=%r" % (name, value) in settings[0], out


def test_json_under_a_placement_is_the_oracles_frontier(server):
    got = json.loads(command_out(server, "frontier", "--dp", "4",
                                 "--objective", "peak_rank_bytes",
                                 "--offload-optim-frac", "0.3", "--json"))
    expected = oracle_frontier(dict(request(4, "peak_rank_bytes"),
                                    gemini={"offload_optim_frac": 0.3}))
    assert got["points"] == expected["points"]


def test_a_workload_model_under_a_placement_is_the_oracles(server):
    # Issue 27 on a workload model (bench/workloads/llama-2-70b.json's
    # search at dp 8) with a narrow grid: 16 candidates at the workload's
    # interval, every chunk's optimizer side and most fp16 shards (the
    # inflated fraction: 0.5 would move none) on the host.
    config = str(HF_CONFIGS / "llama-2-70b.json")
    search = {"search_range_m": 15 * 8192 / 2**20, "search_interval": 8192,
              "min_chunk_size_m": 32}
    result = run("frontier", "--server", server.target, "--hf-config",
                 config, "--dp", "8", "--search-range-m",
                 repr(search["search_range_m"]), "--search-interval", "8192",
                 "--min-chunk-size-m", "32", "--objective", "peak_rank_bytes",
                 "--offload-optim-frac", "1.0", "--offload-param-frac", "0.9",
                 "--json")
    assert result.returncode == 0, result.stderr
    request = {"search": {"numels": oracle_models.describe(config).numels,
                          "dp_degrees": [8], **search},
               "objective": objective_json("peak_rank_bytes")}
    gemini = {"offload_optim_frac": 1.0, "offload_param_frac": 0.9}
    expected = oracle_frontier(dict(request, gemini=gemini))
    # The placement changes the answer: the flags must reach the request.
    assert expected["points"] != oracle_frontier(request)["points"]
    got = json.loads(result.stdout)
    assert got["points"] == expected["points"]
    assert got["candidates"] == expected["candidates"] == "16"


def test_json_is_the_oracles_frontier(server):
    got = json.loads(command_out(server, "frontier", "--dp", "4",
                                 "--objective", "peak_rank_bytes", "--json"))
    expected = oracle_frontier(request(4, "peak_rank_bytes"))
    assert got["points"] == expected["points"]
    assert got["candidates"] == expected["candidates"]


def _png_size(path):
    """(width, height) from a PNG's IHDR; asserts the signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def test_plot_is_a_png_of_the_chosen_size(server, tmp_path):
    needs_matplotlib()
    path = tmp_path / "frontier.png"
    command_out(server, "frontier", "--dp", "8", "--objective",
                "layout_padding", "--plot", str(path))
    assert _png_size(path) == PNG_SIZE


def _xy(points, total):
    return ([int(p["chunk_size"]) / 2**20 for p in points],
            [100 * int(p["layout_padding"]) / total for p in points],
            [int(p["peak_rank_bytes"]) / GIB for p in points])


def test_plotted_points_are_the_responses(server, tmp_path):
    """plot_series and the drawn Line2D data: the oracle's frontier, its
    last point as the objective's best and the seed_waste frontier's last
    as the seed's pick. These sizes at dp 4: the seed picks 210,432, the
    peak-bytes best is 150,528 (by the oracle), so both markers show."""
    needs_matplotlib()
    from chunkplan import frontier_plot
    numels = [60_000] * 5 + [7, 33, 90_000]
    total = sum(numels)
    with chunkplan.Client(server.target) as client:
        frontier = client.frontier(numels, 0.25, 512, 0, dp_degree=4,
                                   objective="peak_rank_bytes",
                                   timeout=TIMEOUT_S)
        seed_pick = client.frontier(numels, 0.25, 512, 0, dp_degree=4,
                                    timeout=TIMEOUT_S).best

    def oracle_points(objective):
        return oracle_frontier({
            "search": {"numels": numels, "dp_degrees": [4], **SEARCH},
            "objective": objective_json(objective)})["points"]
    points = oracle_points("peak_rank_bytes")
    seed = oracle_points("seed_waste")[-1]
    assert len(points) > 1
    assert seed["chunk_size"] != points[-1]["chunk_size"]
    expected = [_xy(points, total), _xy([seed], total),
                _xy(points[-1:], total)]
    series = frontier_plot.plot_series(frontier, seed_pick, total)
    assert [(list(s.chunk_size_mi), list(s.padding_percent),
             list(s.peak_gib)) for s in series] == expected
    figure = frontier_plot.plot(tmp_path / "f.png", frontier, seed_pick,
                                total)
    assert _png_size(tmp_path / "f.png") == PNG_SIZE
    padding_axes, peak_axes = figure.axes
    for axes, y in ((padding_axes, 1), (peak_axes, 2)):
        lines = axes.get_lines()
        assert [line.get_label() for line in lines] == [
            "frontier", "objective's best", "ColossalAI's pick"]
        assert [(list(line.get_xdata()), list(line.get_ydata()))
                for line in lines] == [(e[0], e[y]) for e in
                                       (expected[0], expected[2],
                                        expected[1])]


@pytest.mark.parametrize("objective", ["seed_waste", "layout_padding",
                                       "peak_rank_bytes"])
def test_frontier_emits_the_objectives_best(server, objective):
    out = command_out(server, "frontier", "--dp", "8", "--objective",
                      objective, "--emit", "colossalai")
    lines = out.splitlines()
    assert len(lines) == 2, out
    assert ast.literal_eval(lines[0]) == expected_config_dict(
        oracle_layout(request(8, objective)))
    # Then GeminiPlugin's keywords with it (issue 27): the placement flags
    # at their defaults.
    assert lines[1] == (
        'GeminiPlugin(placement_policy="static", shard_param_frac=1.0, '
        'offload_optim_frac=0.0, offload_param_frac=0.0, '
        'chunk_config_dict=%s)' % lines[0]), out


def test_layout_emits_one_dict_per_degree(server):
    out = command_out(server, "layout", "--dp", "4,8", "--objective",
                      "peak_rank_bytes", "--emit", "colossalai")
    got = [ast.literal_eval(line) for line in out.splitlines()[0::2]]
    assert all(line.startswith("GeminiPlugin(")
               for line in out.splitlines()[1::2]), out
    assert got == [expected_config_dict(oracle_layout(
        request(dp, "peak_rank_bytes"))) for dp in (4, 8)]


@pytest.mark.parametrize("flags", [
    ["frontier", "--json", "--emit", "colossalai"],
    ["layout", "--json", "--emit", "colossalai"],
    ["frontier", "--dp", "4,8"],
    ["frontier", "--objective", "least_waste"],
    ["frontier", "--emit", "deepspeed"],
])
def test_usage_errors_exit_2(flags):
    result = run(*flags, "--hf-config", GPT2_TEST, "--server",
                 "127.0.0.1:1")
    assert result.returncode == 2, result
    assert result.stderr.startswith("INVALID_ARGUMENT: "), result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("objective", ["layout_padding", "peak_rank_bytes"])
def test_plateau_serves_a_layout_objective(server, objective):
    """Issue 29: --engine cpu_plateau walks a layout objective; its table is
    CPU_SWEEP's but for the engine's name."""
    tables = {}
    for engine in ("cpu_plateau", "cpu_sweep"):
        result = run("frontier", "--server", server.target, "--hf-config",
                     GPT2_TEST, *SWEEP, "--objective", objective,
                     "--engine", engine)
        assert result.returncode == 0, result
        assert f"engine          {engine.upper()}," in result.stdout, (
            result.stdout)
        tables[engine] = [line for line in result.stdout.splitlines()
                          if not line.startswith("engine ")]
    assert tables["cpu_plateau"] == tables["cpu_sweep"]


def test_cli_marks_the_seeds_pick_at_gemini_defaults(server, tmp_path,
                                                     monkeypatch):
    """The CLI's seed's pick is the seed's answer at GeminiPlugin's defaults
    (range and minimum 32 Mi elements, the filter on) with the same
    interval, whatever the frontier's own range: the oracle's seed_waste
    frontier's last point at those settings."""
    needs_matplotlib()
    from chunkplan import command, frontier_plot
    drawn = {}

    def capture(path, frontier, seed_pick, total_params, title="",
                device_memory=None, curve=None):
        drawn["seed_pick"] = seed_pick
        drawn["frontier"], drawn["curve"] = frontier, curve
    monkeypatch.setattr(frontier_plot, "plot", capture)
    status = command.main(
        ["frontier", "--server", server.target, "--hf-config", GPT2_TEST,
         "--search-range-m", "0.25", "--search-interval", "65536",
         "--min-chunk-size-m", "0", "--dp", "8", "--objective",
         "peak_rank_bytes", "--plot", str(tmp_path / "f.png")],
        out=open(tmp_path / "out.txt", "w"))
    assert status == 0
    want = oracle_frontier({
        "search": {"numels": oracle_models.describe(GPT2_TEST).numels,
                   "dp_degrees": [8], "search_range_m": 32,
                   "search_interval": 65536, "min_chunk_size_m": 32,
                   "filter_exlarge_params": True},
        "objective": objective_json("seed_waste")})["points"][-1]
    assert drawn["seed_pick"].chunk_size == int(want["chunk_size"])
    assert drawn["seed_pick"].seed_waste == int(want["seed_waste"])
    # --plot draws the faint curve: every candidate of this small grid (5),
    # the frontier's points among them with their own values.
    curve, frontier = drawn["curve"], drawn["frontier"]
    assert curve.complete and curve.candidates == frontier.candidates == 5
    assert curve.candidate == (0, 1, 2, 3, 4)
    for p in frontier.points:
        k = curve.chunk_size.index(p.chunk_size)
        assert (curve.layout_padding[k], curve.peak_rank_bytes[k]) == (
            p.layout_padding, p.peak_rank_bytes)


def test_device_need_is_the_layouts_with_the_reserve(server):
    """Issue 31: one figure, one name. The frontier's best row under
    seed_waste (ColossalAI's pick) and `layout` print the same device need:
    the oracle's most loaded rank's device bytes + gathered chunk +
    --reserve."""
    llama = str(HF_CONFIGS / "llama-2-7b.json")
    answer = oracle_layout({
        "search": {"numels": oracle_models.describe(llama).numels,
                   "dp_degrees": [8], **SEARCH}})
    need = (int(answer["most_loaded_rank"]["device_bytes"]) +
            int(answer["gathered_chunk_bytes"]) + 3 * GIB)
    flags = ["--server", server.target, "--hf-config", llama, *SWEEP,
             "--dp", "8", "--reserve", "3GiB"]
    frontier = run("frontier", *flags)
    layout = run("layout", *flags)
    assert frontier.returncode == 0 and layout.returncode == 0
    header, *rows = [line for line in frontier.stdout.splitlines()
                     if line.startswith("candidate") or
                     re.match(r"^\s*\d+\s+\d+", line)]
    assert header.endswith("device need GiB")
    assert rows[-1].split()[-1] == "%.2f" % (need / GIB), frontier.stdout
    assert re.search(r"(?m)^device need\s+%.2f GiB \(" % (need / GIB),
                     layout.stdout), layout.stdout
    assert re.search(r"(?m)^reserve\s+3\.00 GiB", frontier.stdout)
