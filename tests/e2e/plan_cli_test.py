"""End-to-end tests of `chunkplan plan`, run on the built binaries.

  PlanFlagsTest   the request the command line sends, flag by flag (dashes
                  and underscores, memory sizes with units, --gpu presets,
                  the margin, the workload, a request file under flags), to
                  a stand-in server that records it; the table, --emit
                  colossalai and --format json of the answer it gives, each
                  verdict rendered as the server sent it, and the exit
                  status (0 an option fits, 3 none: --emit then prints
                  nothing); usage errors.
  LayoutVerdictTest `chunkplan layout --local` with a device: the verdict
                  equals tests/oracle/layout_oracle.py's (verdict_oracle's
                  rule), exit 0 when it fits and 3 when not.
  PlanServerTest  a real chunkplan-server: the CLI's JSON (remote and
                  --local) equals tests/oracle/plan_oracle.py's answer on a
                  small request. It needs the planner's Plan search (branch
                  wt-planplan) and the oracle (branch wt-oracle): before
                  both are merged it fails (UNIMPLEMENTED, or no oracle).

Expected values come from the flags' meaning (units, common/gpu_presets.inc
read here), the answer the stand-in gives, and the oracle.

  CHUNKPLAN_CLI=build/bin/chunkplan CHUNKPLAN_SERVER=build/bin/chunkplan-server \\
    /usr/bin/python3 tests/e2e/plan_cli_test.py -v
"""

import json
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_fake_server  # noqa: E402
import cli_test  # noqa: E402
from cli_test import (ROOT, USAGE, CliTestCase, FakeServerCase,  # noqa: E402
                      run)
from server_process import ServerProcess  # noqa: E402

GPT2_CONFIG = cli_test.GPT2_CONFIG
GIB, TIB = 2**30, 2**40


def preset_mib(name):
    """A --gpu preset's MiB, read from common/gpu_presets.inc."""
    with open(os.path.join(ROOT, "common", "gpu_presets.inc")) as f:
        for line in f:
            match = re.match(r'CHUNKPLAN_GPU\("([^"]+)", (\d+),', line)
            if match and match.group(1) == name:
                return int(match.group(2))
    raise KeyError(name)


