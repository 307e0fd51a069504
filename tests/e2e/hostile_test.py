#!/usr/bin/python3
"""Hostile but well-formed requests against chunkplan-server, the binary
that scripts/test.sh builds (the same build as scripts/run.sh's, CUDA
engine compiled in where nvcc is).

  HostileRequestTest  every request below sent at once, each without a
                      client deadline, to a server with a short
                      --max_search_time: each is answered with its precise
                      status (an answer, RESOURCE_EXHAUSTED naming the
                      limit's flag, DEADLINE_EXCEEDED naming
                      --max_search_time, or FAILED_PRECONDITION for CUDA
                      without a device), the server stays up, and a normal
                      search sent while they run is answered. Nothing is
                      timed: a call the budget did not end would outlast
                      the test's patience, and the status says which limit
                      ended each.

The requests are the hardening issue's findings: zero sizes with a minimum
chunk of 0 (a divide by zero in AUTO's cost model killed CUDA builds), every
group kept gathered with a huge range (work counted as 0), a million sizes
at interval 1 from a minimum chunk of 0 (CPU_PLATEAU ran for hours,
unbounded), a huge range at interval 1, each through every engine by name;
and the hostile-traffic issue's finding 6: 100,000 sizes at interval 1 (the
plateau walk ran 14 s). CPU_PLATEAU refuses both large ones at once by its
work bound (--max_plateau_work). And requests that name their model by a
bad config (issue 26: not JSON, wrong types, negative or huge sizes, deeply
nested, 10 MB of text, more parameters than --max_params), each a precise
INVALID_ARGUMENT (RESOURCE_EXHAUSTED for --max_params), and the largest
model the server takes.

Environment: CHUNKPLAN_SERVER (required), CHUNKPLAN_PROTOC and
CHUNKPLAN_GRPC_PROTO_DIR, as in server_test.py.
"""

import json
import os
import random
import sys
import threading
import time
import unittest

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import (GPT2_CHUNK_SIZE, GPT2_EXAMPLE, PATIENCE_S,  # noqa: E402
                         Server, search_stub, stubs, to_message)

# The server's budget in this test. A call expected to be answered may meet
# it instead where the machine is slow, loaded or sanitized (the largest
# model's search took over 3 s beside a full 2-core build): that is still
# an answer within the budget, and the test holds no call to a speed.
BUDGET_S = 3

OK = grpc.StatusCode.OK
RESOURCE_EXHAUSTED = grpc.StatusCode.RESOURCE_EXHAUSTED
DEADLINE_EXCEEDED = grpc.StatusCode.DEADLINE_EXCEEDED
FAILED_PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
ENGINES = ("ENGINE_AUTO", "ENGINE_CPU_SWEEP", "ENGINE_CPU_PLATEAU",
           "ENGINE_CUDA")


def random_sizes(count):
    rng = random.Random(20261202)
    return [rng.randint(1, 1000) for _ in range(count)]


def hostile_requests():
    """(name, request message, {status code: substring its message must
    hold}) for every hostile request and engine."""
    pb, _, _ = stubs()
    zero = {"numels": ["0"], "search_interval": "1", "search_range_m": 1024,
            "min_chunk_size_m": 0}
    gathered = {"numels": ["5"], "search_interval": "1",
                "search_range_m": 1e12}
    wide = {"numels": [str(32 << 20)], "search_interval": "1",
            "search_range_m": 1e6}
    cases = []
    # CUDA by name: FAILED_PRECONDITION without a device; with one, its
    # work limit or the budget.
    cuda = {FAILED_PRECONDITION: "CUDA", RESOURCE_EXHAUSTED: "--max_cuda_work",
            DEADLINE_EXCEEDED: "--max_search_time", OK: ""}
    for engine in ENGINES:
        expect = {
            "ENGINE_AUTO": {OK: ""},
            "ENGINE_CPU_PLATEAU": {OK: ""},
            "ENGINE_CPU_SWEEP": {OK: ""},
            "ENGINE_CUDA": cuda,
        }[engine]
        cases.append((f"zero sizes, {engine}",
                      to_message(dict(zero, engine=engine)), expect))
        sweep_refused = {RESOURCE_EXHAUSTED: "--max_sweep_work"}
        for name, request in (("every group gathered, range 1e12", gathered),
                              ("interval 1, range 1e6", wide)):
            expect = {
                "ENGINE_AUTO": {OK: ""},
                "ENGINE_CPU_PLATEAU": {OK: ""},
                "ENGINE_CPU_SWEEP": sweep_refused,
                "ENGINE_CUDA": cuda,
            }[engine]
            cases.append((f"{name}, {engine}",
                          to_message(dict(request, engine=engine)), expect))
        # min_chunk_size_m 0: the grid starts at 1000, where next-fit
        # opens some 650,000 chunks and their count drops at almost every
        # candidate (hours of CPU_PLATEAU); with 100,000 sizes over 2^20
        # candidates, 14 s. Both bounds are far beyond --max_plateau_work.
        plateau_refused = {RESOURCE_EXHAUSTED: "--max_plateau_work"}
        for name, count, range_m in (("a million sizes", 1_000_000, 200),
                                     ("100,000 sizes", 100_000, 1)):
            request = pb.ChunkSearchRequest(
                search_range_m=range_m, search_interval=1,
                min_chunk_size_m=0, engine=pb.Engine.Value(engine))
            request.numels.extend(random_sizes(count))
            # With a device, AUTO may sweep the smaller one on CUDA.
            auto = dict(plateau_refused)
            if count < 1_000_000:
                auto[OK] = ""
            expect = {
                "ENGINE_AUTO": auto,
                "ENGINE_CPU_PLATEAU": plateau_refused,
                "ENGINE_CPU_SWEEP": {RESOURCE_EXHAUSTED: "--max_sweep_work"},
                "ENGINE_CUDA": cuda,
            }[engine]
            cases.append((f"{name} at interval 1, {engine}", request,
                          expect))
    return cases + hostile_model_requests(pb)


