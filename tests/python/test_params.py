"""Any model by its parameter list (issue 43, item 3): chunkplan.params
writes a real torch module's named_parameters() as `--params` reads them
(a tied weight once, ColossalAI's ignored parameters left out, frozen ones
marked), and the command line plans the list end to end: the total the
server states is torch's own count, the frozen bytes are the frozen
parameters' (2 bytes each: Gemini's fp16/bf16), and the [name, shape] form
answers as the {"name", "numel"} form. Skips, saying "torch not installed"
or "chunkplan not built", without them."""

import json
import os
import subprocess

import pytest

from chunkplan import params
from torch_modules import (TIED_LM_FROZEN, TIED_LM_NUMELS, module_of_numels,
                           require_torch, tied_lm)

PLAN = ("--local", "--device-memory", "80GiB", "--gpus-per-node", "8",
        "--world-sizes", "8", "--format", "json")


def cli():
    path = os.environ.get("CHUNKPLAN_CLI", "")
    if not os.access(path, os.X_OK):
        pytest.skip(f"chunkplan not built (CHUNKPLAN_CLI={path!r})")
    return path


def run(*args):
    return subprocess.run([cli(), *args], capture_output=True, text=True,
                          timeout=300)


def decoder(torch, device):
    """A small decoder-only transformer built from torch's own layers: an
    embedding, a position table, four TransformerEncoderLayers, a final
    LayerNorm and a head tied to the embedding."""

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(5000, 256, device=device)
            self.position = torch.nn.Parameter(
                torch.empty(512, 256, device=device))
            self.layers = torch.nn.ModuleList(
                torch.nn.TransformerEncoderLayer(256, 4, 1024, device=device)
                for _ in range(4))
            self.norm = torch.nn.LayerNorm(256, device=device)
            self.head = torch.nn.Linear(256, 5000, bias=False, device=device)
            self.head.weight = self.embed.weight

    return Decoder()


def test_the_list_is_named_parameters_tied_once_frozen_marked():
    model = tied_lm()
    listed = params.param_list(model)
    assert [p["numel"] for p in listed] == TIED_LM_NUMELS
    assert [p.get("requires_grad", True) is False for p in listed] == \
        TIED_LM_FROZEN
    assert [p["name"] for p in listed] == [
        name for name, _ in model.named_parameters()]
    assert "head.weight" not in [p["name"] for p in listed]


def test_colossalai_ignored_parameters_are_left_out():
    model = module_of_numels([5, 6, 7, 8], ignored=(1, 3))
    assert [p["numel"] for p in params.param_list(model)] == [5, 7]


def test_meta_device_and_the_file(tmp_path):
    torch = require_torch()
    model = decoder(torch, "meta")
    path = tmp_path / "params.json"
    written = params.write_params(model, str(path))
    assert json.loads(path.read_text()) == written
    assert sum(p["numel"] for p in written) == sum(
        p.numel() for p in model.parameters())


def test_a_torch_module_plans_end_to_end(tmp_path):
    torch = require_torch()
    model = decoder(torch, "meta")
    model.position.requires_grad_(False)
    path = tmp_path / "params.json"
    params.write_params(model, str(path))
    done = run("plan", "--params", str(path), *PLAN)
    assert done.returncode in (0, 3), done.stderr
    plan = json.loads(done.stdout)
    torch_total = sum(p.numel() for p in model.parameters())
    assert int(plan["model_report"]["total_param_size"]) == torch_total
    assert plan["options"], plan
    frozen = model.position.numel()
    for option in plan["options"]:
        assert int(option["most_loaded_rank"]["frozen_bytes"]) == 2 * frozen
    # The table states the same total in its header.
    table = run("plan", "--params", str(path), *PLAN[:-2])
    assert table.returncode in (0, 3), table.stderr
    assert table.stdout.splitlines()[0] == \
        "parameters    " + format(torch_total, ",")


def test_the_shape_form_answers_as_the_numel_form(tmp_path):
    torch = require_torch()
    model = decoder(torch, "meta")
    by_numel = tmp_path / "numel.json"
    params.write_params(model, str(by_numel))
    by_shape = tmp_path / "shape.json"
    by_shape.write_text(json.dumps(
        [[name, list(p.shape)] for name, p in model.named_parameters()]))
    answers = []
    for path in (by_numel, by_shape):
        done = run("search", "--params", str(path), "--local")
        assert done.returncode == 0, done.stderr
        answers.append(json.loads(done.stdout))
    for answer in answers:
        answer.pop("search_nanos")
    assert answers[0] == answers[1]


def test_the_library_freezes_a_list_by_pattern_on_the_server(server):
    """Client.layout of params.model_config(module, freeze=...): the server
    matches the pattern on the list's names; the answer is the layout
    oracle's for the mask torch holds after the user's own
    requires_grad_(False) over re.search matches."""
    import re

    import chunkplan
    torch = require_torch()
    import oracle_cases  # noqa: F401  (puts tests/oracle on the path)
    import layout_oracle as oracle
    pattern = r"layers\.[02]\.|^norm\."
    model = decoder(torch, "meta")
    config = params.model_config(model, freeze=pattern)
    named = list(model.named_parameters())
    for name, p in named:
        if re.search(pattern, name):
            p.requires_grad_(False)
    mask = [not p.requires_grad for _, p in named]
    numels = [p.numel() for _, p in named]
    assert any(mask) and not all(mask)
    search = dict(search_range_m=0.5, search_interval=1024,
                  min_chunk_size_m=0)
    expected = oracle.layout({"search": dict(search, numels=numels,
                                             dp_degrees=[4]),
                              "frozen": mask})
    assert "error" not in expected
    with chunkplan.Client(server.target) as client:
        got = client.layout(config, dp_degree=4, **search)
        assert got.most_loaded_rank.frozen_bytes == 2 * sum(
            n for n, f in zip(numels, mask) if f)
        assert got.most_loaded_rank.frozen_bytes == int(
            expected["most_loaded_rank"]["frozen_bytes"])
        assert got.most_loaded_rank.device_bytes == int(
            expected["most_loaded_rank"]["device_bytes"])
        assert got.layout_padding == int(expected["layout_padding"])
        assert [len(g.chunks) for g in got.groups] == [
            len(g["chunks"]) for g in expected["groups"]]
        with pytest.raises(chunkplan.InvalidArgumentError,
                           match="matches no parameter"):
            client.layout(params.model_config(model, freeze="q_proj"),
                          dp_degree=4, **search)
