#!/usr/bin/python3
"""End-to-end tests of chunkplan-server's --metrics_listen: the Prometheus
text exposition at /metrics, scraped over HTTP before and after real calls.

What the counters must show is worked out from the calls the test makes:
how many, their status codes, the engines asked for, the request's numels
and its candidate count, which is the seed's
len(range(start, start + search_range + 1, search_interval)) =
round(search_range_m * 2**20) // search_interval + 1.

Environment: CHUNKPLAN_SERVER and CHUNKPLAN_CLI (required), as in
server_test.py.

  CHUNKPLAN_SERVER=build/bin/chunkplan-server \
  CHUNKPLAN_CLI=build/bin/chunkplan /usr/bin/python3 tests/e2e/metrics_test.py -v
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import unittest
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_test import (GPT2_EXAMPLE, PATIENCE_S, ROOT,  # noqa: E402
                         Server, load, run_cli, run_server_to_exit)

METRICS_AT = re.compile(r"chunkplan-server metrics on (http://\S+/metrics)")
# name{labels} value, as the text exposition format writes a sample.
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse(text):
    """{(name, ((label, value), ...)): float} and {family: type} of an
    exposition; fails on any line that is not a comment or a sample."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, family, kind = line.split(" ", 3)
            types[family] = kind
            continue
        if line.startswith("#") or not line:
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample line: {line!r}"
        labels = tuple(sorted(LABEL.findall(match.group(2) or "")))
        samples[(match.group(1), labels)] = float(match.group(3))
    return samples, types


# Straight to loopback, whatever http_proxy says.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def scrape(url):
    with _OPENER.open(url, timeout=PATIENCE_S) as response:
        return response.headers["Content-Type"], response.read().decode()


def value(samples, name, **labels):
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def search_cli(server, request_path, engine):
    return run_cli("search", "--request", request_path, "--server",
                   server.address, "--engine", engine, "--deadline", "60s")


class MetricsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.server = Server("--metrics_listen=127.0.0.1:0")
        match = METRICS_AT.search(cls.server.log())
        assert match, cls.server.log()
        cls.url = match.group(1)
        cls.tmp = tempfile.mkdtemp(prefix="chunkplan_metrics_test_")

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def test_counters_move_with_real_calls(self):
        content_type, before_text = scrape(self.url)
        self.assertEqual(content_type, CONTENT_TYPE)
        before, _ = parse(before_text)

        request = load(GPT2_EXAMPLE)
        params = len(request["numels"])
        candidates = (round(request["search_range_m"] * 2**20)
                      // request["search_interval"] + 1)
        for engine in ("cpu_plateau", "cpu_sweep"):
            result = search_cli(self.server, GPT2_EXAMPLE, engine)
            self.assertEqual(result.returncode, 0, result.stderr)
        empty = os.path.join(self.tmp, "empty.json")
        with open(empty, "w") as f:
            json.dump({"numels": [], "search_range_m": 1,
                       "search_interval": 128}, f)
        result = search_cli(self.server, empty, "cpu_plateau")
        self.assertEqual(result.returncode, 1)
        self.assertIn("INVALID_ARGUMENT", result.stderr)

        after, types = parse(scrape(self.url)[1])

        def moved(name, **labels):
            return value(after, name, **labels) - value(before, name,
                                                        **labels)

        self.assertEqual(moved("chunkplan_calls_total", method="Search",
                               code="OK"), 2)
        self.assertEqual(moved("chunkplan_calls_total", method="Search",
                               code="INVALID_ARGUMENT"), 1)
        self.assertEqual(moved("chunkplan_call_duration_seconds_count",
                               method="Search"), 3)
        self.assertGreater(moved("chunkplan_call_duration_seconds_sum",
                                 method="Search"), 0)
        self.assertEqual(moved("chunkplan_call_params_count",
                               method="Search"), 3)
        self.assertEqual(moved("chunkplan_call_params_sum", method="Search"),
                         2 * params)
        self.assertEqual(moved("chunkplan_call_candidates_count",
                               method="Search"), 2)
        self.assertEqual(moved("chunkplan_call_candidates_sum",
                               method="Search"), 2 * candidates)
        self.assertEqual(moved("chunkplan_searches_total",
                               engine="CPU_PLATEAU"), 1)
        self.assertEqual(moved("chunkplan_searches_total",
                               engine="CPU_SWEEP"), 1)
        self.assertEqual(value(after, "chunkplan_searches_in_flight"), 0)
        self.assertEqual(types["chunkplan_calls_total"], "counter")
        self.assertEqual(types["chunkplan_call_duration_seconds"],
                         "histogram")
        self.assertEqual(types["chunkplan_searches_in_flight"], "gauge")

        # Buckets are cumulative and end with +Inf = _count.
        for family in ("chunkplan_call_duration_seconds",
                       "chunkplan_call_params", "chunkplan_call_candidates"):
            buckets = sorted(
                (float(dict(labels)["le"]), v)
                for (name, labels), v in after.items()
                if name == family + "_bucket")
            counts = [v for _, v in buckets]
            self.assertEqual(counts, sorted(counts), family)
            self.assertEqual(buckets[-1][0], float("inf"), family)
            self.assertEqual(counts[-1],
                             value(after, family + "_count", method="Search"))
        # The params histogram's le="100" bucket holds both 28-numel calls
        # and the empty one; le="10" only the empty one.
        self.assertEqual(
            moved("chunkplan_call_params_bucket", method="Search", le="10"), 1)
        self.assertEqual(
            moved("chunkplan_call_params_bucket", method="Search", le="100"),
            3)

    def test_describe_is_counted_as_its_own_method(self):
        """Describe (chunkplan describe --server) is counted like the other
        methods: calls by code, duration, and the parameters described
        (the GPT-2 test model's 28)."""
        before, _ = parse(scrape(self.url)[1])
        config = os.path.join(ROOT, "tests", "python", "data", "hf_configs",
                              "colossalai-gpt2-test.json")
        bad = os.path.join(self.tmp, "bad_config.json")
        with open(bad, "w") as f:
            f.write('{"model_type": "no-such-model"}')
        for path, code in ((config, 0), (bad, 1)):
            result = run_cli("describe", "--hf-config", path, "--server",
                             self.server.address, "--deadline", "60s")
            self.assertEqual(result.returncode, code, result.stderr)
        after, _ = parse(scrape(self.url)[1])

        def moved(name, **labels):
            return value(after, name, **labels) - value(before, name,
                                                        **labels)

        self.assertEqual(moved("chunkplan_calls_total", method="Describe",
                               code="OK"), 1)
        self.assertEqual(moved("chunkplan_calls_total", method="Describe",
                               code="INVALID_ARGUMENT"), 1)
        self.assertEqual(moved("chunkplan_call_duration_seconds_count",
                               method="Describe"), 2)
        self.assertEqual(moved("chunkplan_call_params_sum",
                               method="Describe"), 28)

    def test_plan_is_counted_as_its_own_method(self):
        """Plan (chunkplan plan --server) is counted under its own method,
        with its numels: here a request the service refuses before the
        planner runs (a workload needs a model)."""
        before, _ = parse(scrape(self.url)[1])
        path = os.path.join(self.tmp, "plan.json")
        with open(path, "w") as f:
            json.dump({"search": {"numels": [1000, 2000, 3000]},
                       "cluster": {"device_memory_bytes": "1000",
                                   "gpus_per_node": 1, "world_sizes": [1]},
                       "workload": {"micro_batch": 1,
                                    "sequence_length": 8}}, f)
        result = run_cli("plan", "--request", path, "--server",
                         self.server.address, "--deadline", "60s")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("workload: ", result.stderr)
        after, _ = parse(scrape(self.url)[1])
        self.assertEqual(
            value(after, "chunkplan_calls_total", method="Plan",
                  code="INVALID_ARGUMENT")
            - value(before, "chunkplan_calls_total", method="Plan",
                    code="INVALID_ARGUMENT"), 1)
        self.assertEqual(
            value(after, "chunkplan_call_params_sum", method="Plan")
            - value(before, "chunkplan_call_params_sum", method="Plan"), 3)

    def test_build_info_names_the_version_and_engines(self):
        version = subprocess.run(
            [os.environ["CHUNKPLAN_SERVER"], "--version"], capture_output=True,
            text=True, timeout=PATIENCE_S).stdout.splitlines()
        number = version[0].split()[1]
        engines = version[1].split(":", 1)[1].strip()
        samples, types = parse(scrape(self.url)[1])
        self.assertEqual(types["chunkplan_build_info"], "gauge")
        self.assertEqual(value(samples, "chunkplan_build_info",
                               version=number, engines=engines), 1)

    def test_other_paths_are_404(self):
        with self.assertRaises(urllib.error.HTTPError) as caught:
            scrape(self.url.replace("/metrics", "/"))
        self.assertEqual(caught.exception.code, 404)


class MetricsFlagsTest(unittest.TestCase):

    def test_bad_address_exits_2(self):
        result = run_server_to_exit("--metrics_listen=nonsense")
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertIn("--metrics_listen", result.stderr)

    def test_port_in_use_exits_1(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen(1)
            port = taken.getsockname()[1]
            result = run_server_to_exit(f"--metrics_listen=127.0.0.1:{port}")
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn("cannot listen for metrics", result.stderr)


if __name__ == "__main__":
    unittest.main()