def gpt2_config(**changes):
    config = {"model_type": "gpt2", "n_embd": 8, "n_head": 1, "n_layer": 2,
              "n_positions": 8, "vocab_size": 8}
    config.update(changes)
    return json.dumps(config)


def hostile_model_requests(pb):
    """Requests that name their model by a bad (or the largest) config:
    each a precise INVALID_ARGUMENT naming what is wrong, or the limit's
    flag; the largest model the server takes (GPT-2 of 83,000 layers:
    996,004 parameters, under --max_params' 10^6) answered."""
    invalid = grpc.StatusCode.INVALID_ARGUMENT
    texts = [
        ("a config that is not JSON", '{"model_type": "gpt2", ',
         {invalid: "not JSON"}),
        ("a config of the wrong type", "[1, 2, 3]",
         {invalid: "JSON object"}),
        ("a size of the wrong type", gpt2_config(n_embd="8"),
         {invalid: "n_embd"}),
        ("a negative size", gpt2_config(n_layer=-2), {invalid: "n_layer"}),
        ("a size beyond 64 bits", gpt2_config(vocab_size=2**64),
         {invalid: "vocab_size"}),
        ("a tensor beyond 64 bits", gpt2_config(n_embd=2**40,
                                                vocab_size=2**40),
         {invalid: "64"}),
        # Numbers a double cannot hold (they used to end the process in
        # Layout and Plan): refused naming the key.
        ("a number beyond a double", gpt2_config()[:-1] + ', "n_head": 1e400}',
         {invalid: "config n_head: a number beyond the range of a double"}),
        ("an integer of 500,000 digits",
         gpt2_config()[:-1] + ', "n_layer": 1' + "0" * 499_999 + "}",
         {invalid: "config n_layer: a number beyond the range of a double"}),
        ("an unknown model_type", '{"model_type": "no-such-model"}',
         {invalid: "no-such-model"}),
        ("nested a million deep", "[" * 500_000 + "]" * 500_000,
         {invalid: "nested"}),
        ("10 MB of text", " " * (10 << 20) + "{}",
         {invalid: "--max_config_bytes"}),
        ("more layers than --max_params", gpt2_config(n_layer=10**9),
         {RESOURCE_EXHAUSTED: "--max_params"}),
        ("the largest model within --max_params", gpt2_config(n_layer=83_000),
         {OK: ""}),
    ]
    return [(f"model: {name}", pb.ChunkSearchRequest(
        model=pb.ModelConfig(hf_config_json=text), search_range_m=1),
        expect) for name, text, expect in texts]


