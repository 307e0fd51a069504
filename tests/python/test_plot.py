"""`python3 -m chunkplan.plot` (chunkplan.plot), the one command that needs
Python: it draws what the server answers. Against the real server and the
layout oracle: the picture's points are the oracle's frontier, ColossalAI's
pick the oracle's seed_waste best at GeminiPlugin's settings (range and
minimum 32 Mi, the filter on, the interval --hidden-dim), the faint curve
every candidate of a small grid; the PNG is FIGURE_PIXELS; a failed call is
one "CODE: message" line and exit 1, a usage error exit 2. Skips, saying
"matplotlib not installed" (Debian: python3-matplotlib), without it."""

import importlib.util
import struct
import subprocess
import sys

import pytest

import chunkplan
from chunkplan import frontier_plot, plot
from frontier_cases import objective_json, oracle_frontier
from oracle_cases import HF_CONFIGS
import models as oracle_models  # noqa: E402  (tests/oracle/models)

TIMEOUT_S = 120
GPT2_TEST = str(HF_CONFIGS / "colossalai-gpt2-test.json")
GIB = 2**30
SEARCH = {"search_range_m": 0.25, "search_interval": 512,
          "min_chunk_size_m": 0}


@pytest.fixture(autouse=True)
def needs_matplotlib():
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib not installed (Debian: python3-matplotlib)")


def png_size(path):
    """(width, height) from a PNG's IHDR; asserts the signature."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def run(*args):
    return subprocess.run([sys.executable, "-m", "chunkplan.plot", *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def test_draws_a_png_of_the_figures_size(server, tmp_path):
    path = tmp_path / "frontier.png"
    result = run("--hf-config", GPT2_TEST, "--dp", "8", "--objective",
                 "layout_padding", "--hidden-dim", "65536", "--samples", "8",
                 "--device-memory-bytes", str(GIB), "--server",
                 server.target, str(path))
    assert result.returncode == 0, result.stderr
    assert png_size(path) == frontier_plot.FIGURE_PIXELS
    assert result.stdout.startswith(f"{path}: "), result.stdout
    assert result.stdout.count("\n") == 1


def test_marks_the_seeds_pick_at_gemini_defaults(server, tmp_path,
                                                 monkeypatch):
    """The points are the oracle's peak_rank_bytes frontier and the pick
    its seed_waste best, both at GeminiPlugin's search with interval
    65536 (513 candidates); the curve, every candidate sampled (8 of them
    plus the points), carries the points' own values."""
    drawn = {}

    def capture(path, frontier, pick, total, title="", device_memory=None,
                curve=None):
        drawn.update(frontier=frontier, pick=pick, total=total,
                     device_memory=device_memory, curve=curve, title=title)
    monkeypatch.setattr(frontier_plot, "plot", capture)
    status = plot.main(["--hf-config", GPT2_TEST, "--dp", "8", "--objective",
                        "peak_rank_bytes", "--hidden-dim", "65536",
                        "--samples", "8", "--device-memory-bytes", "1000",
                        "--server", server.target, str(tmp_path / "f.png")],
                       out=open(tmp_path / "out.txt", "w"))
    assert status == 0
    numels = oracle_models.describe(GPT2_TEST).numels
    search = {"numels": numels, "dp_degrees": [8], "search_range_m": 32,
              "search_interval": 65536, "min_chunk_size_m": 32,
              "filter_exlarge_params": True}
    points = oracle_frontier({"search": search, "objective":
                              objective_json("peak_rank_bytes")})["points"]
    pick = oracle_frontier({"search": search, "objective":
                            objective_json("seed_waste")})["points"][-1]
    assert [(p.chunk_size, p.peak_rank_bytes)
            for p in drawn["frontier"].points] == [
        (int(p["chunk_size"]), int(p["peak_rank_bytes"])) for p in points]
    assert (drawn["pick"].chunk_size, drawn["pick"].seed_waste) == (
        int(pick["chunk_size"]), int(pick["seed_waste"]))
    assert drawn["total"] == sum(numels)
    assert drawn["device_memory"] == 1000
    assert "objective peak_rank_bytes" in drawn["title"]
    curve = drawn["curve"]
    assert curve.candidates == 513 and not curve.complete
    for p in drawn["frontier"].points:
        k = curve.chunk_size.index(p.chunk_size)
        assert (curve.layout_padding[k], curve.peak_rank_bytes[k]) == (
            p.layout_padding, p.peak_rank_bytes)


def test_plotted_points_are_the_responses(server, tmp_path):
    """plot_series and the drawn Line2D data: the oracle's frontier, its
    last point as the objective's best and the seed_waste frontier's last
    as the seed's pick. These sizes at dp 4: the seed picks 210,432, the
    peak-bytes best is 150,528 (by the oracle), so both markers show."""
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

    def xy(points):
        return ([int(p["chunk_size"]) / 2**20 for p in points],
                [100 * int(p["layout_padding"]) / total for p in points],
                [int(p["peak_rank_bytes"]) / GIB for p in points])
    points = oracle_points("peak_rank_bytes")
    seed = oracle_points("seed_waste")[-1]
    assert len(points) > 1
    assert seed["chunk_size"] != points[-1]["chunk_size"]
    expected = [xy(points), xy([seed]), xy(points[-1:])]
    series = frontier_plot.plot_series(frontier, seed_pick, total)
    assert [(list(s.chunk_size_mi), list(s.padding_percent),
             list(s.peak_gib)) for s in series] == expected
    figure = frontier_plot.plot(tmp_path / "f.png", frontier, seed_pick,
                                total)
    assert png_size(tmp_path / "f.png") == frontier_plot.FIGURE_PIXELS
    for axes, y in zip(figure.axes, (1, 2)):
        lines = axes.get_lines()
        assert [line.get_label() for line in lines] == [
            "frontier", "objective's best", "ColossalAI's pick"]
        assert [(list(line.get_xdata()), list(line.get_ydata()))
                for line in lines] == [(e[0], e[y]) for e in
                                       (expected[0], expected[2],
                                        expected[1])]


def test_a_failed_call_is_one_line(tmp_path):
    result = run("--hf-config", GPT2_TEST, "--server", "127.0.0.1:1",
                 str(tmp_path / "f.png"))
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1].startswith("UNAVAILABLE: ")
    assert not (tmp_path / "f.png").exists()


@pytest.mark.parametrize("args", [
    ["--server", "127.0.0.1:1", "f.png"],                       # no model
    ["--hf-config", GPT2_TEST, "f.png"],                        # no target
    ["--hf-config", GPT2_TEST, "--local", "--server", "x:1", "f.png"],
    ["--hf-config", GPT2_TEST, "--local", "--objective", "least", "f.png"],
    ["--hf-config", GPT2_TEST, "--local"],                      # no file
])
def test_usage_errors_exit_2(args):
    result = run(*args)
    assert result.returncode == 2
    assert result.stderr.startswith("INVALID_ARGUMENT: "), result.stderr
    assert result.stdout == ""
