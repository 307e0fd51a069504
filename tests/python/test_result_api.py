"""The documented result API: Layout.config_dict and
Layout.colossalai_kwargs() (GeminiPlugin's keyword arguments) carry the
oracle's configs and the settings asked for; Frontier.plot draws the
frontier's own points; both work the same from a LocalClient."""

import importlib.util
import os

import pytest

import chunkplan
from chunkplan.layout_result import Layout
from layout_cases import oracle_layout

TIMEOUT_S = 60
NUMELS = [60_000] * 5 + [7, 33, 90_000]
SEARCH = {"search_range_m": 0.25, "search_interval": 512,
          "min_chunk_size_m": 0}


def oracle_config_dict(settings_json):
    answer = oracle_layout({"search": {"numels": NUMELS, "dp_degrees": [4],
                                       **SEARCH},
                            "gemini": settings_json})
    return {int(g["dp_degree"]): {"chunk_size": int(g["chunk_size"]),
                                  "keep_gathered": bool(g.get(
                                      "keep_gathered", False))}
            for g in answer["groups"]}


@pytest.fixture(params=["server", "local"])
def client(request):
    if request.param == "local":
        cli = os.environ.get("CHUNKPLAN_CLI", "")
        if not os.access(cli, os.X_OK):
            pytest.skip("chunkplan not built (CHUNKPLAN_CLI)")
        with chunkplan.LocalClient(cli) as c:
            yield c
    else:
        with chunkplan.Client(request.getfixturevalue("server").target) as c:
            yield c


def test_colossalai_kwargs(client):
    layout = client.layout(NUMELS, 0.25, 512, 0, dp_degree=4,
                           precision="bf16", master_weights=False,
                           gradient_accumulation=True, pin_memory=False,
                           timeout=TIMEOUT_S)
    expected = oracle_config_dict({
        "precision": "PRECISION_BF16", "master_weights": False,
        "gradient_accumulation": True, "pin_memory": False})
    assert layout.config_dict == expected
    assert layout.colossalai_kwargs() == {
        "chunk_config_dict": expected, "precision": "bf16",
        "master_weights": False, "enable_gradient_accumulation": True,
        "pin_memory": False}
    # GeminiPlugin takes them as keywords; a copy, not the Layout's own
    kwargs = layout.colossalai_kwargs()
    kwargs["chunk_config_dict"][4]["chunk_size"] = 1
    assert layout.config_dict == expected


def test_a_layout_without_its_request_says_so():
    layout = Layout.from_response(chunkplan.v1.chunk_search_pb2
                                  .LayoutResponse())
    with pytest.raises(ValueError, match="colossalai_kwargs"):
        layout.colossalai_kwargs()


def test_frontier_plot(client, tmp_path):
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib not installed (Debian: python3-matplotlib)")
    frontier = client.frontier(NUMELS, 0.25, 512, 0, dp_degree=4,
                               objective="peak_rank_bytes",
                               timeout=TIMEOUT_S)
    figure = frontier.plot(tmp_path / "f.png", device_memory=2**30)
    assert (tmp_path / "f.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    padding_axes = figure.axes[0]
    line = padding_axes.get_lines()[0]
    assert list(line.get_ydata()) == [100 * p.layout_padding / sum(NUMELS)
                                      for p in frontier.points]
