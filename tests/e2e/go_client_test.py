#!/usr/bin/python3
"""The Go client's example command (client/go/cmd/chunkplan-fit) against a
real chunkplan-server on loopback.

  GoFitTest  chunkplan-fit reads a config.json and asks Layout with a
             cluster; it prints the server's verdict, which equals
             tests/oracle/verdict_oracle.py's judgement of the peak (the
             most loaded rank's device bytes + the gathered chunk) of a
             Layout asked from Python with the model's numels as the
             oracle (tests/oracle/models) lists them, at GeminiPlugin's
             defaults (range 32 Mi, interval 1024), and the
             chunk_config_dict; with no margin a device at the peak fits
             (exit 0) and one byte below does not (exit 3); with the
             default 5% a device at the peak is tight (exit 3); a bad
             config is the server's INVALID_ARGUMENT (exit 1).
  GoPlanTest chunkplan-plan reads a config.json and asks Plan; its first
             option's verdict, device need, host bytes per node, headroom,
             margin, GeminiPlugin(...) line (only when it fits) and exit
             status (0 fits, 3 not) equal the plan oracle's
             (tests/oracle/plan_oracle.py) for the request it sends
             (GeminiPlugin's search defaults, the cluster of its flags);
             its first option's nodes are the oracle's; usage errors (a
             size without a unit, an unknown --gpu, no device memory, no
             world sizes) exit 2. The oracle cases skip, saying "plan
             oracle not found", where the oracle is not in the tree.
  GoParityTest
             one job (a model on whole nodes) asked by chunkplan-plan
             --format json, by the C++ `chunkplan plan --format json` and by
             the Python client's Client.plan: the three PlanResponses equal
             field for field (plan_nanos aside), nodes included, and each
             option's nodes are ceil(world size / GPUs per node).
  GoModuleConsumerTest
             a module of its own (tests/e2e/data/go_consumer/main.go in a
             temporary directory, its go.mod requiring
             github.com/chunkplan/chunkplan/client/go with a replace to
             client/go) builds offline (client/go/offline-workspace.sh)
             and, against the real server, prints Layout's verdict of a
             model as verdict_oracle judges the peak, the parameter count
             that Describe gives through the raw client as the model
             oracle's, the frozen bytes of a LoRA layout (rank 8 on
             c_attn, through Search.Model.Lora) as the LoRA oracle's frozen
             elements at 2 bytes, and status.Code(err) == InvalidArgument
             for a bad config.

Environment: CHUNKPLAN_SERVER, CHUNKPLAN_FIT and CHUNKPLAN_PLAN (the built
chunkplan-fit and chunkplan-plan), CHUNKPLAN_CLI (the C++ command line),
CHUNKPLAN_PYTHON_DIR (the built Python package), CHUNKPLAN_GO (the go command) with the build's
offline Go environment (GOPROXY=off, GOCACHE, GOCODE, ...),
CHUNKPLAN_PROTOC and CHUNKPLAN_GRPC_PROTO_DIR as in server_test.py.
"""

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "oracle"))
from server_test import PATIENCE_S, ROOT, Server, stubs  # noqa: E402
import models as oracle  # noqa: E402  (tests/oracle/models)
import verdict_oracle  # noqa: E402  (tests/oracle)

CONFIGS = os.path.join(ROOT, "tests", "python", "data", "hf_configs")
GIB = 1 << 30


def binary(variable):
    path = os.environ.get(variable, "")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"{variable}={path!r} is not executable")
    return path


def fit_binary():
    return binary("CHUNKPLAN_FIT")


def expected_layout(channel, config_path, world_size):
    """The server's Layout of the oracle's numels at GeminiPlugin's
    defaults, asked from Python."""
    pb, _, _ = stubs()
    numels = oracle.describe(config_path).numels
    request = pb.LayoutRequest(search=pb.ChunkSearchRequest(
        numels=numels, dp_degrees=[world_size], search_range_m=32,
        search_interval=1024))
    layout = channel.unary_unary(
        "/chunkplan.v1.ChunkSearch/Layout",
        request_serializer=pb.LayoutRequest.SerializeToString,
        response_deserializer=pb.LayoutResponse.FromString)
    return layout(request, timeout=PATIENCE_S)


def size(nbytes):
    """A byte count as a size with a unit that names it exactly: KB with
    three decimals (1234567 -> "1234.567KB")."""
    return "%d.%03dKB" % divmod(nbytes, 1000)


def run_fit(target, config_path, world_size, device_bytes, *flags):
    result = subprocess.run(
        [fit_binary(), f"--server={target}", f"--config={config_path}",
         f"--world-size={world_size}",
         f"--device-memory={size(device_bytes)}", "--timeout=60s",
         *flags],
        capture_output=True, text=True, timeout=PATIENCE_S)
    return result


