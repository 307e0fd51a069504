#!/usr/bin/python3
"""End-to-end tests of issue 43, item 3's "frozen by name pattern works on
it": a parameter list dumped from a real torch module's named_parameters()
(chunkplan.params.write_params) planned with `--freeze REGEX` and
`--train REGEX` by the `chunkplan` command line against a real
chunkplan-server, whose own name matching (the families' rule) applies.

  FreezeServerTest  layout and frontier with --freeze / --train equal the
                    layout oracle (tests/oracle/layout_oracle.py) given the
                    frozen mask that torch itself holds after the user's
                    requires_grad_(False) over re.search matches; plan's
                    frozen bytes on every option are torch's frozen
                    elements at Gemini's 2 bytes each; a list whose
                    requires_grad marks some frozen takes --train beside
                    them; search counts frozen parameters as ColossalAI's
                    search does (the search oracle on every numel)
  RefusalTest       a pattern that matches no name, or does not compile,
                    and LoRA on a list: exit 1, INVALID_ARGUMENT naming it,
                    on every command, as for a family
  LocalTest         --local (the same service code in this process) answers
                    as the server

Expected values come from torch and the oracles, never from chunkplan.
Skips, saying so, without torch (Debian: python3-torch), the Python package
(PYTHONPATH=<build>/python) or the binaries.

  CHUNKPLAN_CLI=build/bin/chunkplan \\
  CHUNKPLAN_SERVER=build/bin/chunkplan-server PYTHONPATH=build/python \\
      /usr/bin/python3 tests/e2e/params_freeze_cli_test.py -v
"""

import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_test import (FAILED, CliTestCase, frontier_answer,  # noqa: E402
                      layout_answer, layout_oracle, oracle, run)

# Small sweeps (the oracles are Python) that still cut the model into
# several chunks: no kept-gathered minimum.
SWEEP = ("--search-range-m", "0.5", "--search-interval", "1024",
         "--min-chunk-size-m", "0")
SEARCH = {"search_range_m": 0.5, "search_interval": 1024,
          "min_chunk_size_m": 0}
CLUSTER = ("--device-memory", "80GiB", "--gpus-per-node", "8",
           "--world-sizes", "8,16")
HALF_BYTES = 2  # Gemini keeps a frozen parameter whole in fp16 / bf16


def require():
    """(torch, chunkplan.params), or a skip saying which is missing."""
    try:
        import torch
    except ImportError:
        raise unittest.SkipTest("torch not installed (python3-torch)")
    try:
        from chunkplan import params
    except ImportError as error:
        raise unittest.SkipTest(f"chunkplan package not importable: {error}")
    return torch, params


def decoder(torch):
    """A small decoder-only transformer from torch's own layers, on the meta
    device: an embedding, a learned position table, three
    TransformerEncoderLayers, a final LayerNorm and a head tied to the
    embedding (named_parameters() yields it once)."""

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(3000, 192, device="meta")
            self.position = torch.nn.Parameter(
                torch.empty(256, 192, device="meta"))
            self.layers = torch.nn.ModuleList(
                torch.nn.TransformerEncoderLayer(192, 4, 768, device="meta")
                for _ in range(3))
            self.norm = torch.nn.LayerNorm(192, device="meta")
            self.head = torch.nn.Linear(192, 3000, bias=False, device="meta")
            self.head.weight = self.embed.weight

    return Decoder()


def train_as_the_user_does(model, freeze=None, train=None):
    """What a trainer writes: with `train`, every parameter frozen and
    those whose name re.search finds it in trained again; with `freeze`,
    those it finds frozen. Returns torch's own frozen mask and numels, in
    named_parameters() order."""
    named = list(model.named_parameters())
    if train:
        for name, p in named:
            p.requires_grad_(bool(re.search(train, name)))
    if freeze:
        for name, p in named:
            if re.search(freeze, name):
                p.requires_grad_(False)
    return ([not p.requires_grad for _, p in named],
            [p.numel() for _, p in named])


