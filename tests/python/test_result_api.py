"""The documented result API: Layout.config_dict and
Layout.colossalai_kwargs() (GeminiPlugin's keyword arguments) carry the
oracle's configs and the settings asked for; Layout.table() and
Frontier.table() print the server's fields (the oracle's figures);
Frontier.plot draws the frontier's own points; all work the same from a
LocalClient. (Plan's: test_plan.py.)"""

import importlib.util
import os
import re

import pytest

import chunkplan
from chunkplan.layout_result import Layout
from frontier_cases import oracle_frontier
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


def gib(nbytes):
    return "%.2f" % (int(nbytes) / 2**30)


def test_layout_table_prints_the_servers_fields(client):
    request = {"search": {"numels": NUMELS, "dp_degrees": [4], **SEARCH},
               "gemini": {"offload_optim_frac": 0.5}}
    answer = oracle_layout(request)
    out = client.layout(NUMELS, 0.25, 512, 0, dp_degree=4,
                        offload_optim_frac=0.5, timeout=TIMEOUT_S).table()
    for group in answer["groups"]:
        assert re.search(r"(?m)^\s+4\s+%s\s+no\s+%d\s+%s$" % (
            group["chunk_size"], len(group["chunks"]), group["padding"]),
            out), out
    assert "layout padding  %s elements" % answer["layout_padding"] in out
    assert ("search waste    %s elements" %
            answer["search"]["min_chunk_waste"]) in out
    for name, part in (("device total", "device_bytes"),
                       ("host total", "host_bytes")):
        assert re.search(r"(?m)^%s\s+%s\s+%s\s+%s$" % (
            name, gib(answer["most_loaded_rank"][part]),
            gib(answer["most_loaded_rank_least"][part]),
            gib(answer["least_loaded_rank"][part])), out), out
    p = answer["placement"]
    assert "offloaded       %s .. %s chunks" % (
        p["offloaded_chunks"], p["offloaded_chunks_max"]) in out
    for note in p.get("notes", []):
        assert "note            " + note in out
    # Nothing judged here: no need, no verdict.
    assert "fits" not in out and "need" not in out


def test_frontier_table_prints_the_servers_points(client):
    frontier = client.frontier(NUMELS, 0.25, 512, 0, dp_degree=4,
                               objective="peak_rank_bytes",
                               timeout=TIMEOUT_S)
    points = oracle_frontier({
        "search": {"numels": NUMELS, "dp_degrees": [4], **SEARCH},
        "objective": "OBJECTIVE_PEAK_RANK_BYTES"})["points"]
    out = frontier.table()
    assert "objective       peak_rank_bytes" in out
    assert "value (bytes)" in out
    rows = [line.split() for line in out.splitlines()
            if re.match(r"^\s*\d+\s+\d+", line)]
    assert rows == [[p["candidate"], p["chunk_size"], p["value"],
                     p["seed_waste"], p["layout_padding"],
                     gib(p["peak_rank_bytes"])] for p in points]


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