def words(verdict):
    """The verdict as the commands print it."""
    if verdict["fits"]:
        return "fits"
    return (("does not fit (tight): " if verdict["tight"] else
             "does not fit: ") + verdict["why_not"])


class GoFitTest(unittest.TestCase):
    """See the module's docstring."""

    def setUp(self):
        fit_binary()
        self.server = Server("--threads=2")
        self.addCleanup(self.server.stop)

    def check_model(self, name, world_size):
        path = os.path.join(CONFIGS, name)
        with self.server.channel() as channel:
            want = expected_layout(channel, path, world_size)
        peak = (want.most_loaded_rank.device_bytes +
                want.gathered_chunk_bytes)
        group = want.groups[0]
        gathered = "True" if group.keep_gathered else "False"
        want_dict = (f'{{{group.dp_degree}: {{"chunk_size": '
                     f'{group.chunk_size}, "keep_gathered": {gathered}}}}}')
        self.assertEqual(len(want.groups), 1)
        for device, margin, code in ((peak, 0.0, 0), (peak - 1, 0.0, 3),
                                     (peak, None, 3)):
            flags = [] if margin is None else [f"--margin={margin!r}"]
            verdict = verdict_oracle.judge(peak, 0, device, 0, margin)
            with self.subTest(name=name, device=device, margin=margin):
                got = run_fit(self.server.address, path, world_size, device,
                              *flags)
                self.assertEqual(got.returncode, code, got.stderr)
                lines = got.stdout.splitlines()
                self.assertEqual(lines[0], words(verdict))
                self.assertIn(
                    "device_need_bytes %s device_memory_bytes %s "
                    "headroom_bytes %s margin_bytes %s" % (
                        verdict["device_need_bytes"],
                        verdict["device_memory_bytes"],
                        verdict["headroom_bytes"], verdict["margin_bytes"]),
                    lines)
                self.assertIn(f"chunk_config_dict = {want_dict}", lines)
        self.assertTrue(verdict_oracle.judge(peak, 0, peak, 0, None)["tight"])

    def test_gpt2_fits_as_layout_of_its_numels_says(self):
        self.check_model("colossalai-gpt2-test.json", 2)

    def test_larger_models_fit_as_layout_of_their_numels_says(self):
        for name in ("gpt2-xl.json", "llama-2-7b.json"):
            self.check_model(name, 8)

    def test_a_bad_config_is_the_servers_invalid_argument(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as bad:
            bad.write('{"model_type": "gpt2", "n_embd": -1}')
            bad.flush()
            got = run_fit(self.server.address, bad.name, 8, 80 * GIB)
        self.assertEqual(got.returncode, 1, got.stdout)
        self.assertRegex(got.stderr, re.compile(r"^INVALID_ARGUMENT: .*n_embd"))


def plan_oracle():
    """tests/oracle/plan_oracle.py, or a skip where it is not in the tree."""
    path = os.path.join(ROOT, "tests", "oracle", "plan_oracle.py")
    if not os.path.exists(path):
        raise unittest.SkipTest(f"plan oracle not found ({path})")
    spec = importlib.util.spec_from_file_location("plan_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GoPlanTest(unittest.TestCase):
    """See the module's docstring."""

    def setUp(self):
        binary("CHUNKPLAN_PLAN")

    def run_plan(self, *flags):
        return subprocess.run([binary("CHUNKPLAN_PLAN"), *flags],
                              capture_output=True, text=True,
                              timeout=PATIENCE_S)

    def check(self, name, device, host, reserve, world_sizes):
        """chunkplan-plan against the oracle's first option for the
        request it sends: the model's config, GeminiPlugin's search
        (range 32, interval 0: 1024, minimum 32 by default), the cluster,
        max_options 3."""
        path = os.path.join(CONFIGS, name)
        with open(path) as f:
            config = f.read()
        want = plan_oracle().plan({
            "search": {"model": {"hf_config_json": config},
                       "search_range_m": 32},
            "cluster": {"device_memory_bytes": str(device),
                        "host_memory_bytes": str(host), "gpus_per_node": 8,
                        "world_sizes": world_sizes,
                        "reserve_bytes": str(reserve)},
            "max_options": 3})
        self.assertNotIn("error", want)
        first = want["options"][0]
        server = Server("--threads=2")
        self.addCleanup(server.stop)
        got = self.run_plan(
            f"--server={server.address}", f"--config={path}",
            f"--device-memory={size(device)}",
            f"--host-memory={size(host)}",
            f"--reserve={size(reserve)}", "--gpus-per-node=8",
            "--world-sizes=" + ",".join(map(str, world_sizes)),
            "--max-options=3", "--timeout=120s")
        self.assertEqual(got.returncode, 0 if first["fits"] else 3,
                         got.stderr)
        lines = got.stdout.splitlines()
        plugin = "GeminiPlugin(%s)" % first["colossalai"]
        if first["fits"]:
            self.assertEqual(lines[-1], plugin)
        else:
            self.assertNotIn(plugin, lines)
        self.assertIn("device_need_bytes %s host_bytes_per_node %s "
                      "activation_bytes 0 transient_bytes 0" % (
                          first["device_need_bytes"],
                          first["host_bytes_per_node"]), lines)
        v = first["verdict"]
        self.assertIn("headroom_bytes %s margin_bytes %s tight %s nodes %d" % (
            v["headroom_bytes"], v["margin_bytes"],
            "true" if v["tight"] else "false", first["nodes"]), lines)
        verdict = words(v)
        self.assertTrue(lines[0].startswith(
            "option 1 of %d (%d considered): world size %d on %d nodes, "
            "chunk size from %s, " % (
                len(want["options"]), int(want["options_considered"]),
                first["world_size"], first["nodes"],
                first["chunk_size_from"])), lines[0])
        self.assertTrue(lines[0].endswith(verdict), lines[0])
        return first

    def test_gpt2_xl_fits_as_the_oracle_says(self):
        first = self.check("gpt2-xl.json", 10 * GIB, 512 * GIB, GIB, [8, 16])
        self.assertTrue(first["fits"])

    def test_nothing_fits_exits_3_with_the_oracles_reason(self):
        first = self.check("colossalai-gpt2-test.json", 64 << 20, GIB,
                           32 << 20, [2, 1])
        self.assertFalse(first["fits"])

    def test_usage_errors_exit_2(self):
        job = ["--config=x", "--gpus-per-node=8"]
        for flags, words_ in (
                (["--world-sizes=8", "--gpu=h200"], "--config"),
                (job + ["--world-sizes=8"], "--gpu NAME"),
                (job + ["--world-sizes=8", "--device-memory=80"],
                 "--device-memory"),
                (job + ["--world-sizes=8", "--gpu=h100-pcie"], "not a preset"),
                (job + ["--world-sizes=8", "--gpu=h200",
                        "--device-memory=80GiB"], "one of --gpu"),
                (job + ["--gpu=h200"], "--world-sizes"),
                (job + ["--gpu=h200", "--whole-nodes"], "go together"),
                (job + ["--gpu=h200", "--world-sizes=8", "--host-memory=1T"],
                 "--host-memory"),
                (job + ["--gpu=h200", "--world-sizes=8", "--micro-batch=1"],
                 "go together")):
            with self.subTest(flags=flags):
                got = self.run_plan(*flags)
                self.assertEqual(got.returncode, 2, got.stderr)
                self.assertTrue(got.stderr.startswith("INVALID_ARGUMENT: "),
                                got.stderr)
                self.assertIn(words_, got.stderr)


class GoParityTest(unittest.TestCase):
    """See the module's docstring."""

    def test_go_cpp_and_python_answer_the_same_plan(self):
        pb, _, _ = stubs()
        from google.protobuf import json_format
        path = os.path.join(CONFIGS, "gpt2-xl.json")
        device, host, reserve = 10 * GIB, 512 * GIB, GIB
        server = Server("--threads=2")
        self.addCleanup(server.stop)
        go = subprocess.run(
            [binary("CHUNKPLAN_PLAN"), f"--server={server.address}",
             f"--config={path}", "--device-memory=10GiB",
             "--host-memory=512GiB", "--reserve=1GiB", "--gpus-per-node=8",
             "--whole-nodes", "--max-nodes=3", "--max-options=20",
             "--format=json", "--timeout=120s"],
            capture_output=True, text=True, timeout=PATIENCE_S)
        cpp = subprocess.run(
            [binary("CHUNKPLAN_CLI"), "plan", "--server", server.address,
             "--hf-config", path, "--device-memory", "10GiB",
             "--host-memory", "512GiB", "--reserve", "1GiB",
             "--gpus-per-node", "8", "--whole-nodes", "--max-nodes", "3",
             "--max-options", "20", "--format", "json", "--deadline", "120s"],
            capture_output=True, text=True, timeout=PATIENCE_S)
        package = os.environ.get("CHUNKPLAN_PYTHON_DIR", "")
        if not os.path.isdir(os.path.join(package, "chunkplan")):
            self.fail(f"CHUNKPLAN_PYTHON_DIR={package!r} has no chunkplan")
        python = subprocess.run(
            [sys.executable, "-c", PYTHON_PLAN, server.address, path,
             str(device), str(host), str(reserve)],
            env=dict(os.environ, PYTHONPATH=package),
            capture_output=True, text=True, timeout=PATIENCE_S)
        answers = {}
        for who, result in (("go", go), ("cpp", cpp), ("python", python)):
            self.assertIn(result.returncode, (0, 3), (who, result.stderr))
            answer = json_format.Parse(result.stdout, pb.PlanResponse())
            answer.ClearField("plan_nanos")
            answers[who] = answer
        self.assertEqual(go.returncode, cpp.returncode)
        self.assertGreater(len(answers["go"].options), 0)
        self.assertEqual(answers["go"], answers["cpp"])
        self.assertEqual(answers["go"], answers["python"])
        sizes = set()
        for o in answers["go"].options:
            self.assertEqual(o.nodes, -(-o.world_size // 8))
            sizes.add(o.world_size)
        self.assertLessEqual(sizes, {8, 16, 24})


# Client.plan of the model at argv[2] on whole nodes of 8 GPUs up to 3, at
# the server argv[1], printed as protobuf's JSON.
PYTHON_PLAN = """
import sys
import chunkplan
from google.protobuf import json_format
target, path, device, host, reserve = sys.argv[1:]
with chunkplan.Client(target) as client:
    plan = client.plan(chunkplan.models.model_config(path),
                       device_memory_bytes=int(device),
                       host_memory_bytes=int(host), reserve_bytes=int(reserve),
                       gpus_per_node=8, whole_nodes=True, max_nodes=3,
                       max_options=20, timeout=120)
print(json_format.MessageToJson(plan.response, indent=None))
"""


CONSUMER_GO_MOD = """module example.com/scheduler/chunkplanfit

go 1.19

require github.com/chunkplan/chunkplan/client/go v0.0.0

replace github.com/chunkplan/chunkplan/client/go => {client}
"""


def lora_frozen_bytes(path):
    """2 bytes a frozen element of the model with PEFT's rank-8 adapters on
    c_attn (the LoRA oracle, tests/oracle/models/lora.py)."""
    from models.lora import adapt
    a = adapt(oracle.describe(path), 8, ["c_attn"])
    return 2 * sum(n for n, t in zip(a.numels, a.trainable) if not t)


class GoModuleConsumerTest(unittest.TestCase):
    """See the module's docstring."""

    def build_consumer(self, tmp):
        go = binary("CHUNKPLAN_GO")
        env = dict(os.environ)
        module = os.path.join(tmp, "consumer")
        os.mkdir(module)
        client = os.path.join(ROOT, "client", "go")
        with open(os.path.join(module, "go.mod"), "w") as f:
            f.write(CONSUMER_GO_MOD.format(client=client))
        with open(os.path.join(HERE, "data", "go_consumer", "main.go")) as f:
            main = f.read()
        with open(os.path.join(module, "main.go"), "w") as f:
            f.write(main)
        workspace = os.path.join(tmp, "workspace")
        subprocess.run([os.path.join(client, "offline-workspace.sh"),
                        workspace, module], check=True, env=env)
        env["GOWORK"] = os.path.join(workspace, "go.work")
        out = os.path.join(tmp, "consumer-bin")
        built = subprocess.run([go, "build", "-o", out, "."], cwd=module,
                               env=env, capture_output=True, text=True,
                               timeout=PATIENCE_S)
        self.assertEqual(built.returncode, 0, built.stderr)
        return out

    def test_a_module_that_requires_the_client_asks_the_server(self):
        path = os.path.join(CONFIGS, "gpt2-xl.json")
        world_size = 8
        with tempfile.TemporaryDirectory() as tmp:
            consumer = self.build_consumer(tmp)
            server = Server("--threads=2")
            self.addCleanup(server.stop)
            with server.channel() as channel:
                want = expected_layout(channel, path, world_size)
            peak = (want.most_loaded_rank.device_bytes +
                    want.gathered_chunk_bytes)
            for device in (peak, peak - 1):
                verdict = verdict_oracle.judge(peak, 0, device, 0, 0.0)
                with self.subTest(device=device):
                    got = subprocess.run(
                        [consumer, server.address, path, str(world_size),
                         str(device)],
                        capture_output=True, text=True, timeout=PATIENCE_S)
                    self.assertEqual(got.returncode, 0, got.stderr)
                    self.assertEqual(got.stdout.splitlines(), [
                        "verdict fits %s device_need_bytes %s "
                        "headroom_bytes %s margin_bytes %s" % (
                            "true" if verdict["fits"] else "false",
                            verdict["device_need_bytes"],
                            verdict["headroom_bytes"],
                            verdict["margin_bytes"]),
                        "chunk_config_dict = {%d: {\"chunk_size\": %d, "
                        "\"keep_gathered\": False}}" % (
                            world_size, want.groups[0].chunk_size),
                        "parameters %d" % len(oracle.describe(path).numels),
                        "lora frozen_bytes %d" % lora_frozen_bytes(path),
                        "bad config invalid argument true"])


if __name__ == "__main__":
    unittest.main()
