#!/usr/bin/python3
"""End-to-end tests of the `chunkplan` command line, run on the built binary.

Environment:
  CHUNKPLAN_CLI             the chunkplan binary (required)
  CHUNKPLAN_SERVER          the chunkplan-server binary; RealServerTest is
                            skipped where it does not exist
  CHUNKPLAN_PROTOC          protoc, for the stand-in server's Python stubs
                            (default: protoc on PATH)
  CHUNKPLAN_GRPC_PROTO_DIR  holds grpc/health/v1/health.proto

Expected answers come from ColossalAI's published figure (GPT-2 test model:
chunk size 527872) and from the oracle (tests/oracle), never from chunkplan.

  CHUNKPLAN_CLI=build/bin/chunkplan /usr/bin/python3 tests/e2e/cli_test.py -v
"""

import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")
GPT2 = {1: os.path.join(EXAMPLES, "gpt2_colossalai.json"),
        4: os.path.join(EXAMPLES, "gpt2_colossalai_dp4.json")}
# ColossalAI's published answer for its GPT-2 test model, at dp 1 and dp 4.
GPT2_CHUNK_SIZE = 527872
HF_CONFIGS = os.path.join(ROOT, "tests", "python", "data", "hf_configs")
GPT2_CONFIG = os.path.join(HF_CONFIGS, "colossalai-gpt2-test.json")
LLAMA_CONFIG = os.path.join(HF_CONFIGS, "llama-2-7b.json")
DEFAULT_INTERVAL_NOTE = ("search interval 1024 (GeminiPlugin's default: no "
                         "hidden_dim; set it with --hidden-dim when the "
                         "trainer passes one)\n")
CPU_ENGINES = ("cpu_sweep", "cpu_plateau")
USAGE, FAILED = 2, 1
ERROR_LINE = re.compile(r"^[A-Z_]+: \S.*\n$")

sys.path.insert(0, os.path.join(ROOT, "tests", "oracle"))
import chunk_search_oracle as oracle  # noqa: E402
import layout_oracle  # noqa: E402
import models as oracle_models  # noqa: E402  (tests/oracle/models)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_fake_server  # noqa: E402


def cli():
    path = os.environ.get("CHUNKPLAN_CLI", "")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"CHUNKPLAN_CLI={path!r} is not executable")
    return path


