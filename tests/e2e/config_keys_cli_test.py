#!/usr/bin/python3
"""End-to-end tests of issue 43's items 2 and 3 on the `chunkplan` command
line: every config key accounted for, and any model by its parameter list.

  KeyWarningTest   Qwen2.5-7B's config with `num_hidden_layer` (a slip for
                   num_hidden_layers, which then takes its default, 32):
                   every command warns naming both keys, in the table or on
                   stderr beside JSON, and every table states the total;
                   describe lists the keys read as the oracle's family
                   reads them, here and through the real server
  ParamsTest       --params: the list's search equals the numels' search,
                   the estimate is absent with a note unless --shape-from
                   gives a shape (then it equals the model's own), and a
                   malformed list is refused naming its entry

Expected values come from the model oracle (tests/oracle/models: its total,
the keys its family reads), never from chunkplan.

  CHUNKPLAN_CLI=build/bin/chunkplan /usr/bin/python3 \\
      tests/e2e/config_keys_cli_test.py -v
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_test  # noqa: E402
from cli_test import (FAILED, ROOT, CliTestCase, oracle_models,  # noqa: E402
                      run)
import decoder_traits  # noqa: E402  (tests/oracle, on cli_test's path)

QWEN = os.path.join(ROOT, "tests", "oracle", "models", "data",
                    "qwen2.5-7b.json")
LLAMA = os.path.join(ROOT, "tests", "oracle", "models", "data",
                     "llama-2-7b.json")
CLUSTER = ("--device-memory", "80GiB", "--gpus-per-node", "8",
           "--world-sizes", "8")
# Each command with what it needs besides the model.
COMMANDS = {"search": (), "layout": (), "frontier": (), "plan": CLUSTER}


def misspelled():
    """Qwen2.5-7B's config with num_hidden_layers renamed
    num_hidden_layer."""
    with open(QWEN) as f:
        config = json.load(f)
    config["num_hidden_layer"] = config.pop("num_hidden_layers")
    return config


def warned(text):
    """The lines of `text` that warn of num_hidden_layer, naming both."""
    return [line for line in text.splitlines()
            if line.startswith("warning: ") and '"num_hidden_layer"' in line
            and '"num_hidden_layers"' in line]


class KeyWarningTest(CliTestCase):

    def setUp(self):
        super().setUp()
        self.config = misspelled()
        self.path = self.write(self.config, "config.json")
        # What the slip makes of the model: the oracle's count at the
        # default 32 layers (Qwen2.5-7B has 28).
        self.total = oracle_models.describe(self.config).total

    def test_every_table_states_the_total_and_warns(self):
        for command, extra in COMMANDS.items():
            with self.subTest(command=command):
                done = run(command, "--hf-config", self.path, "--local",
                           "--format", "table", *extra)
                self.assertIn(done.returncode, (0, 3), done.stderr)
                lines = done.stdout.splitlines()
                self.assertEqual(
                    lines[0], "parameters    %s (qwen2, Qwen2ForCausalLM)"
                    % format(self.total, ","))
                self.assertEqual(len(warned(done.stdout)), 1, done.stdout)
                self.assertEqual(warned(done.stderr), [])

    def test_json_stays_one_message_and_warns_on_stderr(self):
        for command, extra in COMMANDS.items():
            with self.subTest(command=command):
                done = run(command, "--hf-config", self.path, "--local",
                           "--format", "json", *extra)
                self.assertIn(done.returncode, (0, 3), done.stderr)
                self.assertEqual(done.stdout.count("\n"), 1)
                report = json.loads(done.stdout)["model_report"]
                self.assertEqual(int(report["total_param_size"]), self.total)
                self.assertEqual(len(report["warnings"]), 1)
                self.assertEqual(len(warned(done.stderr)), 1, done.stderr)

    def test_describe_accounts_for_every_key_as_the_oracle_reads(self):
        done = run("describe", "--hf-config", self.path, "--local")
        self.assertEqual(done.returncode, 0, done.stderr)
        got = json.loads(done.stdout)
        want = oracle_models.describe(self.config)
        read = decoder_traits.keys_read(self.config, want)
        self.assertEqual(got["config_keys_read"], read)
        self.assertEqual(
            sorted(got["config_keys_ignored"] + got["config_keys_harmless"]),
            sorted(set(self.config) - set(read)))
        self.assertIn("num_hidden_layer", got["config_keys_ignored"])
        self.assertIn("torch_dtype", got["config_keys_harmless"])
        self.assertEqual(len(warned(done.stderr)), 1, done.stderr)
        self.assertEqual(int(got["total"]), want.total)

    def test_the_published_config_warns_nothing(self):
        done = run("search", "--hf-config", QWEN, "--local", "--format",
                   "table")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertNotIn("warning", done.stdout + done.stderr)
        self.assertEqual(done.stdout.splitlines()[0],
                         "parameters    7,615,616,512 (qwen2, "
                         "Qwen2ForCausalLM)")


class KeyWarningServerTest(CliTestCase):
    """The same warning from the real server (its ModelReport and
    ModelDescription), started as cli_test.RealServerTest starts it."""

    setUpClass = cli_test.RealServerTest.__dict__["setUpClass"]
    tearDownClass = cli_test.RealServerTest.__dict__["tearDownClass"]

    def test_the_server_warns_too(self):
        path = self.write(misspelled(), "config.json")
        for command, extra in dict(COMMANDS, describe=()).items():
            with self.subTest(command=command):
                done = run(command, "--hf-config", path, "--server",
                           self.target, "--deadline", "60s", "--format",
                           "json", *extra)
                self.assertIn(done.returncode, (0, 3), done.stderr)
                self.assertEqual(len(warned(done.stderr)), 1, done.stderr)


class ParamsTest(CliTestCase):

    def setUp(self):
        super().setUp()
        model = oracle_models.describe(LLAMA)
        self.numels = model.numels
        self.params = self.write(
            [{"name": n, "numel": k} for n, k in zip(model.names,
                                                     model.numels)],
            "params.json")

    def test_the_list_searches_as_its_numels(self):
        request = self.write({"numels": self.numels, "dp_degrees": [8],
                              "search_range_m": 32,
                              "search_interval": 1024}, "request.json")
        done = run("search", "--params", self.params, "--dp", "8",
                   "--local")
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stderr, cli_test.DEFAULT_INTERVAL_NOTE)
        by_list = json.loads(done.stdout)
        by_numels = self.search_json("--request", request, "--local")
        for answer in (by_list, by_numels):
            answer.pop("search_nanos")
        self.assertEqual(by_list, by_numels)
        self.assertEqual(int(by_list["model_report"]["total_param_size"]),
                         sum(self.numels))

    def test_the_estimate_needs_a_shape(self):
        workload = ("--micro-batch", "1", "--sequence-length", "4096")
        without = run("plan", "--params", self.params, "--local", *CLUSTER,
                      *workload)
        self.assertIn(without.returncode, (0, 3), without.stderr)
        self.assertIn("activation estimate: none (a parameter list carries "
                      "no shape: give --shape-from CONFIG", without.stdout)
        shaped = run("plan", "--params", self.params, "--shape-from", LLAMA,
                     "--local", *CLUSTER, *workload, "--format", "json")
        model = run("plan", "--hf-config", LLAMA, "--local", *CLUSTER,
                    *workload, "--format", "json")
        self.assertIn(shaped.returncode, (0, 3), shaped.stderr)
        self.assertIn(model.returncode, (0, 3), model.stderr)
        shaped, model = json.loads(shaped.stdout), json.loads(model.stdout)
        # The same estimate, option by option. The rest of an option may
        # differ: a parameter list names no operations, so its gathered
        # chunks fall back to one (LayoutResponse.gathered_chunks).
        self.assertGreater(int(model["options"][0]["activation_bytes"]), 0)
        estimate = [[o.get(k) for k in ("activation_bytes", "transient_bytes")]
                    for o in model["options"]]
        self.assertEqual([[o.get(k) for k in ("activation_bytes",
                                              "transient_bytes")]
                          for o in shaped["options"]], estimate)

    def test_malformed_lists_are_refused_naming_the_entry(self):
        for content, words in (
                ('[{"name": "a", "numel": 4}, {"name": "b"}]', "entry 1: "),
                ('[["a", [2, -3]]]', "entry 0: "),
                ('[]', "non-empty"),
                ('{"name": "a"}', "non-empty"),
                ('[{"name": "a", "numel": 1, "requires_grad": 0}]',
                 "requires_grad"),
                ('[', "not a JSON list")):
            with self.subTest(content=content):
                path = self.write(content, "bad.json")
                done = run("search", "--params", path, "--local")
                self.assertFails(done, FAILED, "INVALID_ARGUMENT: ")
                self.assertIn(words, done.stderr)

    def test_flags_that_do_not_go_together(self):
        for args in (("--hf-config", LLAMA, "--params", self.params),
                     ("--params", self.params, "--architecture", "X"),
                     ("--params", self.params, "--shape-from", LLAMA)):
            with self.subTest(args=args):
                done = run("plan", *args, "--local", *CLUSTER)
                self.assertEqual(done.returncode, 2, done.stderr)


if __name__ == "__main__":
    unittest.main()
