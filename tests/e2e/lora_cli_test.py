#!/usr/bin/python3
"""End-to-end tests of LoRA and frozen bases from the command line (issue
41, item 3): `--lora-rank R --lora-targets ...`, `--lora-dropout`,
`--freeze REGEX` and `--train REGEX` reach the server (here the planner in
this process, --local, through the same service code), which adds PEFT's
adapters and matches the patterns.

  DescribeTest   the adapted parameter list (names, numels, frozen,
                 trainable) against the LoRA oracle (tests/oracle/models/
                 lora.py) on PEFT's published models and fresh random
                 configs of every family; --freeze/--train against
                 Python's re.search
  ErrorsTest     a target or pattern that matches nothing, or that does
                 not compile: exit 1, INVALID_ARGUMENT naming it
  PlanTest       `chunkplan plan --lora-rank 8 --lora-targets q_proj,v_proj`
                 plans the newcomer's Qwen2.5-7B on 4 x RTX 4090: the frozen
                 base on every rank is the oracle's 2 bytes a frozen element
  ActivationTest the adapters' activations in Layout's estimate, against
                 the activation oracle summing the oracle's adapted modules
  RemoteTest     through a real chunkplan-server: Describe's adapted list,
                 and `frozen` sent beside lora refused

Expected values come from the oracles, never from chunkplan.

  CHUNKPLAN_CLI=build/bin/chunkplan /usr/bin/python3 tests/e2e/lora_cli_test.py -v
"""

import json
import os
import random
import re
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_test import ROOT, run  # noqa: E402
import decoder_traits  # noqa: E402  (tests/oracle, on the path)
import models as oracle_models  # noqa: E402  (tests/oracle, on the path)
from models.layers import LinearWeight  # noqa: E402
from models.lora import PEFT_PUBLISHED, adapt, trainable_mask  # noqa: E402
import activation_oracle  # noqa: E402
import decoder_traits  # noqa: E402

DATA = os.path.join(ROOT, "tests", "oracle", "models", "data")
QWEN_7B = os.path.join(DATA, "qwen2.5-7b.json")
EXIT_FAILED = 1
RANDOM_CONFIGS_PER_FAMILY = 3


def describe(config_path, *flags):
    result = run("describe", "--local", "--hf-config", config_path, *flags)
    return result


def as_wire(adapted_names, numels, trainable):
    """The oracle's list as ModelDescription's JSON fields."""
    return {"names": adapted_names, "numels": [str(n) for n in numels],
            "frozen": [not t for t in trainable],
            "trainable": str(sum(n for n, t in zip(numels, trainable) if t)),
            "total": str(sum(numels))}


def wire_part(answer):
    return {k: answer.get(k, [] if k in ("names", "numels", "frozen")
                          else "0") for k in
            ("names", "numels", "frozen", "trainable", "total")}


def linear_suffixes(description):
    """The last name parts of the oracle's linear modules, sorted."""
    return sorted({name.rsplit(".", 2)[-2] for name, numel in
                   zip(description.names, description.numels)
                   if isinstance(numel, LinearWeight)})


