"""The frontier picture (chunkplan.frontier_plot, Frontier.plot), read back
from its matplotlib objects: x in Mi elements (2**20) with no offset, both
y axes from zero, the device-memory line where given, ColossalAI's pick
drawn over (and larger than) the objective's best, one legend for the
figure. The points are made here; what is checked is how they are
drawn. Then the faint curve (Frontier.plot with a client, against the real
server): a one- or two-point frontier over 600 candidates, the sampled
candidates' padding and GiB equal to tests/oracle/layout_oracle.py's
objective_values at those candidates, under the frontier (zorder), named
in the legend as a sample (or as every candidate of a small grid)."""

import importlib.util

import pytest

from chunkplan.frontier_result import Frontier, FrontierPoint
from chunkplan.layout_request import build_layout_request

MI = 2**20
GIB = 2**30


def needs_matplotlib():
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib not installed (Debian: python3-matplotlib)")


def point(candidate, chunk_size, padding, peak):
    return FrontierPoint(candidate=candidate, chunk_size=chunk_size,
                         value=padding, seed_waste=padding,
                         layout_padding=padding, peak_rank_bytes=peak)


# Mixtral-like: peaks 77.242 .. 77.275 GiB, chunk sizes near 1e8 elements
# (where matplotlib would print a "1e8" offset).
NUMELS = [100_000_000, 90_000_000, 50_000_000]
TOTAL = sum(NUMELS)
POINTS = (point(0, 100_663_296, 30_000_000, int(77.275 * GIB)),
          point(5, 104_857_600, 20_000_000, int(77.260 * GIB)),
          point(9, 109_051_904, 10_000_000, int(77.242 * GIB)))
PICK = POINTS[2]  # the pick where the best is: both must show


def frontier(request=None):
    return Frontier(points=POINTS, engine="CPU_SWEEP", candidates=10,
                    search_nanos=1, response=None, request=request)


@pytest.fixture
def figure(tmp_path):
    needs_matplotlib()
    figure = frontier(build_layout_request(NUMELS, 32, 1024)).plot(
        tmp_path / "f.png", PICK, device_memory=80 * GIB, title="t")
    figure.canvas.draw()  # tick labels and offsets are made when drawn
    return figure


def test_x_is_in_mi_elements_without_offset(figure):
    padding_axes, peak_axes = figure.axes
    frontier_line = peak_axes.get_lines()[0]
    assert list(frontier_line.get_xdata()) == [p.chunk_size / MI
                                               for p in POINTS]
    assert "Mi elements" in peak_axes.get_xlabel()
    for axes in figure.axes:
        for axis in (axes.xaxis, axes.yaxis):
            assert axis.get_major_formatter().get_offset() == ""
            assert axis.get_offset_text().get_text() == ""


def test_both_y_axes_start_at_zero_and_say_so(figure):
    for axes in figure.axes:
        assert axes.get_ylim()[0] == 0
        assert "axis starts at 0" in axes.get_ylabel()
    padding_axes, peak_axes = figure.axes
    assert list(padding_axes.get_lines()[0].get_ydata()) == [
        100 * p.layout_padding / TOTAL for p in POINTS]
    assert list(peak_axes.get_lines()[0].get_ydata()) == [
        p.peak_rank_bytes / GIB for p in POINTS]
    # every point is inside the drawn range
    assert peak_axes.get_ylim()[1] > 80


def test_device_memory_line(figure):
    padding_axes, peak_axes = figure.axes
    lines = {line.get_label(): line for line in peak_axes.get_lines()}
    device = lines["device memory (80.00 GiB)"]
    assert list(device.get_ydata()) == [80.0, 80.0]
    assert all(not line.get_label().startswith("device")
               for line in padding_axes.get_lines())


def test_pick_shows_over_the_best(figure):
    for axes in figure.axes:
        lines = {line.get_label(): line for line in axes.get_lines()}
        pick, best = lines["ColossalAI's pick"], lines["objective's best"]
        assert list(pick.get_xdata()) == list(best.get_xdata())
        assert pick.get_zorder() > best.get_zorder()
        assert pick.get_markersize() > best.get_markersize()
        assert pick.get_fillstyle() == "none"


def test_one_legend_for_the_figure(figure):
    assert len(figure.legends) == 1
    assert all(axes.get_legend() is None for axes in figure.axes)
    texts = [t.get_text() for t in figure.legends[0].get_texts()]
    assert texts == ["frontier", "objective's best", "ColossalAI's pick",
                     "device memory (80.00 GiB)"]


def test_without_pick_or_device_memory(tmp_path):
    needs_matplotlib()
    figure = frontier().plot(tmp_path / "f.png", total_params=TOTAL)
    for axes in figure.axes:
        assert [line.get_label() for line in axes.get_lines()] == [
            "frontier", "objective's best"]


def test_plot_needs_a_total_without_the_request(tmp_path):
    needs_matplotlib()
    with pytest.raises(ValueError, match="total_params"):
        frontier().plot(tmp_path / "f.png")


