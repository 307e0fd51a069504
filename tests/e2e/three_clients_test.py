#!/usr/bin/python3
"""Every client prints the same verdict, need and exit code for the same
job (issue 41): the C++ command line (`chunkplan plan --server`), the
Python library (chunkplan.Client.plan, and `python3 -m chunkplan plan`,
the package's command line) and the Go example (client/go/cmd/
chunkplan-plan) ask one real chunkplan-server Plan for the same job, and
their first options agree with each other and with the server's answer
as Python's raw stub receives it: fits, tight, device need, headroom,
margin, the verdict's words and the exit status (0 fits, 3 nothing fits).

  SameJobTest  the newcomer's job (Qwen2.5-7B on 4 x RTX 4090, sequence
               2048, micro-batch 1, activation checkpointing), which fits,
               and LLaMA-2 70B on the same cluster without checkpointing,
               which does not.

Environment: CHUNKPLAN_SERVER, CHUNKPLAN_CLI, CHUNKPLAN_PLAN (the Go
example), CHUNKPLAN_PYTHON_DIR (<build>/python: the built package),
CHUNKPLAN_PROTOC and CHUNKPLAN_GRPC_PROTO_DIR as in server_test.py. A
client that is not built is a skip naming it.
"""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from server_test import ROOT, Server, stubs  # noqa: E402

DATA = os.path.join(ROOT, "tests", "oracle", "models", "data")
RTX_4090_MIB = 24564  # common/gpu_presets.inc
EXIT_FITS, EXIT_DOES_NOT_FIT = 0, 3
TIMEOUT_S = 120

# (config, activation checkpointing, fits): the job's model and whether
# it recomputes; the cluster and the rest of the workload are shared.
# LLaMA-2 70B keeping every layer's activations needs tens of GiB a rank
# for them alone: nothing fits.
JOBS = (("qwen2.5-7b.json", True, True), ("llama-2-70b.json", False, False))
WORLD_SIZE, GPUS_PER_NODE = 4, 4
MICRO_BATCH, SEQUENCE_LENGTH = 1, 2048

# The Python library's side, run with the built package on PYTHONPATH:
# prints the first option's verdict as JSON.
PYTHON_CLIENT = """
import json, sys
import chunkplan
from chunkplan import models
target, config, memory, world, per_node, batch, length, ckpt = sys.argv[1:]
with chunkplan.Client(target) as client:
    plan = client.plan(models.model_config(config),
                       device_memory_bytes=int(memory),
                       world_sizes=[int(world)], gpus_per_node=int(per_node),
                       workload={"micro_batch": int(batch),
                                 "sequence_length": int(length),
                                 "activation_checkpointing": ckpt == "1"})
v = plan.best.verdict
print(json.dumps({"fits": v.fits, "tight": v.tight,
                  "device_need_bytes": v.device_need_bytes,
                  "headroom_bytes": v.headroom_bytes,
                  "margin_bytes": v.margin_bytes, "words": v.words}))
"""


def executable(variable):
    path = os.environ.get(variable, "")
    if not os.access(path, os.X_OK):
        raise unittest.SkipTest(f"{variable}={path!r} is not built")
    return path


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True,
                          timeout=TIMEOUT_S, env=env)


def words(verdict):
    """The verdict as every client prints it (docs/plan.md)."""
    if verdict["fits"]:
        return "fits"
    return (("does not fit (tight): " if verdict["tight"] else
             "does not fit: ") + verdict["why_not"])


class SameJobTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.cli = executable("CHUNKPLAN_CLI")
        cls.go = executable("CHUNKPLAN_PLAN")
        cls.python_dir = os.environ.get("CHUNKPLAN_PYTHON_DIR", "")
        if not os.path.isdir(os.path.join(cls.python_dir, "chunkplan")):
            raise unittest.SkipTest(
                f"CHUNKPLAN_PYTHON_DIR={cls.python_dir!r} is not built")
        cls.server = Server("--threads=2")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def python_env(self):
        return dict(os.environ, PYTHONPATH=self.python_dir,
                    CHUNKPLAN_CLI=self.cli, PYTHONDONTWRITEBYTECODE="1")

    def server_answer(self, config, checkpointing):
        """The server's first option as Python's raw stub receives it."""
        pb, _, _ = stubs()
        with open(config) as f:
            text = f.read()
        request = pb.PlanRequest(
            search=pb.ChunkSearchRequest(
                model=pb.ModelConfig(hf_config_json=text), search_range_m=32),
            cluster=pb.Cluster(device_memory_bytes=RTX_4090_MIB << 20,
                               gpus_per_node=GPUS_PER_NODE,
                               world_sizes=[WORLD_SIZE]),
            workload=pb.Workload(micro_batch=MICRO_BATCH,
                                 sequence_length=SEQUENCE_LENGTH,
                                 activation_checkpointing=checkpointing))
        with self.server.channel() as channel:
            plan = channel.unary_unary(
                "/chunkplan.v1.ChunkSearch/Plan",
                request_serializer=pb.PlanRequest.SerializeToString,
                response_deserializer=pb.PlanResponse.FromString)(
                    request, timeout=TIMEOUT_S)
        v = plan.options[0].verdict
        return {"fits": v.fits, "tight": v.tight,
                "device_need_bytes": v.device_need_bytes,
                "headroom_bytes": v.headroom_bytes,
                "margin_bytes": v.margin_bytes,
                "words": words({"fits": v.fits, "tight": v.tight,
                                "why_not": v.why_not})}

    def cli_answer(self, config, checkpointing):
        flags = ["--server", self.server.address, "--hf-config", config,
                 "--device-memory", f"{RTX_4090_MIB}MiB", "--world-sizes",
                 str(WORLD_SIZE), "--gpus-per-node", str(GPUS_PER_NODE),
                 "--micro-batch", str(MICRO_BATCH), "--sequence-length",
                 str(SEQUENCE_LENGTH)] + (
                     ["--activation-checkpointing"] if checkpointing else [])
        done = run([self.cli, "plan", *flags, "--format", "json"])
        self.assertIn(done.returncode, (EXIT_FITS, EXIT_DOES_NOT_FIT),
                      done.stderr)
        v = json.loads(done.stdout)["options"][0]["verdict"]
        table = run([self.cli, "plan", *flags])
        self.assertEqual(table.returncode, done.returncode, table.stderr)
        answer = {"fits": v["fits"], "tight": v["tight"],
                  "device_need_bytes": int(v["device_need_bytes"]),
                  "headroom_bytes": int(v["headroom_bytes"]),
                  "margin_bytes": int(v["margin_bytes"]),
                  "words": words(v)}
        # The table's first row ends in the same words.
        rows = [line for line in table.stdout.splitlines()
                if line.lstrip().startswith(f"{WORLD_SIZE} ")]
        self.assertTrue(rows and rows[0].endswith(answer["words"]),
                        table.stdout)
        return answer, done.returncode

    def python_answer(self, config, checkpointing):
        done = run([sys.executable, "-c", PYTHON_CLIENT,
                    self.server.address, config,
                    str(RTX_4090_MIB << 20), str(WORLD_SIZE),
                    str(GPUS_PER_NODE), str(MICRO_BATCH),
                    str(SEQUENCE_LENGTH), "1" if checkpointing else "0"],
                   env=self.python_env())
        self.assertEqual(done.returncode, 0, done.stderr)
        # The package's command line (the C++ binary, exec'd).
        command = run([sys.executable, "-m", "chunkplan", "plan",
                       "--server", self.server.address, "--hf-config",
                       config, "--device-memory", f"{RTX_4090_MIB}MiB",
                       "--world-sizes", str(WORLD_SIZE), "--gpus-per-node",
                       str(GPUS_PER_NODE), "--micro-batch",
                       str(MICRO_BATCH), "--sequence-length",
                       str(SEQUENCE_LENGTH)] + (
                           ["--activation-checkpointing"] if checkpointing
                           else []), env=self.python_env())
        return json.loads(done.stdout), command.returncode

    def go_answer(self, config, checkpointing):
        done = run([self.go, "--server", self.server.address, "--config",
                    config, "--device-memory-gib",
                    repr(RTX_4090_MIB / 1024), "--world-sizes",
                    str(WORLD_SIZE), "--gpus-per-node", str(GPUS_PER_NODE),
                    "--micro-batch", str(MICRO_BATCH), "--sequence-length",
                    str(SEQUENCE_LENGTH)] + (
                        ["--activation-checkpointing"] if checkpointing
                        else []))
        lines = done.stdout.splitlines()
        self.assertTrue(lines, done.stderr)
        fields = {}
        for line in lines[2:4]:
            parts = line.split()
            fields.update(zip(parts[::2], parts[1::2]))
        head = lines[0].split(", ", 3)
        return {"fits": head[-1] == "fits",
                "tight": fields["tight"] == "true",
                "device_need_bytes": int(fields["device_need_bytes"]),
                "headroom_bytes": int(fields["headroom_bytes"]),
                "margin_bytes": int(fields["margin_bytes"]),
                "words": lines[0].split("chunk size from ", 1)[1].split(
                    ", ", 1)[1]}, done.returncode

    def test_every_client_gives_the_same_verdict_and_exit_code(self):
        for name, checkpointing, fits in JOBS:
            config = os.path.join(DATA, name)
            with self.subTest(model=name):
                want = self.server_answer(config, checkpointing)
                self.assertEqual(want["fits"], fits, want)
                code = EXIT_FITS if fits else EXIT_DOES_NOT_FIT
                answers = {
                    "cli": self.cli_answer(config, checkpointing),
                    "python": self.python_answer(config, checkpointing),
                    "go": self.go_answer(config, checkpointing)}
                for client, (answer, exit_code) in answers.items():
                    self.assertEqual(answer, want, client)
                    self.assertEqual(exit_code, code, client)


if __name__ == "__main__":
    unittest.main()
