#!/usr/bin/python3
"""End-to-end tests of what the `chunkplan` command line took over from the
Python one (issue 45): a model's search settings, several degrees, the
GeminiPlugin flags, the objective, the workload, --offload-sweep, --emit
colossalai, the padding warning and the tables' words. Every answer here
is computed in this process (--local); the stand-in and real servers of
cli_test.py and plan_cli_test.py check the remote path.

  SearchSettingsTest  --search-range-m, --search-interval, --min-chunk-size-m
                      and --no-filter reach the model's search
  LayoutDegreesTest   --dp 1,2,4: one row, one JSON line or one
                      GeminiPlugin(...) line per degree
  GeminiFlagsTest     the GeminiPlugin flags, the objective and a workload
                      reach the request; --emit carries them
  FrontierTest        the objective's points, and --emit of its best
  OffloadSweepTest    the sweep's offloaded chunks
  PaddingWarningTest  chunks that dwarf what they hold (a LoRA-style model)
  WordsTest           "ColossalAI's search", not "seed"; the value's unit
  GpuPresetsTest      `chunkplan gpus`: the published figures, and
                      docs/gpu-presets.md listing exactly the data file's

Expected values come from the oracles (tests/oracle: the search, layout and
activation oracles and the model lists), never from chunkplan.

  CHUNKPLAN_CLI=build/bin/chunkplan /usr/bin/python3 tests/e2e/model_cli_test.py -v
"""

import ast
import json
import os
import pathlib
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_test  # noqa: E402
from cli_test import (FAILED, GPT2_CONFIG, LLAMA_CONFIG, USAGE,  # noqa: E402
                      CliTestCase, run)
from cli_test import oracle, layout_oracle, oracle_models  # noqa: E402
import activation_oracle  # noqa: E402  (tests/oracle, on the path)
import decoder_traits  # noqa: E402

# Small sweeps (at most 513 candidates), for the Python oracles.
SWEEP = ("--search-range-m", "0.25", "--search-interval", "512",
         "--min-chunk-size-m", "0")
SEARCH = {"search_range_m": 0.25, "search_interval": 512,
          "min_chunk_size_m": 0}
SWEEP_NOTE = "search interval 512 (--search-interval)\n"
# The first line of a table of the GPT-2 test model: the oracle's total.
GPT2_HEADER = "parameters    %s (gpt2, GPT2LMHeadModel)\n" % format(
    oracle_models.describe(GPT2_CONFIG).total, ",")
GIB = 2**30


def gib(nbytes):
    return "%.2f" % (int(nbytes) / GIB)


def numels(config):
    return oracle_models.describe(config).numels


def oracle_layout(request):
    answer = layout_oracle.layout(request)
    assert "error" not in answer, answer
    return answer


def oracle_frontier(request):
    answer = layout_oracle.frontier(request)
    assert "error" not in answer, answer
    return answer


def model_layout(dp, config=GPT2_CONFIG, **fields):
    """The oracle's layout request for the model of `config` at `dp` under
    SEARCH, with further top-level `fields`."""
    text = pathlib.Path(config).read_text(encoding="utf-8")
    return dict({"search": {"model": {"hf_config_json": text},
                            "dp_degrees": [dp], **SEARCH}}, **fields)


def layout_part(response):
    """What a LayoutResponse says of the layout itself (no search times)."""
    return {k: response[k] for k in ("groups", "layout_padding",
                                     "most_loaded_rank", "least_loaded_rank",
                                     "gathered_chunk_bytes",
                                     "gathered_chunks", "placement")}


def rows(out):
    """The lines of a table that start with two numbers."""
    return [line for line in out.splitlines()
            if re.match(r"^\s*\d[\d.]*\s+\d+", line)]