class DescribeTest(unittest.TestCase):

    def check(self, config_path, rank, targets, *extra):
        want = adapt(oracle_models.describe(config_path), rank, targets)
        result = describe(config_path, "--lora-rank", str(rank),
                          "--lora-targets", ",".join(targets), *extra)
        self.assertEqual(result.returncode, 0, result.stderr)
        got = json.loads(result.stdout)
        self.assertEqual(wire_part(got), as_wire(want.names, want.numels,
                                                 want.trainable))
        return got

    def test_peft_published_models(self):
        for config, rank, targets, trainable, total, citation in \
                PEFT_PUBLISHED:
            with self.subTest(config=config):
                got = self.check(os.path.join(DATA, config), rank, targets)
                self.assertEqual(int(got["trainable"]), trainable, citation)
                self.assertEqual(int(got["total"]), total, citation)

    def test_random_configs_of_every_family(self):
        seed = int(os.environ.get("CHUNKPLAN_SEED", random.randrange(2**32)))
        print(f"seed {seed} (CHUNKPLAN_SEED={seed} repeats it)")
        rng = random.Random(seed)
        tmp = tempfile.mkdtemp(prefix="chunkplan_lora_test_")
        for family in oracle_models.FAMILIES:
            for i in range(RANDOM_CONFIGS_PER_FAMILY):
                config = oracle_models.random_config(family, rng)
                suffixes = linear_suffixes(oracle_models.describe(config))
                if not suffixes:
                    continue
                targets = rng.sample(suffixes, min(len(suffixes),
                                                   rng.randint(1, 3)))
                path = os.path.join(tmp, f"{family}-{i}.json")
                with open(path, "w") as f:
                    json.dump(config, f)
                with self.subTest(family=family, config=config,
                                  targets=targets):
                    self.check(path, rng.randint(1, 64), targets)

    def test_freeze_and_train_patterns(self):
        d = oracle_models.describe(QWEN_7B)
        cases = (
            ((), r"layers\.[0-9]\.", None),
            ((), None, r"lm_head|norm"),
            ((), r"bias$", r"layers\.27\."),
        )
        for lora, freeze, train in cases:
            flags = ([f"--freeze={freeze}"] if freeze else []) + (
                [f"--train={train}"] if train else [])
            with self.subTest(freeze=freeze, train=train):
                result = describe(QWEN_7B, *flags)
                self.assertEqual(result.returncode, 0, result.stderr)
                mask = trainable_mask(d.names, [not train] * len(d.names),
                                      freeze, train)
                self.assertEqual(wire_part(json.loads(result.stdout)),
                                 as_wire(d.names, d.numels, mask))

    def test_train_beside_the_adapters(self):
        path = os.path.join(DATA, "llama-3.2-1b.json")
        a = adapt(oracle_models.describe(path), 8, ["q_proj", "v_proj"])
        mask = trainable_mask(a.names, a.trainable, r"layers\.0\.",
                              r"embed_tokens")
        result = describe(path, "--lora-rank", "8", "--lora-targets",
                          "q_proj,v_proj", r"--freeze=layers\.0\.",
                          "--train=embed_tokens")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(wire_part(json.loads(result.stdout)),
                         as_wire(a.names, a.numels, mask))


class ErrorsTest(unittest.TestCase):

    def check(self, words, *flags):
        result = describe(QWEN_7B, *flags)
        self.assertEqual(result.returncode, EXIT_FAILED, result.stdout)
        self.assertEqual(result.stdout, "")
        self.assertIn("INVALID_ARGUMENT", result.stderr)
        for w in words:
            self.assertIn(w, result.stderr)

    def test_a_target_that_matches_no_module(self):
        self.check(['lora.targets[1]: "qproj" matches no linear module'],
                   "--lora-rank", "8", "--lora-targets", "q_proj,qproj")

    def test_rank_and_targets_go_together(self):
        self.check(["lora.targets"], "--lora-rank", "8")
        self.check(["lora.rank"], "--lora-targets", "q_proj")

    def test_patterns(self):
        self.check(['freeze: "nothing_here" matches no parameter'],
                   "--freeze", "nothing_here")
        self.check(["train:", "not a valid RE2 pattern"], "--train", "(")

    def test_plan_refuses_an_unknown_target(self):
        result = run("plan", "--local", "--hf-config", QWEN_7B,
                     "--gpu", "rtx-4090", "--world-sizes", "4",
                     "--gpus-per-node", "4", "--lora-rank", "8",
                     "--lora-targets", "q_prj")
        self.assertEqual(result.returncode, EXIT_FAILED, result.stdout)
        self.assertIn("INVALID_ARGUMENT", result.stderr)
        self.assertIn('"q_prj" matches no linear module', result.stderr)