def run(*args, stdin=None):
    return subprocess.run([cli(), *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


def load(path):
    with open(path) as f:
        return json.load(f)


def answer_part(response):
    """What the seed answers: (configs, total, waste), as plain values."""
    configs = [(int(c["dp_degree"]), int(c["chunk_size"]),
                bool(c["keep_gathered"])) for c in response["configs"]]
    return configs, int(response["total_param_size"]), int(
        response["min_chunk_waste"])


def without_nanos(stdout):
    response = json.loads(stdout)
    del response["search_nanos"]
    return response


def oracle_requests():
    """Requests the oracle answers (no errors): the GPT-2 examples, a
    mixed-degree model with a kept-gathered group, one with the filter off,
    and random ones from a fixed seed."""
    requests = [load(GPT2[1]), load(GPT2[4])]
    requests.append({  # dp 4 totals 11048 < round(0.05 * 2**20): gathered
        "numels": [1000, 5000, 300, 70000, 2048, 4096, 100000, 9000],
        "dp_degrees": [1, 2, 1, 2, 4, 2, 1, 4],
        "search_range_m": 0.5, "search_interval": 64,
        "min_chunk_size_m": 0.05})
    requests.append({
        "numels": [7, 1 << 22, 3000, 3000, 12345, 999, 65536],
        "search_range_m": 0.25, "search_interval": 100,
        "min_chunk_size_m": 0, "filter_exlarge_params": False})
    rng = random.Random(20240601)
    for _ in range(6):
        n = rng.randint(1, 60)
        request = {
            "numels": [rng.randint(1, 200000) for _ in range(n)],
            "search_range_m": rng.choice([0.25, 0.5, 1]),
            "search_interval": rng.choice([16, 128, 1000]),
            "min_chunk_size_m": rng.choice([0, 0.05, 0.1]),
            "filter_exlarge_params": rng.random() < 0.5,
        }
        if rng.random() < 0.5:
            request["dp_degrees"] = [rng.choice([1, 2, 4, 8]) for _ in range(n)]
        requests.append(request)
    return requests


def layout_requests(seed):
    """LayoutRequests the layout oracle answers: the GPT-2 example searched,
    with frozen parameters and with given configs, and random ones (several
    degrees, zero sizes, tensors above the chunk size, every setting)."""
    gpt2 = load(GPT2[4])
    requests = [{"search": gpt2},
                {"search": gpt2,
                 "frozen": [i % 5 == 0 for i in range(len(gpt2["numels"]))],
                 "gemini": {"master_weights": False, "pin_memory": False}},
                {"search": gpt2,
                 "configs": [{"dp_degree": 4, "chunk_size": 1 << 20}]}]
    rng = random.Random(seed)
    while len(requests) < 24:
        n = rng.randint(1, 40)
        numels = [rng.choice([0, rng.randint(1, 5000),
                              rng.randint(5000, 300000)]) for _ in range(n)]
        degrees = [rng.choice([1, 2, 4, 8]) for _ in range(n)]
        request = {"search": {"numels": numels, "dp_degrees": degrees,
                              "search_range_m": 0.05,
                              "search_interval": rng.choice([64, 1000]),
                              "min_chunk_size_m": rng.choice([0, 0.01])},
                   "gemini": {
                       "precision": rng.choice(["PRECISION_FP16",
                                                "PRECISION_BF16"]),
                       "master_weights": rng.random() < 0.5,
                       "gradient_accumulation": rng.random() < 0.5,
                       "pin_memory": rng.random() < 0.5,
                       "optimizer": rng.choice(["OPTIMIZER_ADAM",
                                                "OPTIMIZER_NONE"])}}
        if rng.random() < 0.5:
            request["frozen"] = [rng.random() < 0.3 for _ in range(n)]
        if rng.random() < 0.5:
            request["configs"] = [
                {"dp_degree": d, "chunk_size": d * rng.randint(1, 40000),
                 "keep_gathered": rng.random() < 0.2}
                for d in dict.fromkeys(degrees)]
        requests.append(request)
    return requests


def layout_answer(response):
    """A LayoutResponse without what the oracle does not give: the search's
    engine, candidates and time, the model reports (their totals are held
    to the request's numels by config_keys_cli_test.py), and
    activation_bytes where it is "0" (the oracle's requests carry no
    workload; any other figure stays, to differ)."""
    response.pop("model_report", None)
    for key in ("engine", "candidates", "search_nanos", "model_report"):
        response.get("search", {}).pop(key, None)
    for key in ("activation_bytes", "transient_bytes"):
        if response.get(key) == "0":
            del response[key]
    return response


class CliTestCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="chunkplan_cli_test_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, content, name="request.json"):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def assertOk(self, result):
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")

    def assertFails(self, result, exit_code, prefix):
        """Exit `exit_code`, nothing on stdout, one "CODE: message" line on
        stderr that starts with `prefix`."""
        self.assertEqual(result.returncode, exit_code, result.stderr)
        self.assertEqual(result.stdout, "")
        self.assertRegex(result.stderr, ERROR_LINE)
        self.assertTrue(result.stderr.startswith(prefix), result.stderr)

    def search_json(self, *args, stdin=None):
        result = run("search", *args, stdin=stdin)
        self.assertOk(result)
        self.assertEqual(result.stdout.count("\n"), 1, "one JSON line")
        return json.loads(result.stdout)

    def layout_json(self, *args, stdin=None):
        result = run("layout", *args, stdin=stdin)
        self.assertOk(result)
        self.assertEqual(result.stdout.count("\n"), 1, "one JSON line")
        return json.loads(result.stdout)


class LocalSearchTest(CliTestCase):
    def test_gpt2_published_chunk_size(self):
        for dp, path in GPT2.items():
            total = sum(load(path)["numels"])
            for engine in CPU_ENGINES + ("auto",):
                with self.subTest(dp=dp, engine=engine):
                    response = self.search_json("--local", "--request", path,
                                                "--engine", engine)
                    configs, got_total, _ = answer_part(response)
                    self.assertEqual(configs, [(dp, GPT2_CHUNK_SIZE, False)])
                    self.assertEqual(got_total, total)
                    if engine != "auto":
                        self.assertEqual(response["engine"],
                                         "ENGINE_" + engine.upper())

    def test_json_output_equals_oracle(self):
        for i, request in enumerate(oracle_requests()):
            expected = oracle.search(request)
            self.assertNotIn("error", expected, request)
            path = self.write(request, f"request{i}.json")
            for engine in CPU_ENGINES:
                with self.subTest(request=i, engine=engine):
                    response = self.search_json("--local", "--request", path,
                                                "--engine", engine)
                    self.assertEqual(
                        set(response),
                        {"configs", "total_param_size", "min_chunk_waste",
                         "engine", "candidates", "search_nanos",
                         "model_report"})
                    self.assertEqual(answer_part(response),
                                     answer_part(expected))
                    self.assertEqual(
                        int(response["model_report"]["total_param_size"]),
                        sum(int(n) for n in request["numels"]))

    def test_request_engine_is_kept_without_flag(self):
        request = dict(load(GPT2[1]), engine="ENGINE_CPU_SWEEP")
        response = self.search_json("--local", "--request", self.write(request))
        self.assertEqual(response["engine"], "ENGINE_CPU_SWEEP")

    def test_dash_reads_stdin(self):
        with open(GPT2[4]) as f:
            content = f.read()
        from_file = self.search_json("--local", "--request", GPT2[4])
        del from_file["search_nanos"]
        for flag in (["--request", "-"], ["--request=-"]):
            with self.subTest(flag=flag):
                result = run("search", "--local", *flag, stdin=content)
                self.assertOk(result)
                self.assertEqual(without_nanos(result.stdout), from_file)

    def test_table(self):
        result = run("search", "--local", "--request", GPT2[1],
                     "--format", "table")
        self.assertOk(result)
        lines = result.stdout.splitlines()
        total = sum(load(GPT2[1])["numels"])
        self.assertEqual(lines[0], "parameters    " + format(total, ","))
        self.assertIn("MiB", lines[2])
        # 527872 / 2**20 = 0.5034 MiB
        self.assertRegex(result.stdout, r"(?m)^\s*1\s+527872\s+0\.50\s+no$")
        self.assertRegex(result.stdout,
                         r"(?m)^total params\s+%d$" % sum(load(GPT2[1])["numels"]))
        self.assertRegex(result.stdout, r"(?m)^engine\s+CPU_PLATEAU$")
        self.assertRegex(result.stdout, r"(?m)^time\s+\d+\.\d+ (µs|ms)$")

    def test_table_waste_and_gathered_rows(self):
        request = oracle_requests()[2]
        expected = oracle.search(request)
        configs, total, waste = answer_part(expected)
        self.assertTrue(any(c[2] for c in configs) and waste > 0)
        result = run("search", "--local", "--request", self.write(request),
                     "--format=table", "--engine=cpu_sweep")
        self.assertOk(result)
        for dp, chunk, gathered in configs:
            self.assertRegex(result.stdout, r"(?m)^\s*%d\s+%d\s+%s\s+%s$" % (
                dp, chunk, re.escape("%.2f" % (chunk / 2**20)),
                "yes" if gathered else "no"))
        self.assertIn("waste         %d elements (%.2f%% of total)" % (
            waste, 100.0 * waste / total), result.stdout)
        self.assertRegex(result.stdout, r"(?m)^engine\s+CPU_SWEEP$")

    def test_invalid_degree(self):
        path = self.write({"numels": [1, 2, 3, 4], "dp_degrees": [1, 1, 1, 0],
                           "search_range_m": 1, "search_interval": 128})
        self.assertFails(run("search", "--local", "--request", path), FAILED,
                         "INVALID_ARGUMENT: dp_degrees[3]")

    def test_interval_zero(self):
        path = self.write({"numels": [1, 2, 3, 4], "search_range_m": 1,
                           "search_interval": 0})
        result = run("search", "--local", "--request", path)
        self.assertFails(result, FAILED, "INVALID_ARGUMENT: ")
        self.assertIn("search_interval", result.stderr)

    def test_malformed_json(self):
        path = self.write('{"numels": [1, 2,', "broken.json")
        result = run("search", "--local", "--request", path)
        self.assertFails(result, FAILED, "INVALID_ARGUMENT: ")
        self.assertIn("broken.json", result.stderr)

    def test_unknown_field(self):
        path = self.write({"numels": [1], "search_interval": 1,
                           "chunk_sise": 5})
        result = run("search", "--local", "--request", path)
        self.assertFails(result, FAILED, "INVALID_ARGUMENT: ")
        self.assertIn("chunk_sise", result.stderr)

    def test_missing_file(self):
        path = os.path.join(self.tmp, "no_such_request.json")
        result = run("search", "--local", "--request", path)
        self.assertFails(result, FAILED, "NOT_FOUND: ")
        self.assertIn(path, result.stderr)

    def test_cuda_engine_is_unavailable(self):
        self.assertFails(run("search", "--local", "--request", GPT2[1],
                             "--engine", "cuda"),
                         FAILED, "FAILED_PRECONDITION: ")

    def test_usage_errors(self):
        cases = {
            "unknown subcommand": ["serch", "--local", "--request", GPT2[1]],
            "no subcommand": [],
            "missing --request": ["search", "--local"],
            "both --local and --server": ["search", "--local", "--server",
                                          "127.0.0.1:1", "--request", GPT2[1]],
            "neither --local nor --server": ["search", "--request", GPT2[1]],
            "unknown flag": ["search", "--local", "--request", GPT2[1],
                             "--engin", "cuda"],
            "bad --engine": ["search", "--local", "--request", GPT2[1],
                             "--engine", "gpu"],
            "bad --format": ["search", "--local", "--request", GPT2[1],
                             "--format", "yaml"],
            "bad --deadline": ["search", "--server", "127.0.0.1:1",
                               "--request", GPT2[1], "--deadline", "soon"],
            "--deadline with --local": ["search", "--local", "--request",
                                        GPT2[1], "--deadline", "5s"],
            "health without --server": ["health"],
            "extra argument": ["search", "--local", "--request", GPT2[1],
                               "again"],
        }
        for name, args in cases.items():
            with self.subTest(name):
                self.assertFails(run(*args), USAGE, "INVALID_ARGUMENT: ")

    def test_version(self):
        with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
            version = re.search(r"project\(chunkplan VERSION ([0-9.]+)",
                                f.read()).group(1)
        for args in (["--version"], ["version"]):
            with self.subTest(args=args):
                result = run(*args)
                self.assertOk(result)
                lines = result.stdout.splitlines()
                self.assertEqual(lines[0], f"chunkplan {version}")
                engines = lines[1].split()
                self.assertEqual(engines[0], "engines:")
                self.assertTrue(set(CPU_ENGINES) <= {
                    e.lower() for e in engines[1:]}, lines[1])


class LocalLayoutTest(CliTestCase):
    """`chunkplan layout --local` against tests/oracle/layout_oracle.py."""

    def test_json_output_equals_oracle(self):
        seed = random.randrange(1 << 30)
        for i, request in enumerate(layout_requests(seed)):
            expected = layout_oracle.layout(request)
            self.assertNotIn("error", expected, request)
            path = self.write(request, f"layout{i}.json")
            for engine in CPU_ENGINES:
                with self.subTest(seed=seed, request=i, engine=engine):
                    response = self.layout_json("--local", "--request", path,
                                                "--engine", engine)
                    if "search" in response:
                        self.assertEqual(response["search"]["engine"],
                                         "ENGINE_" + engine.upper())
                    self.assertEqual(layout_answer(response),
                                     json.loads(json.dumps(expected)))

    def test_table_shows_real_padding_beside_the_seeds_waste(self):
        request = layout_requests(0)[0]
        expected = layout_oracle.layout(request)
        result = run("layout", "--local", "--request", self.write(request),
                     "--format", "table")
        self.assertOk(result)
        text = result.stdout
        self.assertIn(f"real padding   {expected['layout_padding']} elements",
                      text)
        self.assertIn(
            f"search's waste {expected['search']['min_chunk_waste']} elements",
            text)
        most = expected["most_loaded_rank"]
        least = expected["least_loaded_rank"]
        row = [line for line in text.splitlines()
               if line.startswith("device total")]
        self.assertEqual(len(row), 1, text)
        gib = [float(x) for x in re.findall(r"([0-9.]+) GiB", row[0])]
        # The most loaded rank under its worst and best chunk order (equal
        # with nothing offloaded), then the least loaded.
        best = expected["most_loaded_rank_least"]
        self.assertEqual(gib, [round(int(most["device_bytes"]) / 2**30, 2),
                               round(int(best["device_bytes"]) / 2**30, 2),
                               round(int(least["device_bytes"]) / 2**30, 2)])
        for group in expected["groups"]:
            self.assertRegex(text, rf"\s{group['dp_degree']}\s+"
                             rf"{group['chunk_size']}\s+no\s+"
                             rf"{len(group['chunks'])}\s+{group['padding']}\n")

    def test_placement_flags_reach_the_request(self):
        # Issue 27: --offload_optim_frac replaces the request's, and the
        # table's host rows and notes carry the oracle's placement.
        request = {"search": {"numels": [100, 200, 300, 50, 60, 70],
                              "search_interval": 1},
                   "configs": [{"dp_degree": 1, "chunk_size": 400}]}
        expected = layout_oracle.layout(
            dict(request, gemini={"offload_optim_frac": 0.3}))
        result = run("layout", "--local", "--request", self.write(request),
                     "--format", "table", "--offload_optim_frac", "0.3")
        self.assertOk(result)
        row = [line for line in result.stdout.splitlines()
               if line.startswith("offloaded host")]
        self.assertEqual(len(row), 1, result.stdout)
        self.assertIn(expected["placement"]["notes"][0], result.stdout)
        result = run("layout", "--local", "--request", self.write(request),
                     "--offload_optim_frac", "0.3")
        self.assertOk(result)
        self.assertEqual(layout_answer(json.loads(result.stdout)),
                         json.loads(json.dumps(expected)))

    def test_invalid_config_names_the_field(self):
        request = {"search": {"numels": [10, 20], "dp_degrees": [4, 2],
                              "search_interval": 1},
                   "configs": [{"dp_degree": 4, "chunk_size": 8},
                               {"dp_degree": 2, "chunk_size": 7}]}
        self.assertIn("error", layout_oracle.layout(request))
        result = run("layout", "--local", "--request", self.write(request))
        self.assertFails(result, FAILED,
                         "INVALID_ARGUMENT: configs[1].chunk_size")

    def test_a_search_request_is_no_layout_request(self):
        result = run("layout", "--local", "--request", GPT2[1])
        self.assertFails(result, FAILED, "INVALID_ARGUMENT: ")
        self.assertIn("not valid chunkplan.v1.LayoutRequest", result.stderr)

    def test_usage(self):
        self.assertFails(run("layout", "--request", GPT2[1]), USAGE,
                         "INVALID_ARGUMENT: layout needs exactly one of "
                         "--local and --server")
        self.assertFails(run("layout", "--local"), USAGE,
                         "INVALID_ARGUMENT: layout needs exactly one of "
                         "--request FILE (or -), --hf-config FILE and "
                         "--params FILE")


def frontier_requests(seed):
    """Searched LayoutRequests small enough for the oracle's brute force,
    each with every objective."""
    requests = []
    for request in layout_requests(seed):
        if "configs" in request:
            continue
        for objective in ("OBJECTIVE_SEED_WASTE", "OBJECTIVE_LAYOUT_PADDING",
                          "OBJECTIVE_PEAK_RANK_BYTES"):
            requests.append(dict(request, objective=objective))
    return requests[:24]


def frontier_answer(response):
    """A FrontierResponse without the server's own fields (the model
    report's total is held to the numels by config_keys_cli_test.py)."""
    for key in ("engine", "search_nanos", "model_report"):
        response.pop(key, None)
    return response


class LocalFrontierTest(CliTestCase):
    """`chunkplan frontier --local` against the oracle's brute force."""

    def test_json_output_equals_oracle(self):
        seed = random.randrange(1 << 30)
        for i, request in enumerate(frontier_requests(seed)):
            expected = layout_oracle.frontier(request)
            self.assertNotIn("error", expected, request)
            with self.subTest(seed=seed, request=i):
                result = run("frontier", "--local", "--request",
                             self.write(request, f"frontier{i}.json"))
                self.assertOk(result)
                self.assertEqual(frontier_answer(json.loads(result.stdout)),
                                 json.loads(json.dumps(expected)))

    def test_table_has_a_row_per_point(self):
        request = frontier_requests(0)[1]
        expected = layout_oracle.frontier(request)
        result = run("frontier", "--local", "--request", self.write(request),
                     "--format", "table")
        self.assertOk(result)
        rows = [line.split() for line in result.stdout.splitlines()[1:]
                if line.strip() and line.split()[0].isdigit()]
        self.assertEqual([(r[0], r[1], r[2]) for r in rows],
                         [(p["candidate"], p["chunk_size"], p["value"])
                          for p in expected["points"]])

    def test_a_workload_under_a_placement_equals_oracle(self):
        # Issue 27 on a workload model (bench/workloads/llama-2-70b.json)
        # with a narrow grid (16 candidates at its interval): the peak with a
        # fifth of the chunks kept whole at run time (the inflated fraction:
        # 0.5 would keep them all).
        with open(os.path.join(ROOT, "bench", "workloads",
                               "llama-2-70b.json")) as f:
            search = json.load(f)
        search["search_range_m"] = 15 * search["search_interval"] / 2**20
        request = {"search": search, "objective": "OBJECTIVE_PEAK_RANK_BYTES"}
        expected = layout_oracle.frontier(
            dict(request, gemini={"shard_param_frac": 0.9}))
        self.assertNotIn("error", expected)
        self.assertEqual(expected["candidates"], "16")
        # The placement changes the answer: the flag must reach the request.
        self.assertNotEqual(expected, layout_oracle.frontier(request))
        result = run("frontier", "--local", "--request", self.write(request),
                     "--shard_param_frac", "0.9")
        self.assertOk(result)
        self.assertEqual(frontier_answer(json.loads(result.stdout)),
                         json.loads(json.dumps(expected)))

    def test_given_configs_are_refused(self):
        request = {"search": {"numels": [10, 20], "search_interval": 1},
                   "configs": [{"dp_degree": 1, "chunk_size": 64}]}
        self.assertIn("error", layout_oracle.frontier(request))
        self.assertFails(run("frontier", "--local", "--request",
                             self.write(request)),
                         FAILED, "INVALID_ARGUMENT: configs")


def model_search(config, dp, interval):
    """The search GeminiPlugin runs for a model, as a ChunkSearchRequest
    dict of the oracle's numels."""
    return {"numels": oracle_models.describe(config).numels,
            "dp_degrees": [dp], "search_range_m": 32,
            "search_interval": interval}


class LocalModelTest(CliTestCase):
    """--hf-config in place of a request, and describe, in this process;
    expected from the oracles (tests/oracle/models and the search oracle)."""

    def run_model(self, command, *args):
        result = run(command, "--local", *args)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def test_search_is_geminis_at_interval_1024_unless_hidden_dim(self):
        for config, dp in ((GPT2_CONFIG, 2), (LLAMA_CONFIG, 8)):
            result = self.run_model("search", "--hf-config", config,
                                    "--dp", str(dp))
            self.assertEqual(result.stderr, DEFAULT_INTERVAL_NOTE)
            want = oracle.search(dict(model_search(config, dp, 1024),
                                      min_chunk_size_m=32,
                                      filter_exlarge_params=True))
            self.assertEqual(answer_part(json.loads(result.stdout)),
                             answer_part(want), config)
        result = self.run_model("search", "--hf-config", GPT2_CONFIG,
                                "--hidden-dim", "128", "--format", "table")
        self.assertTrue(result.stdout.startswith(
            "parameters    %s (gpt2, GPT2LMHeadModel)\n"
            "search interval 128 (--hidden-dim: GeminiPlugin's "
            "hidden_dim)\n" % format(oracle_models.describe(
                GPT2_CONFIG).total, ",")), result.stdout)
        want = oracle.search(dict(model_search(GPT2_CONFIG, 1, 128),
                                  min_chunk_size_m=32,
                                  filter_exlarge_params=True))
        size = want["configs"][0]["chunk_size"]
        self.assertRegex(result.stdout, rf"(?m)^\s+1\s+{size}\s")

    def test_layout_and_frontier_equal_their_numels(self):
        for command in ("layout", "frontier"):
            by_model = self.run_model(command, "--hf-config", GPT2_CONFIG,
                                      "--dp", "2")
            request = self.write({"search": model_search(GPT2_CONFIG, 2,
                                                         1024)})
            by_numels = self.run_model(command, "--request", request)
            self.assertEqual(json.loads(by_model.stdout).keys(),
                             json.loads(by_numels.stdout).keys())
            self.assertEqual(scrub(by_model.stdout), scrub(by_numels.stdout),
                             command)

    def test_describe_lists_the_oracles_parameters(self):
        for config in (GPT2_CONFIG, LLAMA_CONFIG):
            result = self.run_model("describe", "--hf-config", config)
            got = json.loads(result.stdout)
            want = oracle_models.describe(config)
            self.assertEqual([int(n) for n in got["numels"]], want.numels)
            self.assertEqual(got["names"], want.names)
            self.assertEqual(int(got["total"]), want.total)
            self.assertEqual(got["architecture"], want.architecture)
        result = self.run_model("describe", "--hf-config", GPT2_CONFIG,
                                "--architecture", "GPT2Model",
                                "--format", "table")
        self.assertIn("model         gpt2 (GPT2Model)\n", result.stdout)
        self.assertRegex(result.stdout, r"(?m)^\s+0\s+6433024\s+wte.weight$")

    def test_bad_config_and_usage(self):
        bad = self.write('{"model_type": "gpt2", "n_embd": -1}', "bad.json")
        self.assertFails(run("search", "--local", "--hf-config", bad),
                         FAILED, "INVALID_ARGUMENT: model: ")
        self.assertFails(run("describe", "--local", "--hf-config", bad),
                         FAILED, "INVALID_ARGUMENT: ")
        request = self.write({"numels": [5]})
        for args in (("search", "--local", "--hf-config", GPT2_CONFIG,
                      "--request", request),
                     ("search", "--local", "--request", request, "--dp", "2"),
                     ("layout", "--local", "--request", request,
                      "--hidden-dim", "8"),
                     ("search", "--local", "--hf-config", GPT2_CONFIG,
                      "--dp", "0"),
                     ("describe", "--local"),
                     ("describe", "--local", "--hf-config", GPT2_CONFIG,
                      "--dp", "2")):
            self.assertFails(run(*args), USAGE, "INVALID_ARGUMENT: ")


def scrub(stdout):
    """A response without its timing and its report's model (a model's
    answer names it, its numels' does not), for comparing two answers."""
    response = json.loads(stdout)
    response.pop("search_nanos", None)
    for key in ("model_type", "architecture"):
        response.get("model_report", {}).pop(key, None)
    if isinstance(response.get("search"), dict):
        response["search"].pop("search_nanos", None)
    return response


class NothingListeningTest(CliTestCase):
    """A port that is bound but not listening refuses connections."""

    def setUp(self):
        super().setUp()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.target = "127.0.0.1:%d" % self.sock.getsockname()[1]

    def tearDown(self):
        self.sock.close()
        super().tearDown()

    def test_health(self):
        self.assertFails(run("health", "--server", self.target), FAILED,
                         "UNAVAILABLE: ")

    def test_search(self):
        self.assertFails(run("search", "--server", self.target, "--request",
                             GPT2[1], "--deadline", "30s"),
                         FAILED, "UNAVAILABLE: ")

    def test_unix_socket(self):
        target = "unix:" + os.path.join(self.tmp, "absent.sock")
        self.assertFails(run("health", "--server", target), FAILED,
                         "UNAVAILABLE: ")


class FakeServerCase(CliTestCase):
    """Tests against the stand-in server (cli_fake_server): its Python stubs
    generated once per class."""

    @classmethod
    def setUpClass(cls):
        cls.stubs = tempfile.mkdtemp(prefix="chunkplan_stubs_")
        protoc = os.environ.get("CHUNKPLAN_PROTOC") or shutil.which("protoc")
        cli_fake_server.generate_stubs(protoc, cls.stubs)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.stubs, ignore_errors=True)


class FakeServerTest(FakeServerCase):
    """The remote path against a stand-in server that implements the proto
    with Python's gRPC and answers with the oracle."""

    def fake(self, **kwargs):
        return cli_fake_server.FakeServer(oracle.search, **kwargs)

    def test_remote_prints_the_servers_answer(self):
        requests = oracle_requests()[:4]
        with self.fake() as server:
            for i, request in enumerate(requests):
                path = self.write(request, f"request{i}.json")
                with self.subTest(request=i):
                    remote = self.search_json("--server", server.target,
                                              "--request", path,
                                              "--deadline", "60s")
                    local = self.search_json("--local", "--request", path)
                    self.assertEqual(answer_part(remote),
                                     answer_part(oracle.search(request)))
                    self.assertEqual(answer_part(remote), answer_part(local))
                    self.assertEqual(remote["engine"], "ENGINE_CPU_PLATEAU")
            sent = server.requests[0]
            self.assertEqual(list(sent.numels), requests[0]["numels"])
            self.assertEqual(sent.search_interval,
                             requests[0]["search_interval"])

    def test_engine_flag_replaces_the_requests(self):
        request = dict(load(GPT2[1]), engine="ENGINE_CPU_PLATEAU")
        with self.fake() as server:
            response = self.search_json("--server", server.target, "--request",
                                        self.write(request), "--engine",
                                        "cpu_sweep")
            self.assertEqual(server.requests[-1].engine, 1)  # CPU_SWEEP
        self.assertEqual(response["engine"], "ENGINE_CPU_SWEEP")

    def test_server_error_is_passed_through(self):
        request = {"numels": [1, 2, 3, 4], "dp_degrees": [1, 1, 1, 0],
                   "search_range_m": 1, "search_interval": 128}
        expected = oracle.search(request)["error"]
        with self.fake() as server:
            result = run("search", "--server", server.target, "--request",
                         self.write(request))
        self.assertFails(result, FAILED, "INVALID_ARGUMENT: ")
        self.assertEqual(result.stderr, f"INVALID_ARGUMENT: {expected}\n")

    def test_deadline(self):
        with self.fake(hang=True) as server:
            result = run("search", "--server", server.target, "--request",
                         GPT2[1], "--deadline", "200ms")
        self.assertFails(result, FAILED, "DEADLINE_EXCEEDED: ")

    def test_table_remote(self):
        with self.fake() as server:
            result = run("search", "--server", server.target, "--request",
                         GPT2[4], "--format", "table")
        self.assertOk(result)
        self.assertRegex(result.stdout, r"(?m)^\s*4\s+527872\s+0\.50\s+no$")

    def test_health(self):
        with self.fake() as server:
            serving = run("health", "--server", server.target)
            down = run("health", "--server", server.target, "--service",
                       "down")
            unknown = run("health", "--server", server.target, "--service",
                          "nope")
        self.assertOk(serving)
        self.assertEqual(serving.stdout, "SERVING\n")
        self.assertEqual(down.returncode, FAILED)
        self.assertEqual(down.stdout, "NOT_SERVING\n")
        self.assertRegex(down.stderr, ERROR_LINE)
        self.assertTrue(down.stderr.startswith("UNAVAILABLE: "), down.stderr)
        self.assertFails(unknown, FAILED, "NOT_FOUND: ")

    def test_unix_socket(self):
        socket_path = os.path.join(self.tmp, "fake.sock")
        with self.fake(address="unix:" + socket_path) as server:
            self.assertOk(run("health", "--server", server.target))
            response = self.search_json("--server", server.target,
                                        "--request", GPT2[1])
        self.assertEqual(answer_part(response)[0],
                         [(1, GPT2_CHUNK_SIZE, False)])


class RealServerTest(CliTestCase):
    """The CLI against the real chunkplan-server, which prints the address
    it listens on when started with --listen=127.0.0.1:0."""

    @classmethod
    def setUpClass(cls):
        binary = os.environ.get("CHUNKPLAN_SERVER", "")
        if not os.access(binary, os.X_OK):
            raise unittest.SkipTest(
                f"chunkplan-server not built (CHUNKPLAN_SERVER={binary!r})")
        cls.server = subprocess.Popen(
            [binary, "--listen=127.0.0.1:0"], stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        cls.log = []
        for line in cls.server.stdout:  # ends when the server exits
            cls.log.append(line)
            ports = [p for p in re.findall(r"127\.0\.0\.1:(\d+)", line)
                     if p != "0"]
            if ports:
                cls.target = f"127.0.0.1:{ports[-1]}"
                break
        else:
            cls.server.wait()
            raise AssertionError("chunkplan-server exited without a port: "
                                 + "".join(cls.log))
        # Keep draining the log so that the server never blocks on it.
        threading.Thread(target=cls.server.stdout.read, daemon=True).start()

    @classmethod
    def tearDownClass(cls):
        cls.server.terminate()
        try:
            cls.server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            cls.server.kill()
            cls.server.wait()

    def test_health(self):
        result = run("health", "--server", self.target)
        self.assertOk(result)
        self.assertEqual(result.stdout, "SERVING\n")

    def test_model_remote_equals_local(self):
        """--hf-config with --server: the server's answer, as this process
        gives it (held to the oracles by LocalModelTest)."""
        for command in ("search", "layout", "frontier", "describe"):
            args = (command, "--hf-config", LLAMA_CONFIG)
            if command != "describe":
                args += ("--dp", "8")
            remote = run(*args, "--server", self.target, "--deadline", "60s")
            local = run(*args, "--local")
            self.assertEqual(remote.returncode, 0, remote.stderr)
            self.assertEqual(local.returncode, 0, local.stderr)
            self.assertEqual(remote.stderr, local.stderr)
            self.assertEqual(scrub(remote.stdout), scrub(local.stdout),
                             command)
        bad = self.write('{"model_type": "t5"}', "t5.json")
        self.assertFails(run("describe", "--hf-config", bad, "--server",
                             self.target), FAILED, "INVALID_ARGUMENT: ")

    def test_remote_equals_local(self):
        paths = list(GPT2.values())
        paths += [self.write(r, f"request{i}.json")
                  for i, r in enumerate(oracle_requests()[2:])]
        for path in paths:
            for engine in CPU_ENGINES + ("auto",):
                with self.subTest(path=os.path.basename(path), engine=engine):
                    args = ["search", "--request", path, "--engine", engine]
                    remote = run(*args, "--server", self.target,
                                 "--deadline", "60s")
                    local = run(*args, "--local")
                    self.assertOk(remote)
                    self.assertOk(local)
                    self.assertEqual(without_nanos(remote.stdout),
                                     without_nanos(local.stdout))

    def test_gpt2_published_chunk_size(self):
        for dp, path in GPT2.items():
            with self.subTest(dp=dp):
                response = self.search_json("--server", self.target,
                                            "--request", path)
                self.assertEqual(answer_part(response)[0],
                                 [(dp, GPT2_CHUNK_SIZE, False)])

    def test_layout_equals_oracle(self):
        seed = random.randrange(1 << 30)
        for i, request in enumerate(layout_requests(seed)):
            with self.subTest(seed=seed, request=i):
                response = self.layout_json(
                    "--server", self.target, "--deadline", "60s",
                    "--request", self.write(request, f"layout{i}.json"))
                self.assertEqual(
                    layout_answer(response),
                    json.loads(json.dumps(layout_oracle.layout(request))))

    def test_layout_workloads_equal_oracle(self):
        workloads = os.path.join(ROOT, "bench", "workloads")
        for name in sorted(os.listdir(workloads)):
            if not name.endswith(".json") or name.startswith("stress"):
                continue
            request = {"search": load(os.path.join(workloads, name))}
            with self.subTest(workload=name):
                response = self.layout_json(
                    "--server", self.target, "--deadline", "60s",
                    "--request", self.write(request, name))
                self.assertEqual(
                    layout_answer(response),
                    json.loads(json.dumps(layout_oracle.layout(request))))

    def test_frontier_equals_local(self):
        for i, request in enumerate(frontier_requests(7)[:9]):
            path = self.write(request, f"frontier{i}.json")
            with self.subTest(request=i):
                remote = run("frontier", "--server", self.target,
                             "--deadline", "60s", "--request", path)
                local = run("frontier", "--local", "--request", path)
                self.assertOk(remote)
                self.assertOk(local)
                self.assertEqual(frontier_answer(json.loads(remote.stdout)),
                                 frontier_answer(json.loads(local.stdout)))

    def test_layout_errors_equal_local(self):
        path = self.write({"search": {"numels": [1, 2], "search_interval": 1},
                           "frozen": [True]})
        remote = run("layout", "--server", self.target, "--request", path)
        local = run("layout", "--local", "--request", path)
        self.assertFails(remote, FAILED, "INVALID_ARGUMENT: frozen")
        self.assertEqual(remote.stderr, local.stderr)

    def test_errors_equal_local(self):
        path = self.write({"numels": [1, 2, 3, 4], "dp_degrees": [1, 1, 1, 0],
                           "search_range_m": 1, "search_interval": 128})
        remote = run("search", "--server", self.target, "--request", path)
        local = run("search", "--local", "--request", path)
        self.assertFails(remote, FAILED, "INVALID_ARGUMENT: dp_degrees[3]")
        self.assertEqual(remote.stderr, local.stderr)


if __name__ == "__main__":
    unittest.main()