class ModelCase(CliTestCase):
    def local(self, command, *args, note=SWEEP_NOTE):
        """`chunkplan COMMAND --local ARGS`: its stdout, asserting exit 0
        and, on stderr, only the interval's note (or nothing)."""
        result = run(command, "--local", *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(result.stderr, ("", note), result.stderr)
        return result.stdout


class SearchSettingsTest(ModelCase):
    def test_colossalais_test_settings_give_its_published_size(self):
        out = self.local("search", "--hf-config", GPT2_CONFIG,
                         "--search-range-m", "1", "--search-interval", "128",
                         "--min-chunk-size-m", "0", "--format", "table")
        self.assertTrue(out.startswith(
            GPT2_HEADER + "search interval 128 (--search-interval)\n"), out)
        self.assertRegex(out, r"(?m)^\s+1\s+527872\s")

    def test_each_setting_reaches_the_request(self):
        base = {"numels": numels(LLAMA_CONFIG), "dp_degrees": [4], **SEARCH}
        for flags, fields in (((), {}),
                              (("--no-filter",),
                               {"filter_exlarge_params": False}),
                              (("--min-chunk-size-m", "700"),
                               {"min_chunk_size_m": 700})):
            with self.subTest(flags=flags):
                args = list(SWEEP)
                if "--min-chunk-size-m" in flags:
                    args = args[:-2]
                got = json.loads(self.local(
                    "search", "--hf-config", LLAMA_CONFIG, "--dp", "4",
                    *args, *flags))
                want = oracle.search(dict(base, **fields))
                self.assertEqual(cli_test.answer_part(got),
                                 cli_test.answer_part(want))

    def test_usage(self):
        request = self.write({"numels": [5]})
        for args in (("--hf-config", GPT2_CONFIG, "--hidden-dim", "64",
                      "--search-interval", "128"),
                     ("--request", request, "--search-range-m", "1"),
                     ("--request", request, "--no-filter"),
                     ("--hf-config", GPT2_CONFIG, "--search-range-m", "x"),
                     ("--hf-config", GPT2_CONFIG, "--search-interval", "-1"),
                     ("--hf-config", GPT2_CONFIG, "--dp", "1,2")):
            with self.subTest(args=args):
                self.assertFails(run("search", "--local", *args), USAGE,
                                 "INVALID_ARGUMENT: ")


class LayoutDegreesTest(ModelCase):
    DEGREES = (1, 2, 4)

    def layout(self, *args):
        return self.local("layout", "--hf-config", GPT2_CONFIG, "--dp",
                          ",".join(map(str, self.DEGREES)), *SWEEP, *args)

    def test_a_row_per_degree_of_the_oracles_figures(self):
        out = self.layout("--format", "table")
        self.assertTrue(out.startswith(GPT2_HEADER + SWEEP_NOTE), out)
        self.assertEqual(len(rows(out)), len(self.DEGREES), out)
        for dp, row in zip(self.DEGREES, rows(out)):
            answer = oracle_layout(model_layout(dp))
            group = answer["groups"][0]
            most = answer["most_loaded_rank"]
            self.assertEqual(row.split(), [
                str(dp), group["chunk_size"],
                "yes" if group["keep_gathered"] else "no",
                answer["layout_padding"],
                answer["search"]["min_chunk_waste"], gib(most["device_bytes"]),
                gib(answer["gathered_chunk_bytes"]), answer["gathered_chunks"],
                gib(most["host_bytes"])])

    def test_a_json_line_per_degree(self):
        lines = self.layout().splitlines()
        self.assertEqual(len(lines), len(self.DEGREES))
        for dp, line in zip(self.DEGREES, lines):
            self.assertEqual(layout_part(json.loads(line)),
                             layout_part(oracle_layout(model_layout(dp))))

    def test_a_geminiplugin_line_per_degree(self):
        lines = self.layout("--objective", "peak_rank_bytes", "--emit",
                            "colossalai").splitlines()
        self.assertEqual(len(lines), len(self.DEGREES))
        for dp, line in zip(self.DEGREES, lines):
            group = oracle_layout(model_layout(
                dp, objective="OBJECTIVE_PEAK_RANK_BYTES"))["groups"][0]
            self.assertEqual(line, (
                'GeminiPlugin(placement_policy="static", shard_param_frac=1.0, '
                'offload_optim_frac=0.0, offload_param_frac=0.0, '
                'precision="fp16", master_weights=True, '
                'enable_gradient_accumulation=False, pin_memory=True, '
                'chunk_config_dict={%d: {"chunk_size": %s, '
                '"keep_gathered": %s}})' % (dp, group["chunk_size"],
                                            group["keep_gathered"])))

    def test_usage(self):
        model = ("--local", "--hf-config", GPT2_CONFIG)
        for args in (("layout",) + model + ("--dp", "2,2"),
                     ("layout",) + model + ("--dp", "0"),
                     ("frontier",) + model + ("--dp", "4,8"),
                     ("layout",) + model + ("--format", "json", "--emit",
                                            "colossalai"),
                     ("layout",) + model + ("--emit", "deepspeed"),
                     ("layout",) + model + ("--objective", "least_waste"),
                     ("layout",) + model + ("--reserve", "1GiB"),
                     ("search",) + model + ("--objective", "seed_waste"),
                     ("search",) + model + ("--precision", "bf16"),
                     ("frontier",) + model + ("--micro-batch", "1",
                                              "--sequence-length", "8"),
                     ("frontier",) + model + ("--offload-sweep",)):
            with self.subTest(args=args):
                self.assertFails(run(*args), USAGE, "INVALID_ARGUMENT: ")


class GeminiFlagsTest(ModelCase):
    FLAGS = ("--precision", "bf16", "--no-master-weights",
             "--gradient-accumulation", "--no-pin-memory", "--optimizer",
             "none", "--offload-optim-frac", "0.5")
    GEMINI = {"precision": "PRECISION_BF16", "master_weights": False,
              "gradient_accumulation": True, "pin_memory": False,
              "optimizer": "OPTIMIZER_NONE", "offload_optim_frac": 0.5}

    def test_settings_and_objective_reach_the_request(self):
        got = json.loads(self.local(
            "layout", "--hf-config", GPT2_CONFIG, "--dp", "2", *SWEEP,
            *self.FLAGS, "--objective", "layout_padding"))
        want = oracle_layout(model_layout(
            2, gemini=self.GEMINI, objective="OBJECTIVE_LAYOUT_PADDING"))
        self.assertEqual(layout_part(got), layout_part(want))
        self.assertEqual(got["most_loaded_rank"]["optimizer_bytes"], "0")
        self.assertEqual(got["most_loaded_rank"]["master_bytes"], "0")

    def test_emit_carries_the_settings(self):
        out = self.local("layout", "--hf-config", GPT2_CONFIG, "--dp", "2",
                         *SWEEP, *self.FLAGS, "--emit", "colossalai")
        call = ast.parse(out.strip(), mode="eval").body
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        group = oracle_layout(model_layout(2, gemini=self.GEMINI))["groups"][0]
        self.assertEqual(kwargs, {
            "placement_policy": "static", "shard_param_frac": 1.0,
            "offload_optim_frac": 0.5, "offload_param_frac": 0.0,
            "precision": "bf16", "master_weights": False,
            "enable_gradient_accumulation": True, "pin_memory": False,
            "chunk_config_dict": {2: {"chunk_size": int(group["chunk_size"]),
                                      "keep_gathered": False}}})

    def test_auto_placement_takes_the_gpu_preset(self):
        out = self.local("layout", "--hf-config", LLAMA_CONFIG, "--dp", "8",
                         *SWEEP, "--placement", "auto", "--gpu", "rtx-4090",
                         "--emit", "colossalai")
        self.assertTrue(out.startswith('GeminiPlugin(placement_policy="auto", '
                                       'precision="fp16"'), out)
        got = json.loads(self.local(
            "layout", "--hf-config", LLAMA_CONFIG, "--dp", "8", *SWEEP,
            "--placement", "auto", "--device-memory", "24564MiB"))
        want = oracle_layout(model_layout(8, LLAMA_CONFIG, gemini={
            "placement": "PLACEMENT_AUTO",
            "device_memory_bytes": 24564 * 2**20}))
        self.assertEqual(got["placement"], want["placement"])
        # Under static placement the device is the verdict's alone
        # (LayoutRequest.cluster): no gemini.device_memory_bytes is sent.
        result = run("layout", "--local", "--hf-config", GPT2_CONFIG,
                     "--gpu", "rtx-4090")
        self.assertEqual(result.returncode, 0, result.stderr)
        verdict = json.loads(result.stdout)["verdict"]
        self.assertEqual(verdict["device_memory_bytes"], str(24564 * 2**20))
        self.assertTrue(verdict["fits"])

    def test_a_workload_adds_the_activation_estimate(self):
        # The oracle's own reading of the layer (decoder_traits) and its
        # name for --flash-attention's attention.
        work = {"micro_batch": 1, "sequence_length": 2048,
                "activation_checkpointing": False,
                "attention": "flash_attention_2"}  # --flash-attention
        with open(LLAMA_CONFIG) as f:
            hf = json.load(f)
        # The oracle's shape and layer traits of the config.
        shape = decoder_traits.traits(hf, oracle_models.describe(hf),
                                      hf["num_attention_heads"])
        parts = activation_oracle.estimate(shape, work)
        estimate = parts["total_bytes"]
        flags = ("--hf-config", LLAMA_CONFIG, *SWEEP, "--micro-batch", "1",
                 "--sequence-length", "2048", "--flash-attention")
        got = json.loads(self.local("layout", "--dp", "8", *flags))
        self.assertEqual(got["activation_bytes"], str(estimate))
        self.assertEqual(layout_part(got),
                         layout_part(oracle_layout(model_layout(
                             8, LLAMA_CONFIG))))
        table = self.local("layout", "--dp", "8,4", *flags, "--format",
                           "table")
        self.assertIn("activations GiB (ESTIMATE)", table)
        # The last two columns: the activations, then the transient.
        self.assertTrue(all(row.split()[-2:] == [
            gib(estimate), gib(parts["transient_bytes"])]
            for row in rows(table)), table)


class Llama4ActivationTest(ModelCase):
    def test_llama4_scout_gets_the_oracles_estimate(self):
        # Llama 4 Scout's published text config (every layer Llama4TextMoe,
        # every fourth without RoPE, the L2 qk_norm): checkpointed under
        # the default attention, the activations and the transient as the
        # oracle reads the config (decoder_traits) and estimates them.
        scout = str(pathlib.Path(__file__).resolve().parents[1] / "oracle" /
                    "models" / "data" / "llama-4-scout-17b-16e-text.json")
        with open(scout) as f:
            hf = json.load(f)
        shape = decoder_traits.traits(hf, oracle_models.describe(hf),
                                      hf["num_attention_heads"])
        self.assertEqual((shape["nope_layers"], shape["moe_layers"]),
                         (12, 48))
        parts = activation_oracle.estimate(shape, {
            "micro_batch": 1, "sequence_length": 4096,
            "activation_checkpointing": True, "attention": "default"})
        got = json.loads(self.local(
            "layout", "--dp", "8", "--hf-config", scout, *SWEEP,
            "--micro-batch", "1", "--sequence-length", "4096",
            "--activation-checkpointing"))
        self.assertEqual(got["activation_bytes"], str(parts["total_bytes"]))
        self.assertEqual(got["transient_bytes"],
                         str(parts["transient_bytes"]))


class FrontierTest(ModelCase):
    def frontier(self, objective, *args):
        return self.local("frontier", "--hf-config", GPT2_CONFIG, "--dp",
                          "8", *SWEEP, "--objective", objective, *args)

    def test_rows_are_the_oracles_points(self):
        out = self.frontier("layout_padding", "--format", "table")
        points = oracle_frontier(model_layout(
            8, objective="OBJECTIVE_LAYOUT_PADDING"))["points"]
        self.assertGreater(len(points), 1)
        self.assertEqual([row.split()[:5] for row in rows(out)],
                         [[p["candidate"], p["chunk_size"], p["value"],
                           p["seed_waste"], p["layout_padding"]]
                          for p in points], out)

    def test_emit_is_the_objectives_best(self):
        # Degrees 2 and 4, where the objectives' bests differ (seed_waste's
        # 129216, peak_rank_bytes' 97152).
        search = {"numels": [29491, 2848, 3206, 96475, 97116],
                  "dp_degrees": [2, 4, 2, 2, 2], "search_range_m": 0.05,
                  "search_interval": 64, "min_chunk_size_m": 0}
        path = self.write({"search": search})
        emitted = []
        for objective in ("seed_waste", "layout_padding", "peak_rank_bytes"):
            with self.subTest(objective=objective):
                out = self.local("frontier", "--request", path, "--objective",
                                 objective, "--emit", "colossalai")
                call = ast.parse(out.strip(), mode="eval").body
                got = {k.arg: ast.literal_eval(k.value)
                       for k in call.keywords}["chunk_config_dict"]
                want = oracle_layout({"search": search, "objective":
                                      "OBJECTIVE_" + objective.upper()})
                self.assertEqual(got, {
                    g["dp_degree"]: {"chunk_size": int(g["chunk_size"]),
                                     "keep_gathered": g["keep_gathered"]}
                    for g in want["groups"]})
                emitted.append(got)
        self.assertNotEqual(emitted[0], emitted[2])


class OffloadSweepTest(ModelCase):
    def test_rows_carry_the_oracles_counts(self):
        out = self.local("layout", "--hf-config", LLAMA_CONFIG, "--dp", "8",
                         *SWEEP, "--offload-sweep")
        found = re.findall(r"(?m)^\s+([01]\.\d\d)\s+(\d+) \.\. (\d+)\s", out)
        self.assertEqual([float(r[0]) for r in found],
                         [i / 20 for i in range(21)], out)
        groups = oracle_layout(model_layout(8, LLAMA_CONFIG))["groups"]
        configs = [{k: g[k] for k in ("dp_degree", "chunk_size",
                                      "keep_gathered")} for g in groups]
        # Three rows against the oracle (each oracle layout of LLaMA-2 7B
        # takes seconds): the ends and one between.
        for fraction, least, most in (r for r in found
                                      if r[0] in ("0.00", "0.55", "1.00")):
            placement = oracle_layout(model_layout(
                8, LLAMA_CONFIG, configs=configs,
                gemini={"offload_optim_frac": float(fraction)}))["placement"]
            self.assertEqual((least, most),
                             (placement["offloaded_chunks"],
                              placement["offloaded_chunks_max"]), fraction)


class PaddingWarningTest(ModelCase):
    """Three frozen base weights and two trainable LoRA adapters: 98,304
    trainable elements beside 114.6 M frozen ones."""
    NUMELS = [41_035_776, 40_000_000, 33_607_168, 49_152, 49_152]
    FROZEN = [True, True, True, False, False]
    SEARCH = {"search_range_m": 32, "search_interval": 4096,
              "min_chunk_size_m": 32}

    def request(self, numels, frozen, dp, configs=None):
        body = {"search": {"numels": numels, "dp_degrees": [dp],
                           **self.SEARCH}, "frozen": frozen}
        if configs:
            body["configs"] = configs
        return body

    def table(self, body):
        result = run("layout", "--local", "--request", "-", "--format",
                     "table", stdin=json.dumps(body))
        self.assertOk(result)
        return result.stdout

    def figures(self, body):
        chunks = [c for g in oracle_layout(body)["groups"]
                  for c in g.get("chunks", [])]
        placed = sum(int(c.get("used", 0)) for c in chunks)
        return placed, sum(int(c["size"]) for c in chunks) - placed

    def test_lora_layout_warns_with_the_oracles_figures(self):
        for dp in (1, 4):
            with self.subTest(dp=dp):
                body = self.request(self.NUMELS, self.FROZEN, dp)
                placed, padding = self.figures(body)
                self.assertGreater(padding, placed)
                lines = self.table(body).splitlines()
                start = lines.index(
                    "warning         the chunks dwarf what they hold: %d "
                    "elements placed in %d allocated, padding %d elements = "
                    "%.2f%% of placed" % (placed, placed + padding, padding,
                                          100 * padding / placed))
                self.assertEqual(lines[start - 1], "")
                suggested = ast.literal_eval(lines[start + 2].split(": ", 1)[1])
                self.assertEqual(suggested, {dp: {"chunk_size": 98_304,
                                                  "keep_gathered": False}})
                # The suggestion, laid out by the oracle, pads less than a
                # degree.
                placed, padding = self.figures(self.request(
                    self.NUMELS, self.FROZEN, dp,
                    [{"dp_degree": dp, **suggested[dp]}]))
                self.assertEqual(placed, 98_304)
                self.assertLess(padding, dp)

    def test_no_warning_when_padding_is_below_placed(self):
        body = self.request([6_000_000, 5_000_000, 4_000_000], [], 1)
        placed, padding = self.figures(body)
        self.assertLessEqual(padding, placed)
        self.assertNotIn("warning", self.table(body))


class WordsTest(ModelCase):
    SEED_WORD = re.compile(r"(?<![\w-])seed(?!_)(?!\w)", re.IGNORECASE)

    def test_no_seed_in_the_model_tables(self):
        model = ("--hf-config", GPT2_CONFIG, *SWEEP, "--format", "table")
        for args in (("search",) + model, ("layout",) + model,
                     ("layout",) + model + ("--dp", "1,2"),
                     ("layout",) + model + ("--offload-sweep",),
                     ("frontier",) + model):
            with self.subTest(args=args):
                out = self.local(*args)
                self.assertIsNone(self.SEED_WORD.search(out), out)

    def test_frontier_value_has_its_unit(self):
        for objective, unit in (("seed_waste", "elements"),
                                ("layout_padding", "elements"),
                                ("peak_rank_bytes", "bytes")):
            out = self.local("frontier", "--hf-config", GPT2_CONFIG, *SWEEP,
                             "--objective", objective, "--format", "table")
            header = next(line for line in out.splitlines()
                          if line.startswith("candidate"))
            self.assertIn(f"value ({unit})", header)


class GpuPresetsTest(ModelCase):
    # Total memory as published nvidia-smi output prints it (MiB), read from
    # the sources the docs cite: H100 SXM "0MiB / 81559MiB" (NVIDIA/nccl
    # #1264), RTX 4090 "507MiB / 24564MiB" (RLinf/RLinf#255), RTX 3090
    # "22598MiB / 24576MiB" (club-3090#1128), the Modal table for H200 and
    # A100 80GB.
    PUBLISHED_MIB = {"h100-sxm": 81559, "rtx-4090": 24564,
                     "rtx-3090": 24576, "h200": 143771, "a100-80gb": 81920}
    ROOT = pathlib.Path(cli_test.ROOT)

    def listed(self):
        """(name, MiB, nvidia-smi name) per row of `chunkplan gpus`."""
        result = run("gpus")
        self.assertOk(result)
        return [(m.group(1), int(m.group(2)), m.group(3)) for m in re.finditer(
            r"(?m)^([a-z0-9-]+)\s+(\d+)\s+[\d.]+\s+(.+)$", result.stdout)]

    def test_presets_are_the_published_figures(self):
        mib = {name: m for name, m, _ in self.listed()}
        for name, want in self.PUBLISHED_MIB.items():
            self.assertEqual(mib[name], want, name)

    def test_docs_table_lists_every_preset(self):
        """docs/gpu-presets.md: one row `| name | MiB | card | source |` per
        entry of common/gpu_presets.inc, in order, with the same figures."""
        entries = re.findall(
            r'^CHUNKPLAN_GPU\("([a-z0-9-]+)", ([0-9]+), "([^"]*)", '
            r'"([^"]*)"\)$',
            (self.ROOT / "common" / "gpu_presets.inc").read_text(),
            re.MULTILINE)
        rows = re.findall(r"^\| `([a-z0-9-]+)` \| ([0-9,]+) \| ([^|]+) \| "
                          r"<?(https://[^ |>]+)>? \|",
                          (self.ROOT / "docs" / "gpu-presets.md").read_text(),
                          re.MULTILINE)
        want = [(n, int(m), c, src) for n, m, c, src in entries]
        self.assertEqual([(n, int(m.replace(",", "")), c.strip(), src)
                          for n, m, c, src in rows], want)
        self.assertEqual(self.listed(), [w[:3] for w in want])


class TensorParallelTest(ModelCase):
    """--tp-size: describe lists tp rank 0's shards as the policy oracle
    (tests/oracle/tp_oracle.py) gives them; a family without a policy is
    refused naming the setting; --emit carries tp_size."""

    def test_describe_lists_the_oracles_shards(self):
        import tp_oracle  # noqa: E402  (tests/oracle)
        got = json.loads(self.local("describe", "--hf-config", LLAMA_CONFIG,
                                    "--tp-size", "2", note=""))
        config = cli_test.load(LLAMA_CONFIG)
        want = tp_oracle.shard(oracle_models.describe(config), config, 2)
        self.assertEqual(got["names"], want.names)
        self.assertEqual([int(n) for n in got["numels"]], want.numels)
        self.assertEqual(got["tp_size"], 2)
        self.assertEqual(int(got["padded_vocab_size"]), want.padded_vocab_size)

    def test_llama2_70b_at_world_16_and_tp_2_is_the_oracles_layout(self):
        """The issue's figure: world 16 = zero 8 x tp 2; every rank's bytes
        as the layout oracle gives them for the policy oracle's shards
        spread over the zero group."""
        import tp_oracle  # noqa: E402  (tests/oracle)
        path = os.path.join(cli_test.HF_CONFIGS, "llama-2-70b.json")
        got = json.loads(self.local("layout", "--hf-config", path, "--dp",
                                    "8", "--tp-size", "2", *SWEEP))
        config = cli_test.load(path)
        shards = tp_oracle.shard(oracle_models.describe(config), config, 2)
        want = oracle_layout({"search": {"numels": shards.numels,
                                         "dp_degrees": [8], **SEARCH}})
        self.assertEqual(layout_part(got), layout_part(want))

    def test_a_family_without_a_policy_is_refused(self):
        config = json.dumps({"model_type": "gemma", "num_hidden_layers": 1})
        result = run("describe", "--local", "--hf-config", "-",
                     "--tp-size", "2", stdin=config)
        self.assertEqual(result.returncode, FAILED, result.stderr)
        self.assertIn("gemini.tp_size", result.stderr)
        self.assertIn('"gemma"', result.stderr)

    def test_emit_carries_the_mesh(self):
        out = self.local("layout", "--hf-config", LLAMA_CONFIG, "--dp", "2",
                         *SWEEP, "--tp-size", "2", "--extra-dp-size", "2",
                         "--emit", "colossalai")
        call = ast.parse(out.strip(), mode="eval").body
        kwargs = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
        self.assertEqual(kwargs["tp_size"], 2)
        self.assertEqual(kwargs["extra_dp_size"], 2)
        self.assertEqual(list(kwargs["chunk_config_dict"]), [2])


class SequenceParallelTest(ModelCase):
    """--sequence-parallelism where GeminiPlugin's step fails: refused,
    naming the setting and the family in ColossalAI's words."""

    def test_sequence_parallelism_geminiplugin_cannot_run_is_refused(self):
        """docs/tensor-parallelism.md: LLaMA's attention forward asserts a
        sequence group (every mesh, so describe refuses); GPT-2's gathers
        over the world (layout refuses zero x extra_dp > 1). The words are
        the policy oracle's, from ColossalAI's text."""
        import tp_oracle  # noqa: E402  (tests/oracle)
        config = cli_test.load(LLAMA_CONFIG)
        with self.assertRaises(tp_oracle.SpRefused) as llama:
            tp_oracle.shard(oracle_models.describe(config), config, 2, True)
        with self.assertRaises(tp_oracle.SpRefused) as gpt2:
            tp_oracle.sequence_parallel_mesh("gpt2", 2, 2, True)
        for args, words, family in (
                (("describe", "--hf-config", LLAMA_CONFIG), llama, "llama"),
                (("layout", "--hf-config", GPT2_CONFIG, "--dp", "2", *SWEEP),
                 gpt2, "gpt2")):
            result = run(*args, "--local", "--tp-size", "2",
                         "--sequence-parallelism")
            self.assertEqual(result.returncode, FAILED, result.stderr)
            self.assertIn("gemini.enable_sequence_parallelism", result.stderr)
            self.assertIn(f'"{family}"', result.stderr)
            self.assertIn(str(words.exception), result.stderr)


if __name__ == "__main__":
    unittest.main()