class RemoteTest(unittest.TestCase):
    """The same through a real chunkplan-server: the wire carries lora,
    freeze and train, and the server answers what --local answers."""

    @classmethod
    def setUpClass(cls):
        from server_test import Server  # needs CHUNKPLAN_SERVER
        cls.server = Server("--threads=2")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_describe_through_the_server(self):
        path = os.path.join(DATA, "llama-3.2-1b.json")
        flags = ("--hf-config", path, "--lora-rank", "8", "--lora-targets",
                 "q_proj", "--train", "lm_head|embed")
        remote = run("describe", "--server", self.server.address, *flags)
        self.assertEqual(remote.returncode, 0, remote.stderr)
        a = adapt(oracle_models.describe(path), 8, ["q_proj"])
        mask = trainable_mask(a.names, a.trainable, None, "lm_head|embed")
        self.assertEqual(wire_part(json.loads(remote.stdout)),
                         as_wire(a.names, a.numels, mask))

    def test_frozen_beside_lora_is_refused(self):
        with open(QWEN_7B) as f:
            text = f.read()
        n = len(adapt(oracle_models.describe(QWEN_7B), 8,
                      ["q_proj"]).names)
        body = {"search": {"model": {"hf_config_json": text,
                                     "lora": {"rank": 8,
                                              "targets": ["q_proj"]}},
                           "dp_degrees": [4], "search_range_m": 32},
                "frozen": [True] * n}
        result = run("layout", "--server", self.server.address,
                     "--request", "-", stdin=json.dumps(body))
        self.assertEqual(result.returncode, EXIT_FAILED, result.stdout)
        self.assertIn("INVALID_ARGUMENT", result.stderr)
        self.assertIn("search.model sets lora, freeze or train",
                      result.stderr)


class PlanTest(unittest.TestCase):
    FLAGS = ("--gpu", "rtx-4090", "--world-sizes", "4", "--gpus-per-node",
             "4", "--micro-batch", "1", "--sequence-length", "2048",
             "--activation-checkpointing")

    def test_lora_plans_from_the_command_line(self):
        a = adapt(oracle_models.describe(QWEN_7B), 8, ["q_proj", "v_proj"])
        frozen = sum(n for n, t in zip(a.numels, a.trainable) if not t)
        result = run("plan", "--local", "--hf-config", QWEN_7B, *self.FLAGS,
                     "--lora-rank", "8", "--lora-targets", "q_proj,v_proj,lm_head",
                     "--format", "json")
        self.assertEqual(result.returncode, 0, result.stderr)
        options = json.loads(result.stdout)["options"]
        self.assertTrue(options and options[0]["fits"], result.stdout)
        for o in options:
            # Frozen parameters stay whole on every rank, 2 bytes each.
            self.assertEqual(int(o["most_loaded_rank"]["frozen_bytes"]),
                             2 * frozen)
        table = run("plan", "--local", "--hf-config", QWEN_7B, *self.FLAGS,
                    "--lora-rank", "8", "--lora-targets", "q_proj,v_proj")
        self.assertEqual(table.returncode, 0, table.stderr)
        self.assertIn("fits", table.stdout)


class ActivationTest(unittest.TestCase):

    def test_adapters_count_in_the_estimate(self):
        hf = oracle_models.describe(QWEN_7B)
        with open(QWEN_7B) as f:
            cfg = json.load(f)
        # The oracle's shape and layer traits of the base model.
        shape = decoder_traits.traits(cfg, hf, cfg["num_attention_heads"])
        a = adapt(hf, 16, ["q_proj", "v_proj", "lm_head"])
        for dropout, checkpointing in ((0, False), (0.05, False),
                                       (0.05, True)):
            adapters = {"rank": 16, "dropout": dropout > 0, "modules": [
                {"in_features": i,
                 "in_layer": bool(re.search(r"\.[0-9]+\.", name))}
                for name, i, _ in a.modules]}
            work = {"micro_batch": 1, "sequence_length": 512,
                    "activation_checkpointing": checkpointing,
                    "attention": "flash_attention_2"}  # --flash-attention
            want = activation_oracle.estimate(shape, work, adapters)
            flags = ["--micro-batch", "1", "--sequence-length", "512",
                     "--flash-attention"] + (
                ["--activation-checkpointing"] if checkpointing else [])
            with self.subTest(dropout=dropout, checkpointing=checkpointing):
                self.assertGreater(want["adapter_bytes"], 0)
                result = run("layout", "--local", "--hf-config", QWEN_7B,
                             "--dp", "4", "--lora-rank", "16",
                             "--lora-targets", "q_proj,v_proj,lm_head",
                             "--lora-dropout", str(dropout), *flags)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(json.loads(result.stdout)["activation_bytes"],
                                 str(want["total_bytes"]))


if __name__ == "__main__":
    unittest.main()
