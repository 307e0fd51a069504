"""The frontier picture (chunkplan.frontier_plot, Frontier.plot), read back
from its matplotlib objects: x in Mi elements (2**20) with no offset, both
y axes from zero, the device-memory line where given, ColossalAI's pick
drawn over (and larger than) the objective's best, one legend for the
figure. The points are made here; what is checked is how they are
drawn."""

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