# The faint curve (chunkplan.frontier_curve): a small model whose frontier
# has one or two points (by the oracle) over 600 candidates. Degree 2 for
# the first four parameters (swept), 3 for the last (its group, 240
# elements, is below the 1,049-element minimum: kept gathered); the lcm is
# 6. Interval 7 >= 6 pins the grid's start; interval 1 < 6 leaves several
# starts, and only the candidates they agree on are drawn.
CURVE_PARAMS = [(2431, 2), (358, 2), (1144, 2), (582, 2), (240, 3)]
CURVE_LCM = 6
CURVE_SAMPLES = 40
CURVE_TIMEOUT_S = 60


def _curve_request(objective, interval):
    return {"search": {"numels": [n for n, _ in CURVE_PARAMS],
                       "dp_degrees": [d for _, d in CURVE_PARAMS],
                       "search_range_m": 600 * interval / MI,
                       "search_interval": interval,
                       "min_chunk_size_m": 0.001},
            "objective": "OBJECTIVE_" + objective.upper()}


def _oracle_grid(request):
    """(start, candidates) of the oracle's grid: its first frontier point,
    candidate 0, reported at its grid size C."""
    from layout_cases import layout_oracle
    answer = layout_oracle.frontier(request, point_chunk_size="grid")
    assert answer["points"][0]["candidate"] == "0", answer
    return int(answer["points"][0]["chunk_size"]), int(answer["candidates"])


def _round_up(size, step):
    return -(-size // step) * step


@pytest.fixture(scope="module")
def curve_client(server):
    import chunkplan
    with chunkplan.Client(server.target) as client:
        yield client


@pytest.mark.parametrize("objective,interval", [
    ("peak_rank_bytes", 7), ("layout_padding", 7), ("layout_padding", 1)])
def test_curve_is_the_oracles_values_under_the_frontier(
        curve_client, tmp_path, objective, interval):
    needs_matplotlib()
    from layout_cases import layout_oracle
    request = _curve_request(objective, interval)
    start, candidates = _oracle_grid(request)
    frontier = curve_client.frontier(
        CURVE_PARAMS, request["search"]["search_range_m"], interval, 0.001,
        objective=objective, timeout=CURVE_TIMEOUT_S)
    assert frontier.candidates == candidates > 10 * CURVE_SAMPLES
    assert len(frontier.points) <= 2
    figure = frontier.plot(tmp_path / "f.png", client=curve_client,
                           samples=CURVE_SAMPLES)
    total = sum(n for n, _ in CURVE_PARAMS)
    # The grid's C' of each candidate, by the oracle's start.
    grid = {}
    for i in range(candidates):
        grid.setdefault(_round_up(start + i * interval, CURVE_LCM), i)
    padding_axes, peak_axes = figure.axes
    faint = {axes: axes.get_lines()[0] for axes in figure.axes}
    xs = list(faint[peak_axes].get_xdata())
    assert xs == list(faint[padding_axes].get_xdata()) == sorted(set(xs))
    assert len(xs) > 2 * len(frontier.points)
    for k, x in enumerate(xs):
        size = round(x * MI)
        assert x == size / MI and size in grid, x
        _, padding, peak = layout_oracle.objective_values(
            request, start + grid[size] * interval)
        assert faint[padding_axes].get_ydata()[k] == 100 * padding / total
        assert faint[peak_axes].get_ydata()[k] == peak / GIB
    for p in frontier.points:
        assert p.chunk_size / MI in xs
    if interval >= CURVE_LCM:
        # One start: candidates k * (N - 1) / (S - 1), rounded, for k < S
        # (both ends), and the points'.
        chosen = {round(k * (candidates - 1) / (CURVE_SAMPLES - 1))
                  for k in range(CURVE_SAMPLES)}
        chosen |= {p.candidate for p in frontier.points}
        assert xs == [_round_up(start + i * interval, CURVE_LCM) / MI
                      for i in sorted(chosen)]
    for axes in figure.axes:
        lines = {line.get_label(): line for line in axes.get_lines()}
        assert lines["frontier"].get_zorder() > faint[axes].get_zorder()
        assert faint[axes].get_alpha() < 1
    label = faint[peak_axes].get_label()
    sampled = len(xs) if interval >= CURVE_LCM else int(label.split()[3])
    assert len(xs) <= sampled <= CURVE_SAMPLES + len(frontier.points)
    assert label == f"a sample of {sampled} of {candidates} candidates"
    texts = [t.get_text() for t in figure.legends[0].get_texts()]
    assert texts == [label, "frontier", "objective's best"]


def test_a_small_grid_is_drawn_whole(curve_client, tmp_path):
    """Fewer candidates than samples: every candidate, said so."""
    needs_matplotlib()
    frontier = curve_client.frontier(
        CURVE_PARAMS, 30 * 7 / MI, 7, 0.001, objective="layout_padding",
        timeout=CURVE_TIMEOUT_S)
    figure = frontier.plot(tmp_path / "f.png", client=curve_client)
    faint = figure.axes[1].get_lines()[0]
    assert faint.get_label() == "every candidate (31)"
    assert len(faint.get_xdata()) == frontier.candidates == 31