class HostileRequestTest(unittest.TestCase):
    """See the module's docstring."""

    def test_each_is_answered_within_the_budget_and_serving_goes_on(self):
        server = Server(f"--max_search_time={BUDGET_S}s", "--threads=8")
        try:
            self._run(server)
        finally:
            self.assertEqual(server.stop(), 0, server.log())

    def _run(self, server):
        cases = hostile_requests()
        results = [None] * len(cases)
        with server.channel() as channel:
            search = search_stub(channel)

            def call(i, request):
                try:
                    search(request)  # no deadline
                    results[i] = (OK, "")
                except grpc.RpcError as e:
                    results[i] = (e.code(), e.details())

            threads = [threading.Thread(target=call, args=(i, c[1]),
                                        daemon=True)
                       for i, c in enumerate(cases)]
            for t in threads:
                t.start()
            # While they run: a normal search, answered (light calls have
            # slots of their own).
            with open(GPT2_EXAMPLE) as f:
                normal = to_message(json.load(f))
            time.sleep(0.5)  # let the hostile calls reach the workers
            answer = search(normal, timeout=PATIENCE_S)
            self.assertEqual(answer.configs[0].chunk_size, GPT2_CHUNK_SIZE)
            for t in threads:
                t.join(timeout=PATIENCE_S)
                self.assertFalse(t.is_alive(), "a hostile call never ended")

            for (name, _, expect), (code, details) in zip(cases, results):
                with self.subTest(name):
                    if OK in expect:
                        expect = {DEADLINE_EXCEEDED: "--max_search_time",
                                  **expect}
                    self.assertIn(code, expect, f"{name}: {code} {details}")
                    self.assertIn(expect[code], details, name)
            # Still serving, with every worker free again.
            answer = search(normal, timeout=PATIENCE_S)
            self.assertEqual(answer.configs[0].chunk_size, GPT2_CHUNK_SIZE)
        self.assertNotIn("critical", server.log())


class BeyondADoubleTest(unittest.TestCase):
    """A config holding 1e400 or an integer of 500,000 digits, sent to
    every method that takes a config, on the real binary: each answered
    INVALID_ARGUMENT naming the key (Layout and Plan used to abort the
    process; Describe and Search answered UNIMPLEMENTED), and the server
    serves on and exits 0."""

    def test_every_method_refuses_it_and_the_server_lives(self):
        pb, _, _ = stubs()
        methods = {
            "Describe": (pb.ModelConfig, pb.ModelDescription,
                         lambda config: config),
            "Search": (pb.ChunkSearchRequest, pb.ChunkSearchResponse,
                       lambda config: pb.ChunkSearchRequest(
                           model=config, search_range_m=1)),
            "Layout": (pb.LayoutRequest, pb.LayoutResponse,
                       lambda config: pb.LayoutRequest(
                           search=pb.ChunkSearchRequest(
                               model=config, search_range_m=1))),
            "Frontier": (pb.LayoutRequest, pb.FrontierResponse,
                         lambda config: pb.LayoutRequest(
                             search=pb.ChunkSearchRequest(
                                 model=config, search_range_m=1))),
            "Plan": (pb.PlanRequest, pb.PlanResponse,
                     lambda config: pb.PlanRequest(
                         search=pb.ChunkSearchRequest(
                             model=config, search_range_m=1),
                         cluster=pb.Cluster(device_memory_bytes=80 << 30,
                                            gpus_per_node=8,
                                            world_sizes=[8]))),
        }
        values = {"1e400": "1e400", "500,000 digits": "1" + "0" * 499_999}
        server = Server()
        try:
            with server.channel() as channel:
                for method, (request_type, response_type, wrap) in \
                        methods.items():
                    call = channel.unary_unary(
                        f"/chunkplan.v1.ChunkSearch/{method}",
                        request_serializer=request_type.SerializeToString,
                        response_deserializer=response_type.FromString)
                    for name, value in values.items():
                        text = gpt2_config()[:-1] + f', "n_layer": {value}}}'
                        with self.subTest(method=method, value=name):
                            with self.assertRaises(grpc.RpcError) as raised:
                                call(wrap(pb.ModelConfig(
                                    hf_config_json=text)), timeout=PATIENCE_S)
                            error = raised.exception
                            self.assertEqual(error.code(),
                                             grpc.StatusCode.INVALID_ARGUMENT)
                            self.assertIn("config n_layer: a number beyond "
                                          "the range of a double",
                                          error.details())
                with open(GPT2_EXAMPLE) as f:
                    normal = to_message(json.load(f))
                answer = search_stub(channel)(normal, timeout=PATIENCE_S)
                self.assertEqual(answer.configs[0].chunk_size,
                                 GPT2_CHUNK_SIZE)
        finally:
            self.assertEqual(server.stop(), 0, server.log())


if __name__ == "__main__":
    unittest.main()