def list_file(tmp, model=None):
    """`model` (default: a fresh decoder) dumped by chunkplan.params into
    params.json under `tmp`; its path."""
    torch, params = require()
    path = os.path.join(tmp, "params.json")
    params.write_params(model if model is not None else decoder(torch), path)
    return path


# (freeze, train) as the command line takes them.
PATTERNS = ((r"layers\.[01]\.", None),
            (None, r"norm|^embed\."),
            (r"bias$", None),
            (r"self_attn", r"layers\.2\."))


def flags(freeze, train):
    return ([f"--freeze={freeze}"] if freeze else []) + (
        [f"--train={train}"] if train else [])


class ParamsCase(CliTestCase):
    """The helpers, over `self.target` (--server ADDRESS or --local)."""

    def oracle_layout(self, numels, mask, dp):
        request = {"search": dict(SEARCH, numels=numels, dp_degrees=[dp]),
                   "frozen": mask}
        expected = layout_oracle.layout(request)
        self.assertNotIn("error", expected)
        return json.loads(json.dumps(expected))

    def run_json(self, command, *args):
        done = run(command, *self.target, "--format", "json", *args)
        self.assertIn(done.returncode, (0, 3), done.stderr)
        return json.loads(done.stdout)

    def refused(self, commands, words, *args):
        """Every command of `commands` (name: its other flags) fails with
        exit 1, INVALID_ARGUMENT and `words` on stderr."""
        path = list_file(self.tmp)
        for command, extra in commands.items():
            with self.subTest(command=command, args=args):
                done = run(command, *self.target, "--params", path, *extra,
                           *args)
                self.assertEqual(done.returncode, FAILED, done.stdout)
                self.assertEqual(done.stdout, "")
                self.assertIn("INVALID_ARGUMENT", done.stderr)
                for w in words:
                    self.assertIn(w, done.stderr)


class FreezeChecks:
    """--freeze / --train on a list against torch and the oracles."""

    def test_layout_equals_the_oracle(self):
        torch, _ = require()
        path = list_file(self.tmp)
        for freeze, train in PATTERNS:
            mask, numels = train_as_the_user_does(decoder(torch), freeze,
                                                  train)
            self.assertTrue(any(mask) and not all(mask))
            # The mask changes the answer: a server that ignored the
            # pattern would fail here.
            self.assertNotEqual(self.oracle_layout(numels, mask, 4),
                                self.oracle_layout(numels, [], 4))
            for dp in (1, 4):
                with self.subTest(freeze=freeze, train=train, dp=dp):
                    got = self.run_json("layout", "--params", path, "--dp",
                                        str(dp), *SWEEP, *flags(freeze, train))
                    self.assertEqual(layout_answer(got),
                                     self.oracle_layout(numels, mask, dp))

    def test_frontier_equals_the_oracle(self):
        torch, _ = require()
        path = list_file(self.tmp)
        freeze, train = PATTERNS[0]
        mask, numels = train_as_the_user_does(decoder(torch), freeze, train)
        request = {"search": dict(SEARCH, numels=numels, dp_degrees=[4]),
                   "frozen": mask, "objective": "OBJECTIVE_PEAK_RANK_BYTES"}
        expected = layout_oracle.frontier(request)
        self.assertNotIn("error", expected)
        got = self.run_json("frontier", "--params", path, "--dp", "4",
                            *SWEEP, "--objective", "peak_rank_bytes",
                            *flags(freeze, train))
        self.assertEqual(frontier_answer(got),
                         json.loads(json.dumps(expected)))

    def test_plan_holds_the_frozen_elements_whole(self):
        torch, _ = require()
        path = list_file(self.tmp)
        for freeze, train in PATTERNS:
            mask, numels = train_as_the_user_does(decoder(torch), freeze,
                                                  train)
            frozen = sum(n for n, f in zip(numels, mask) if f)
            with self.subTest(freeze=freeze, train=train):
                got = self.run_json("plan", "--params", path, *CLUSTER,
                                    *flags(freeze, train))
                self.assertTrue(got["options"])
                for option in got["options"]:
                    self.assertEqual(
                        int(option["most_loaded_rank"]["frozen_bytes"]),
                        HALF_BYTES * frozen)

    def test_a_list_with_frozen_entries_takes_train_beside_them(self):
        torch, _ = require()
        model = decoder(torch)
        model.position.requires_grad_(False)
        model.embed.weight.requires_grad_(False)
        path = list_file(self.tmp, model)
        named = list(model.named_parameters())
        numels = [p.numel() for _, p in named]
        # Without patterns the list's own marks are the mask.
        marks = [not p.requires_grad for _, p in named]
        got = self.run_json("layout", "--params", path, "--dp", "2", *SWEEP)
        self.assertEqual(layout_answer(got),
                         self.oracle_layout(numels, marks, 2))
        # The user's own step: the position table trained again, the last
        # layer's norms frozen; the embedding stays frozen.
        model.position.requires_grad_(True)
        for name, p in named:
            if re.search(r"layers\.2\.norm", name):
                p.requires_grad_(False)
        mask = [not p.requires_grad for _, p in named]
        got = self.run_json("layout", "--params", path, "--dp", "2", *SWEEP,
                            r"--freeze=layers\.2\.norm", "--train=^position$")
        self.assertEqual(layout_answer(got),
                         self.oracle_layout(numels, mask, 2))

    def test_search_counts_the_frozen_parameters(self):
        torch, _ = require()
        path = list_file(self.tmp)
        _, numels = train_as_the_user_does(decoder(torch), *PATTERNS[0])
        got = self.run_json("search", "--params", path, "--dp", "4", *SWEEP,
                            *flags(*PATTERNS[0]))
        expected = oracle.search(dict(SEARCH, numels=numels, dp_degrees=[4]))
        self.assertNotIn("error", expected)
        self.assertEqual({k: got[k] for k in expected},
                         json.loads(json.dumps(expected)))
        self.assertEqual(int(got["total_param_size"]),
                         sum(p.numel() for p in decoder(torch).parameters()))