# The stand-in's answer: one option that fits, one that does not.
CANNED = {
    "options": [
        {"world_size": 8, "nodes": 1,
         "gemini": {"placement": "PLACEMENT_STATIC",
                    "offload_optim_frac": 0.25, "precision": "PRECISION_BF16"},
         "configs": [{"dp_degree": 8, "chunk_size": "41943040",
                      "keep_gathered": False}],
         "objective": "OBJECTIVE_PEAK_RANK_BYTES",
         "chunk_size_from": "peak_rank_bytes_wide",
         "device_need_bytes": str(75 * GIB + GIB // 2),
         "host_bytes_per_node": str(300 * GIB),
         "activation_bytes": str(3 * GIB),
         "fits": True,
         "colossalai": 'placement_policy="static", offload_optim_frac=0.25',
         "verdict": {"device_need_bytes": str(75 * GIB + GIB // 2),
                     "device_memory_bytes": str(80 * GIB),
                     "margin": 0.05, "margin_bytes": str(4 * GIB),
                     "headroom_bytes": str(4 * GIB + GIB // 2),
                     "host_bytes_per_node": str(300 * GIB),
                     "fits": True}},
        {"world_size": 16, "nodes": 2,
         "gemini": {"placement": "PLACEMENT_AUTO"},
         "configs": [{"dp_degree": 16, "chunk_size": "65536",
                      "keep_gathered": True}],
         "chunk_size_from": "colossalai_search",
         "device_need_bytes": str(90 * GIB),
         "host_bytes_per_node": str(10 * GIB),
         "fits": False,
         "why_not": "device: 96636764160 > 85899345920 by 10737418240",
         "colossalai": 'placement_policy="auto"',
         "verdict": {"device_need_bytes": str(90 * GIB),
                     "device_memory_bytes": str(80 * GIB), "margin": 0.05,
                     "margin_bytes": str(4 * GIB),
                     "device_excess_bytes": str(14 * GIB),
                     "host_bytes_per_node": str(10 * GIB), "fits": False,
                     "why_not": "device: 96636764160 > 81604378624 by "
                                "15032385536"}},
    ],
    "options_considered": "30",
    "plan_nanos": "1500000",
}

# A tight first option and nothing that fits: exit 3, --emit prints nothing.
TIGHT = {
    "options": [dict(CANNED["options"][0], fits=False, why_not="tight words",
                     verdict={"device_need_bytes": str(78 * GIB),
                              "device_memory_bytes": str(80 * GIB),
                              "margin": 0.05, "margin_bytes": str(4 * GIB),
                              "headroom_bytes": str(2 * GIB),
                              "device_excess_bytes": str(2 * GIB),
                              "fits": False, "tight": True,
                              "why_not": "tight words"}),
                CANNED["options"][1]],
    "options_considered": "2"}

BASE = ("--device-memory", "80GiB", "--gpus-per-node", "8",
        "--world-sizes", "8,16,32")


class PlanFlagsTest(FakeServerCase):
    """`chunkplan plan --server` against a stand-in that records requests."""

    def sent(self, *args, plan=CANNED):
        """The PlanRequest `chunkplan plan --server ... *args` sends, and the
        command's result."""
        with cli_fake_server.FakeServer(lambda r: {}, plan=plan) as server:
            result = run("plan", "--server", server.target, *args)
            self.assertEqual(len(server.requests), 1, result.stderr)
            return server.requests[0], result

    def test_flags_reach_the_request(self):
        request, result = self.sent(
            "--hf-config", GPT2_CONFIG, *BASE, "--host-memory", "1TiB",
            "--reserve", "1.5GiB", "--micro-batch", "2",
            "--sequence-length", "1024", "--activation-checkpointing",
            "--max-options", "3", "--format", "json")
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(GPT2_CONFIG) as f:
            self.assertEqual(request.search.model.hf_config_json, f.read())
        self.assertEqual(list(request.search.numels), [])
        self.assertEqual(list(request.search.dp_degrees), [])
        self.assertEqual(request.search.search_range_m, 32)
        self.assertEqual(request.search.search_interval, 1024)
        cluster = request.cluster
        self.assertEqual(cluster.device_memory_bytes, 80 * GIB)
        self.assertEqual(cluster.host_memory_bytes, TIB)
        self.assertEqual(cluster.gpus_per_node, 8)
        self.assertEqual(list(cluster.world_sizes), [8, 16, 32])
        self.assertEqual(cluster.reserve_bytes, 3 * GIB // 2)
        self.assertFalse(cluster.HasField("margin"))  # the server's 5%
        self.assertTrue(request.HasField("workload"))
        self.assertEqual(request.workload.micro_batch, 2)
        self.assertEqual(request.workload.sequence_length, 1024)
        self.assertTrue(request.workload.activation_checkpointing)
        self.assertFalse(request.workload.flash_attention)
        self.assertEqual(request.max_options, 3)
        # JSON: the answer, one line; the interval note on stderr.
        self.assertEqual(result.stdout.count("\n"), 1)
        self.assertEqual(json.loads(result.stdout)["options_considered"], "30")
        self.assertEqual(result.stderr, cli_test.DEFAULT_INTERVAL_NOTE)

    def test_dashes_and_underscores_are_one_flag(self):
        dashed, _ = self.sent("--hf-config", GPT2_CONFIG, *BASE,
                              "--host-memory", "2TB", "--max-options", "4")
        underscored, _ = self.sent(
            "--hf_config", GPT2_CONFIG, "--device_memory", "80GiB",
            "--gpus_per_node", "8", "--world_sizes", "8,16,32",
            "--host_memory=2TB", "--max_options=4")
        self.assertEqual(dashed.SerializeToString(deterministic=True),
                         underscored.SerializeToString(deterministic=True))
        self.assertEqual(dashed.cluster.host_memory_bytes, 2 * 10**12)
        self.assertFalse(dashed.HasField("workload"))

    def test_the_margin_reaches_the_request(self):
        for text, want in (("0.1", 0.1), ("7.5%", 0.075), ("0", 0.0),
                           (" 12 % ", 0.12)):
            with self.subTest(text=text):
                request, result = self.sent("--hf-config", GPT2_CONFIG, *BASE,
                                            "--margin", text)
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertTrue(request.cluster.HasField("margin"))
                self.assertEqual(request.cluster.margin, want)

    def test_memory_units_and_gpu_presets(self):
        for text, want in (("24GB", 24 * 10**9), ("512MiB", 512 * 2**20),
                           ("1.5TiB", 3 * TIB // 2), ("0.1KB", 100),
                           ("79.99gib", 7999 * GIB // 100),
                           ("  40 GiB ", 40 * GIB)):
            with self.subTest(text=text):
                request, result = self.sent(
                    "--hf-config", GPT2_CONFIG, "--device-memory", text,
                    "--gpus-per-node", "8", "--world-sizes", "8")
                self.assertEqual(result.returncode, 0, result.stderr)
                self.assertEqual(request.cluster.device_memory_bytes, want)
        for name in ("h100-sxm", "rtx-4090", "A100-40GB"):
            with self.subTest(gpu=name):
                request, _ = self.sent("--hf-config", GPT2_CONFIG, "--gpu",
                                       name, "--gpus-per-node", "8",
                                       "--world-sizes", "8")
                self.assertEqual(request.cluster.device_memory_bytes,
                                 preset_mib(name.lower()) * 2**20)

    def test_a_request_file_under_the_flags(self):
        plan = {"search": {"numels": [1000, 2000, 3000],
                           "search_range_m": 0.01, "search_interval": 64},
                "frozen": [False, True, False],
                "gemini": {"precision": "PRECISION_BF16"},
                "cluster": {"device_memory_bytes": "1000",
                            "gpus_per_node": 4, "world_sizes": [2, 4]},
                "max_options": 2}
        path = self.write(plan)
        request, result = self.sent("--request", path, "--format", "json")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(list(request.search.numels), [1000, 2000, 3000])
        self.assertEqual(list(request.frozen), [False, True, False])
        self.assertEqual(request.cluster.device_memory_bytes, 1000)
        self.assertEqual(list(request.cluster.world_sizes), [2, 4])
        self.assertEqual(request.max_options, 2)
        # The flags given replace the file's fields; the others stay.
        request, _ = self.sent("--request", path, "--device-memory", "2KiB",
                               "--world-sizes", "8")
        self.assertEqual(request.cluster.device_memory_bytes, 2048)
        self.assertEqual(list(request.cluster.world_sizes), [8])
        self.assertEqual(request.cluster.gpus_per_node, 4)

    def test_the_table_has_a_row_per_option(self):
        _, result = self.sent("--hf-config", GPT2_CONFIG, *BASE,
                              "--micro-batch", "1", "--sequence-length", "8")
        self.assertEqual(result.returncode, 0, result.stderr)
        out = result.stdout
        self.assertTrue(out.startswith(cli_test.DEFAULT_INTERVAL_NOTE), out)
        self.assertIn("device memory 80.00 GiB per GPU, margin 5% (4.00 GiB) "
                      "kept free", out)
        # The gathered column: GiB (chunks at the peak); nodes after world.
        self.assertRegex(out, r"(?m)^\s+8\s+1\s+static, optim 0\.25\s+"
                              r"41943040\s+"
                              r"peak_rank_bytes_wide\s+\d+\.\d\d \(\d+\)\s+"
                              r"75\.50 / 80\.00\s+"
                              r"4\.50\s+300\.00\s+fits$")
        self.assertRegex(out, r"(?m)^\s+16\s+2\s+auto\s+gathered\s+"
                              r"colossalai_search\s+\d+\.\d\d \(\d+\)\s+"
                              r"90\.00 / 80\.00\s+0\.00"
                              r"\s+10\.00\s+does not fit: device: 96636764160 "
                              r"> 81604378624 by 15032385536$")
        self.assertIn("activations: an ESTIMATE", out)
        self.assertIn("3.00 GiB per rank", out)
        self.assertRegex(out, r"(?m)^options considered\s+30$")
        # Without a workload, no word of activations.
        _, result = self.sent("--hf-config", GPT2_CONFIG, *BASE)
        self.assertNotIn("activations", result.stdout)

    def test_whole_nodes_reach_the_request(self):
        request, result = self.sent(
            "--hf-config", GPT2_CONFIG, "--device-memory", "80GiB",
            "--gpus-per-node", "8", "--whole-nodes", "--max-nodes", "3")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(request.cluster.whole_nodes)
        self.assertEqual(request.cluster.max_nodes, 3)
        self.assertEqual(list(request.cluster.world_sizes), [])
        self.assertIn("8 GPUs per node, whole nodes up to 3", result.stdout)
        self.assertRegex(result.stdout, r"(?m)^world\s+nodes\s+placement")
        # Over a request file's world sizes: whole nodes replace them, and
        # --world-sizes replaces a file's whole nodes.
        path = self.write({"search": {"numels": [1000]},
                           "cluster": {"device_memory_bytes": "1000",
                                       "gpus_per_node": 4,
                                       "world_sizes": [2, 4]}})
        request, _ = self.sent("--request", path, "--whole-nodes",
                               "--max-nodes", "2")
        self.assertEqual((request.cluster.whole_nodes,
                          request.cluster.max_nodes,
                          list(request.cluster.world_sizes)), (True, 2, []))
        path = self.write({"search": {"numels": [1000]},
                           "cluster": {"device_memory_bytes": "1000",
                                       "gpus_per_node": 4,
                                       "whole_nodes": True, "max_nodes": 2}})
        request, _ = self.sent("--request", path, "--world-sizes", "8")
        self.assertEqual((request.cluster.whole_nodes,
                          request.cluster.max_nodes,
                          list(request.cluster.world_sizes)), (False, 0, [8]))

    def test_emit_colossalai_prints_the_first_option(self):
        _, result = self.sent("--hf-config", GPT2_CONFIG, *BASE, "--emit",
                              "colossalai")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stdout, "GeminiPlugin(%s)\n"
                         % CANNED["options"][0]["colossalai"])

    def test_nothing_fits_exits_3_and_emits_nothing(self):
        why = "no option fits; option 1 does not fit (tight): tight words\n"
        _, result = self.sent("--hf-config", GPT2_CONFIG, *BASE, "--emit",
                              "colossalai", plan=TIGHT)
        self.assertEqual(result.returncode, 3, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertTrue(result.stderr.endswith(why), result.stderr)
        for fmt in ("table", "json"):
            with self.subTest(format=fmt):
                _, result = self.sent("--hf-config", GPT2_CONFIG, *BASE,
                                      "--format", fmt, plan=TIGHT)
                self.assertEqual(result.returncode, 3, result.stderr)
                self.assertTrue(result.stderr.endswith(why), result.stderr)
                self.assertIn("tight words", result.stdout)
        _, result = self.sent("--hf-config", GPT2_CONFIG, *BASE, plan=TIGHT)
        self.assertRegex(result.stdout, r"(?m)\s2\.00\s+300\.00\s+does not "
                                        r"fit \(tight\): tight words$")

    def test_usage_errors(self):
        model = ("--hf-config", GPT2_CONFIG, "--local")
        cases = [
            (model + ("--device-memory", "80", "--world-sizes", "8"),
             "--device-memory"),
            (model + ("--device-memory", "80XB"), "is not a memory size"),
            (model + ("--host-memory", "1e3GiB"), "--host-memory"),
            (model + ("--gpu", "h100-sxm", "--device-memory", "80GiB"),
             "one of --gpu and --device-memory"),
            (model + ("--gpu", "nope"), "not a preset"),
            (model + ("--world-sizes", "8,8"), "--world-sizes"),
            (model + ("--world-sizes", "0"), "--world-sizes"),
            (model + ("--world-sizes", "8,x"), "--world-sizes"),
            (model + ("--micro-batch", "2"), "go together"),
            (model + ("--flash-attention",), "need --micro-batch"),
            (model + ("--dp", "8"), "--world-sizes, not --dp"),
            (model + ("--placement", "auto"), "plan chooses the placement"),
            (model + ("--emit", "deepspeed"), "--emit takes colossalai"),
            (model + ("--format", "csv"), "--format"),
            (model + ("--margin", "a lot"), "--margin"),
            (model + ("--whole-nodes",), "go together"),
            (model + ("--max-nodes", "2"), "go together"),
            (model + ("--whole-nodes", "--max-nodes", "2", "--world-sizes",
                      "8"), "takes the place of --world-sizes"),
            (("--local",) + BASE, "exactly one of --request"),
            (("--hf-config", GPT2_CONFIG) + BASE, "exactly one of --local"),
        ]
        for args, message in cases:
            with self.subTest(args=args):
                result = run("plan", *args)
                self.assertFails(result, USAGE, "INVALID_ARGUMENT: ")
                self.assertIn(message, result.stderr)
        # The plan's own flags belong to plan only, the cluster's to plan
        # and layout (--device-memory also to frontier, for auto placement's
        # warm-up); layout judges against a device.
        for command, args, message in (
                ("layout", ("--world-sizes", "8"),
                 "--world-sizes applies to plan only"),
                ("layout", ("--max-options", "2"),
                 "--max-options applies to plan only"),
                ("layout", ("--whole-nodes",),
                 "--whole-nodes applies to plan only"),
                ("layout", ("--max-nodes", "2"),
                 "--max-nodes applies to plan only"),
                ("search", ("--device-memory", "80GiB"),
                 "--device-memory applies to layout, frontier and plan only"),
                ("search", ("--host-memory", "1TiB"),
                 "--host-memory applies to layout and plan only"),
                ("frontier", ("--margin", "0.1"),
                 "--margin applies to layout and plan only"),
                ("frontier", ("--reserve", "1GiB"),
                 "--reserve applies to layout and plan only"),
                ("layout", ("--reserve", "1GiB"), "need --device-memory")):
            with self.subTest(command=command, args=args):
                result = run(command, *model, *args)
                self.assertFails(result, USAGE, "INVALID_ARGUMENT: ")
                self.assertIn(message, result.stderr)

    def test_help_lists_plan(self):
        result = run("--help")
        self.assertIn("chunkplan plan", result.stdout + result.stderr)
        self.assertIn("--world-sizes", result.stdout + result.stderr)


def small_plan_request():
    """A plan the brute-force oracle answers in moments (under a second): a
    few tensors, one frozen, a small grid, two world sizes, and memories
    where one option fits (a partial optimizer offload), others fail on the
    device, the host or both, and the fractions found include a denormal
    and a fraction just above 0.2."""
    return {"search": {"numels": [5000, 120000, 3000, 70000, 64, 9000],
                       "search_range_m": 0.05, "search_interval": 512,
                       "min_chunk_size_m": 0},
            "frozen": [False, False, True, False, False, False],
            "cluster": {"device_memory_bytes": "1200000",
                        "host_memory_bytes": "1300000",
                        "gpus_per_node": 2, "world_sizes": [2, 4],
                        "reserve_bytes": "100000"},
            "max_options": 50}


class LayoutVerdictTest(CliTestCase):
    """`chunkplan layout --local` with a device, against the layout
    oracle's verdict (verdict_oracle's rule)."""

    # Two chunks of 100 at dp 2 (tests/fit/verdict_test.cc): rank 0 holds
    # 1400 device bytes and 600 pinned host bytes, the gathered chunk 200.
    REQUEST = {"search": {"numels": [100, 60], "dp_degrees": [2],
                          "search_interval": 1},
               "configs": [{"dp_degree": 2, "chunk_size": 100}]}

    def verdict(self, *flags, code):
        path = self.write(self.REQUEST)
        result = run("layout", "--local", "--request", path, "--format",
                     "json", *flags)
        self.assertEqual(result.returncode, code, result.stderr)
        got = json.loads(result.stdout)["verdict"]
        sent = run("layout", "--local", "--request", path, "--format", "table",
                   *flags)
        self.assertEqual(sent.returncode, code, sent.stderr)
        return got, sent

    def test_the_verdict_is_the_oracles(self):
        import layout_oracle  # noqa: E402  (tests/oracle, on sys.path)
        # Sizes in KB (10^3 bytes): the flags take no bare byte counts.
        for memory, margin, host, code in (
                (2000, "0.1", None, 0),   # 1700 of 1800: fits
                (1750, "10%", None, 3),   # within 1750, not 1575: tight
                (2000, "0.1", 1000, 3),   # the host: 1200 > 1000
                (1699, "0", None, 3)):    # over the whole memory
            flags = ["--device-memory", f"{memory / 1000}KB", "--reserve",
                     "0.1KB", "--margin", margin]
            cluster = {"device_memory_bytes": memory,
                       "reserve_bytes": 100,
                       "margin": float(margin.rstrip("%")) / (
                           100 if margin.endswith("%") else 1)}
            if host:
                flags += ["--host-memory", f"{host / 1000}KB",
                          "--gpus-per-node", "8"]
                cluster.update(host_memory_bytes=host, gpus_per_node=8)
            with self.subTest(flags=flags):
                got, table = self.verdict(*flags, code=code)
                want = layout_oracle.layout(dict(self.REQUEST,
                                                 cluster=cluster))["verdict"]
                self.assertEqual(got, json.loads(json.dumps(want)))
                words = ("fits" if want["fits"] else
                         ("does not fit (tight): " if want["tight"] else
                          "does not fit: ") + want["why_not"])
                self.assertIn("verdict        " + words + "\n", table.stdout)
                if code == 3:
                    self.assertTrue(table.stderr.endswith(words + "\n"),
                                    table.stderr)

    def test_no_device_no_verdict(self):
        result = run("layout", "--local", "--request",
                     self.write(self.REQUEST), "--format", "json")
        self.assertOk(result)
        self.assertNotIn("verdict", json.loads(result.stdout))


class PlanServerTest(CliTestCase):
    """The CLI's Plan through a real server and locally, against the
    oracle. Fails until the Plan search and its oracle are merged."""

    def test_json_equals_the_oracle(self):
        binary = os.environ.get("CHUNKPLAN_SERVER", "")
        self.assertTrue(os.access(binary, os.X_OK), binary)
        sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
        import plan_oracle  # noqa: E402  (branch wt-oracle)
        request = small_plan_request()
        expected = plan_oracle.plan(request)
        self.assertNotIn("error", expected)
        self.assertGreater(len(expected["options"]), 0)
        path = self.write(request)
        with ServerProcess(binary, "--threads=2") as server:
            remote = run("plan", "--server", server.target, "--request", path,
                         "--format", "json", "--deadline", "60s")
        local = run("plan", "--local", "--request", path, "--format", "json")
        code = 0 if any(o["fits"] for o in expected["options"]) else 3
        for result in (remote, local):
            self.assertEqual(result.returncode, code, result.stderr)
        answers = [json.loads(r.stdout) for r in (remote, local)]
        for answer in answers:
            answer.pop("plan_nanos", None)
            # The total the oracle does not give: the request's numels'.
            self.assertEqual(
                int(answer.pop("model_report")["total_param_size"]),
                sum(int(n) for n in request["search"]["numels"]))
        expected = json.loads(json.dumps(expected))
        expected.pop("plan_nanos", None)
        self.assertEqual(answers[0], expected)
        self.assertEqual(answers[1], expected)

    def test_whole_nodes_equal_the_oracle(self):
        """Whole nodes of 2 GPUs up to 3 (world sizes 2, 4, 6), locally:
        the oracle's answer, nodes included, and the first option that fits
        the fewest nodes among those that fit."""
        sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
        import plan_oracle  # noqa: E402
        request = small_plan_request()
        del request["cluster"]["world_sizes"]
        request["cluster"].update(whole_nodes=True, max_nodes=3)
        expected = plan_oracle.plan(request)
        self.assertNotIn("error", expected)
        result = run("plan", "--local", "--request", self.write(request),
                     "--format", "json")
        code = 0 if any(o["fits"] for o in expected["options"]) else 3
        self.assertEqual(result.returncode, code, result.stderr)
        answer = json.loads(result.stdout)
        answer.pop("plan_nanos", None)
        # The total the oracle does not give: the request's numels'.
        self.assertEqual(int(answer.pop("model_report")["total_param_size"]),
                         sum(int(n) for n in request["search"]["numels"]))
        self.assertEqual(answer, json.loads(json.dumps(expected)))
        self.assertEqual({o["world_size"] for o in answer["options"]} -
                         {2, 4, 6}, set())
        for o in answer["options"]:
            self.assertEqual(o["nodes"], -(-o["world_size"] // 2))
        fitting = [o["nodes"] for o in answer["options"] if o["fits"]]
        if fitting:
            self.assertEqual(answer["options"][0]["nodes"], min(fitting))


if __name__ == "__main__":
    unittest.main()
