"""The verdict's picture (chunkplan.verdict_plot: Plan.plot, Layout.plot),
drawn from responses recorded from a real chunkplan-server for the
newcomer's case (Qwen2.5-7B on 4 x RTX 4090, sequence 2048, micro-batch 1,
activation checkpointing; tests/python/data/newcomer_*_response.json) and
read back from its matplotlib objects: one stacked bar an option in the
server's order, each part the server's field in GiB (the chunks on the
device, the gathered chunk, the activations, the transients, the reserve),
the server's need and words above each bar, and the device memory's and
the margin's lines at the server's figures."""

import importlib.util
import json
import pathlib

import pytest
from google.protobuf import json_format

from chunkplan.layout_result import Layout
from chunkplan.plan_result import Plan
from chunkplan.v1 import chunk_search_pb2 as pb

DATA = pathlib.Path(__file__).resolve().parent / "data"
GIB = 2**30


def needs_matplotlib():
    if importlib.util.find_spec("matplotlib") is None:
        pytest.skip("matplotlib not installed (Debian: python3-matplotlib)")


def recorded(name, message):
    return json_format.Parse((DATA / name).read_text(), message,
                             ignore_unknown_fields=True)


def stacks(axes):
    """The bars' heights (GiB) per part label, in drawing order."""
    out = {}
    for container in axes.containers:
        out[container.get_label()] = [p.get_height() for p in container]
    return out


def lines(axes):
    return {line.get_label(): line.get_ydata()[0] for line in axes.lines}


def test_plan_plot_draws_the_servers_fields(tmp_path):
    needs_matplotlib()
    response = recorded("newcomer_plan_response.json", pb.PlanResponse())
    plan = Plan.from_response(response)
    path = tmp_path / "plan.png"
    figure = plan.plot(str(path), title="Qwen2.5-7B, 4 x RTX 4090")
    assert path.stat().st_size > 0
    axes = figure.axes[0]
    got = stacks(axes)
    options = response.options
    want = {
        "chunks on the device": [o.most_loaded_rank.device_bytes / GIB
                                 for o in options],
        "gathered chunk": [o.gathered_chunk_bytes / GIB for o in options],
        "activations (ESTIMATE)": [o.activation_bytes / GIB
                                   for o in options],
        "transients": [getattr(o, "transient_bytes", 0) / GIB
                       for o in options],
        "reserve": [o.verdict.reserve_bytes / GIB for o in options],
    }
    assert got == pytest.approx(want)
    assert list(got) == list(want)  # bottom to top
    # Every part of the stack is in the server's need.
    for i, o in enumerate(options):
        assert sum(v[i] for v in got.values()) * GIB == pytest.approx(
            o.verdict.device_need_bytes)
    verdict = options[0].verdict
    memory = verdict.device_memory_bytes / GIB
    usable = (verdict.device_memory_bytes - verdict.margin_bytes) / GIB
    drawn = lines(axes)
    assert drawn["device memory %.2f GiB" % memory] == pytest.approx(memory)
    assert drawn["device memory less the margin (margin 5%% (%.2f GiB)) "
                 "%.2f GiB" % (verdict.margin_bytes / GIB, usable)] == \
        pytest.approx(usable)
    labels = [t.get_text() for t in axes.texts]
    assert labels == ["%.2f GiB\n%s" % (
        o.verdict.device_need_bytes / GIB,
        "fits" if o.verdict.fits else
        "tight" if o.verdict.tight else "does not fit") for o in options]
    # The server's order: what fits first.
    fits = [o.verdict.fits for o in options]
    assert fits == sorted(fits, reverse=True) and fits[0] and not fits[-1]
    ticks = [t.get_text() for t in axes.get_xticklabels()]
    assert ticks[0].startswith("1: world 4\n")
    assert axes.get_ylim()[0] == 0


def test_layout_plot_draws_one_bar(tmp_path):
    needs_matplotlib()
    response = recorded("newcomer_layout_response.json",
                        pb.LayoutResponse())
    layout = Layout.from_response(response)
    figure = layout.plot(str(tmp_path / "layout.png"))
    got = stacks(figure.axes[0])
    assert got["chunks on the device"] == pytest.approx(
        [response.most_loaded_rank.device_bytes / GIB])
    assert got["activations (ESTIMATE)"] == pytest.approx(
        [response.activation_bytes / GIB])
    assert sum(v[0] for v in got.values()) * GIB == pytest.approx(
        response.verdict.device_need_bytes)
    assert "device memory %.2f GiB" % (
        response.verdict.device_memory_bytes / GIB) in lines(figure.axes[0])


def test_a_plan_without_options_is_refused(tmp_path):
    needs_matplotlib()
    with pytest.raises(ValueError):
        Plan.from_response(pb.PlanResponse()).plot(str(tmp_path / "x.png"))


def test_the_recording_is_the_newcomers_case():
    body = json.loads((DATA / "newcomer_plan_response.json").read_text())
    assert {o["world_size"] for o in body["options"]} == {4}
    assert body["options"][0]["verdict"]["device_memory_bytes"] == str(
        24564 << 20)