class RefusalChecks:
    """What a family refuses is refused on a list, on every command."""
    COMMANDS = {"search": (), "layout": (), "frontier": (), "plan": CLUSTER}

    def refused_everywhere(self, words, *args):
        self.refused(self.COMMANDS, words, *args)

    def test_a_pattern_that_matches_no_name(self):
        self.refused_everywhere(
            ['freeze: "q_proj" matches no parameter of the parameter list'],
            "--freeze", "q_proj")
        self.refused_everywhere(['train: "lm_head" matches no parameter'],
                                "--train", "lm_head")

    def test_a_pattern_that_does_not_compile(self):
        self.refused_everywhere(["freeze:", "not a valid RE2 pattern"],
                                "--freeze", "(")

    def test_lora_on_a_list(self):
        self.refused_everywhere(
            ["lora: a parameter list does not say which parameters belong "
             "to nn.Linear modules"],
            "--lora-rank", "8", "--lora-targets", "linear1")


class ServerCase(ParamsCase):
    """A real chunkplan-server for the class's tests."""

    @classmethod
    def setUpClass(cls):
        from server_test import Server  # needs CHUNKPLAN_SERVER
        cls.server = Server("--threads=2")
        cls.target = ("--server", cls.server.address, "--deadline", "120s")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()


class FreezeServerTest(FreezeChecks, ServerCase):
    pass


class RefusalTest(RefusalChecks, ServerCase):
    pass


class LocalTest(ParamsCase):
    """--local runs the same service code in this process: one layout with
    a pattern against the oracle, and one refusal."""
    target = ("--local",)

    def test_layout_equals_the_oracle(self):
        torch, _ = require()
        path = list_file(self.tmp)
        mask, numels = train_as_the_user_does(decoder(torch), *PATTERNS[3])
        got = self.run_json("layout", "--params", path, "--dp", "8", *SWEEP,
                            *flags(*PATTERNS[3]))
        self.assertEqual(layout_answer(got),
                         self.oracle_layout(numels, mask, 8))

    def test_a_pattern_that_matches_no_name(self):
        self.refused({"layout": ()},
                     ['freeze: "q_proj" matches no parameter'],
                     "--freeze", "q_proj")


if __name__ == "__main__":
    unittest.main()
