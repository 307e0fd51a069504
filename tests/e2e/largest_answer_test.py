#!/usr/bin/python3
"""The largest answer end to end (issue 32, finding 7): a valid Layout of
--max_params (10^6) parameters, about 16 MB, from the real server through
the `chunkplan` CLI and through the Python client, whose receive limits
(64 MiB, docs/deploy.md "Client configuration") take what the server may
send (--max_send_message_size, 64 MiB by default).

The request: 10^6 parameters of 1024 elements with one given config, chunk
size 1024 at dp degree 1. By Gemini's placement rules each parameter fills
one chunk exactly: 10^6 chunks, chunk i of size 1024, used 1024, holding
parameter i alone, no padding. That is the expected answer, from the rules
and not from chunkplan.

Environment: CHUNKPLAN_SERVER, CHUNKPLAN_CLI, CHUNKPLAN_PYTHON_DIR (the
built Python package, <build>/python).
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, _HERE)
from server_test import Server, cli  # noqa: E402

PARAMS = 1_000_000
NUMEL = 1024
PATIENCE_S = 300
# gRPC's default receive limit, which the answer must exceed for the test
# to mean anything.
GRPC_DEFAULT_RECEIVE = 4 << 20


def request_dict():
    return {"search": {"numels": [NUMEL] * PARAMS, "search_range_m": 1,
                       "search_interval": NUMEL},
            "configs": [{"dp_degree": 1, "chunk_size": NUMEL}]}


class LargestAnswerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server("--threads=2")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def assert_one_chunk_per_parameter(self, groups):
        self.assertEqual(len(groups), 1)
        chunks = groups[0]["chunks"]
        self.assertEqual(len(chunks), PARAMS)
        for i in (0, 1, PARAMS // 2, PARAMS - 1):
            chunk = chunks[i]
            self.assertEqual(int(chunk["size"]), NUMEL)
            self.assertEqual(int(chunk["used"]), NUMEL)
            self.assertEqual(int(chunk.get("first_param", 0)), i)
            self.assertEqual(int(chunk["num_params"]), 1)
        self.assertTrue(all(int(c["used"]) == NUMEL for c in chunks))
        self.assertEqual(int(groups[0].get("padding", 0)), 0)

    def test_cli_receives_the_largest_layout(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump(request_dict(), f)
            f.flush()
            result = subprocess.run(
                [cli(), "layout", "--request", f.name, "--server",
                 self.server.address, "--deadline", "240s"],
                capture_output=True, text=True, timeout=PATIENCE_S)
        self.assertEqual(result.returncode, 0, result.stderr[-2000:])
        answer = json.loads(result.stdout)
        self.assert_one_chunk_per_parameter(answer["groups"])

    def test_python_client_receives_the_largest_layout(self):
        package = os.environ.get("CHUNKPLAN_PYTHON_DIR", "")
        if not os.path.isdir(os.path.join(package, "chunkplan")):
            raise unittest.SkipTest(
                f"CHUNKPLAN_PYTHON_DIR={package!r} has no chunkplan package")
        sys.path.insert(0, package)
        import chunkplan
        from chunkplan.v1 import chunk_search_pb2 as pb
        from google.protobuf import json_format
        request = json_format.ParseDict(request_dict(), pb.LayoutRequest())
        with chunkplan.Client(self.server.address) as client:
            response = client.layout_request(request, timeout=240)
        self.assertGreater(response.ByteSize(), GRPC_DEFAULT_RECEIVE)
        print(f"\nanswer: {response.ByteSize():,} bytes", file=sys.stderr)
        groups = [json_format.MessageToDict(
            g, preserving_proto_field_name=True) for g in response.groups]
        self.assert_one_chunk_per_parameter(groups)


if __name__ == "__main__":
    unittest.main()
