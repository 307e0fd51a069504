#!/usr/bin/python3
"""Tests of the oracle against a published figure and hand-checked cases.

Run: /usr/bin/python3 tests/oracle/oracle_test.py  (ctest: oracle_test)
"""

import json
import os
import subprocess
import sys
import unittest
from unittest import mock

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import chunk_search_oracle as oracle  # noqa: E402

ORACLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "chunk_search_oracle.py")

# 2**-20: one element in the units of the _m fields (exact in binary).
ONE_ELEMENT_M = 1.0 / (1 << 20)


def gpt2_numels(n_layer=2, n_embd=128, vocab=50258, n_positions=1024):
    """numel of each parameter of HF GPT2LMHeadModel in model.parameters()
    order; the tied lm_head is not yielded again."""
    layer = [
        n_embd, n_embd,                      # ln_1.weight, ln_1.bias
        n_embd * 3 * n_embd, 3 * n_embd,     # attn.c_attn (Conv1D 128x384)
        n_embd * n_embd, n_embd,             # attn.c_proj
        n_embd, n_embd,                      # ln_2
        n_embd * 4 * n_embd, 4 * n_embd,     # mlp.c_fc (Conv1D 128x512)
        4 * n_embd * n_embd, n_embd,         # mlp.c_proj
    ]
    return ([vocab * n_embd, n_positions * n_embd] + layer * n_layer +
            [n_embd, n_embd])                # ln_f


def config(degree, chunk_size, keep_gathered):
    return {"dp_degree": degree, "chunk_size": str(chunk_size),
            "keep_gathered": keep_gathered}


def answer(configs, total, waste):
    return {"configs": configs, "total_param_size": str(total),
            "min_chunk_waste": str(waste)}


def run_cli(args, stdin):
    done = subprocess.run([sys.executable, ORACLE] + args, input=stdin,
                          capture_output=True, text=True, check=True)
    return done.stdout


class PublishedFigureTest(unittest.TestCase):
    """ColossalAI's own GPT-2 case: chunk size 527872 at dp 1 and dp 4."""

    def request(self, degree):
        return {"numels": gpt2_numels(), "dp_degrees": [degree],
                "search_range_m": 1, "search_interval": 128,
                "min_chunk_size_m": 0, "filter_exlarge_params": True}

    def test_gpt2_dp1_and_dp4(self):
        numels = gpt2_numels()
        self.assertEqual(len(numels), 28)
        for degree in (1, 4):
            with self.subTest(degree=degree):
                got = oracle.search(self.request(degree))
                self.assertNotIn("error", got)
                self.assertEqual(got["configs"],
                                 [config(degree, 527872, False)])
                self.assertEqual(got["total_param_size"], str(sum(numels)))

    def test_gpt2_through_the_cli_and_strict(self):
        text = json.dumps(self.request(4))
        for args in ([], ["--strict"]):
            with self.subTest(args=args):
                got = json.loads(run_cli(args, text))
                self.assertEqual(got["configs"], [config(4, 527872, False)])


class HandCheckedTest(unittest.TestCase):

    def test_next_fit_sweep(self):
        # start 5; C=5: [3|pad 2][5][2|pad 3] -> 5; C=6: [3|3][5|1][2|4] -> 8;
        # C=7: [3|4][5,2] -> 4. Best 7, waste 4.
        got = oracle.search({"numels": [3, 5, 2], "search_interval": 1,
                             "search_range_m": 2 * ONE_ELEMENT_M,
                             "min_chunk_size_m": 0,
                             "filter_exlarge_params": False})
        self.assertEqual(got, answer([config(1, 7, False)], 10, 4))

    def test_round_half_to_even(self):
        # search_range = round(x.5): 0.5 -> 0 (only C=5, waste 5),
        # 1.5 -> 2 and 2.5 -> 2 (C=5..7, best 7 with waste 4).
        expected = {0.5: (5, 5), 1.5: (7, 4), 2.5: (7, 4)}
        for halves, (chunk, waste) in expected.items():
            with self.subTest(search_range=halves):
                got = oracle.search({"numels": [3, 5, 2], "search_interval": 1,
                                     "search_range_m": halves * ONE_ELEMENT_M,
                                     "min_chunk_size_m": 0,
                                     "filter_exlarge_params": False})
                self.assertEqual(got,
                                 answer([config(1, chunk, False)], 10, waste))

    def test_gathered_groups_come_first(self):
        # min 50: degree 2's total 30 stays gathered, degree 1 ([100]) is
        # swept: start ceil(100/30)*30 = 120, waste 20; lcm(1, 2) keeps 120.
        got = oracle.search({"numels": [100, 10, 20], "dp_degrees": [1, 2, 2],
                             "search_interval": 30, "search_range_m": 0,
                             "min_chunk_size_m": 50 * ONE_ELEMENT_M})
        self.assertEqual(got, answer([config(2, 30, True),
                                      config(1, 120, False)], 130, 20))

    def test_all_groups_gathered(self):
        got = oracle.search({"numels": [1, 2], "dp_degrees": [1, 2],
                             "search_interval": 1})
        self.assertEqual(got, answer([config(1, 1, True), config(2, 2, True)],
                                     3, 0))

    def test_lcm_of_coprime_degrees(self):
        # Each group [100]: start ceil(100/7)*7 = 105, waste 3 x 5 = 15;
        # rounded up to lcm(2, 3, 5) = 30: 120.
        got = oracle.search({"numels": [100, 100, 100], "dp_degrees": [2, 3, 5],
                             "search_interval": 7, "search_range_m": 0,
                             "min_chunk_size_m": 0,
                             "filter_exlarge_params": False})
        self.assertEqual(got, answer([config(d, 120, False) for d in (2, 3, 5)],
                                     300, 15))

    def test_size_at_the_limit_stays(self):
        # Nine 0s and one 10: mean 1, std 3 (exact), limit 10: the 10 stays,
        # so the start is 10. Nineteen 0s and one 10: limit about 7.04, the
        # 10 goes and the start is the minimum, 4.
        base = {"search_interval": 1, "search_range_m": 0,
                "min_chunk_size_m": 4 * ONE_ELEMENT_M}
        kept = oracle.search(dict(base, numels=[0] * 9 + [10]))
        self.assertEqual(kept, answer([config(1, 10, False)], 10, 0))
        dropped = oracle.search(dict(base, numels=[0] * 19 + [10]))
        self.assertEqual(dropped, answer([config(1, 4, False)], 10, 0))

    def test_proto_json_spellings(self):
        plain = oracle.search({"numels": [3, 5, 2], "search_interval": 1,
                               "search_range_m": 2 * ONE_ELEMENT_M,
                               "min_chunk_size_m": 0,
                               "filter_exlarge_params": False})
        spelled = oracle.search({"numels": ["3", "5", "2"],
                                 "searchInterval": "1",
                                 "searchRangeM": str(2 * ONE_ELEMENT_M),
                                 "minChunkSizeM": 0,
                                 "filterExlargeParams": False,
                                 "engine": "ENGINE_CPU_PLATEAU"})
        self.assertEqual(plain, spelled)


class ExtensionTest(unittest.TestCase):
    """A group the filter empties: the seed crashes, the extension answers."""

    # Degree 1: twenty 3s; degree 2: one 1000, an outlier (z = 20/sqrt(21)
    # > 3) that empties its group. Sweep C = 3..6 over the 3s: C=3 wastes 0.
    # Both degrees get 3 rounded up to lcm(1, 2): 4.
    REQUEST = {"numels": [3] * 20 + [1000], "dp_degrees": [1] * 20 + [2],
               "search_interval": 1, "search_range_m": 3 * ONE_ELEMENT_M,
               "min_chunk_size_m": 0}

    def test_default_answers(self):
        self.assertEqual(oracle.search(self.REQUEST),
                         answer([config(1, 4, False), config(2, 4, False)],
                                1060, 0))

    def test_strict_errors(self):
        got = oracle.search(self.REQUEST, strict=True)
        self.assertIn("error", got)
        self.assertIn("max()", got["error"])
        cli = json.loads(run_cli(["--strict"], json.dumps(self.REQUEST)))
        self.assertIn("error", cli)

    def test_every_swept_group_emptied(self):
        # numpy's rounding never drops every size (the smallest is within
        # 3 std of the mean), so empty the groups by hand. Minimum 3 (both
        # groups swept): start ceil(3/4)*4 = 4, waste 0, rounded up to
        # lcm(3, 2) = 6: 6.
        def empty_all(size_dict):
            for key in size_dict:
                size_dict[key] = []

        request = {"numels": [5, 7, 1], "dp_degrees": [3, 2, 3],
                   "search_interval": 4, "search_range_m": 0,
                   "min_chunk_size_m": 3 * ONE_ELEMENT_M}
        with mock.patch.object(oracle, "_filter_exlarge_params", empty_all):
            got = oracle.search(request)
            strict = oracle.search(request, strict=True)
        self.assertEqual(got, answer([config(3, 6, False),
                                      config(2, 6, False)], 13, 0))
        self.assertIn("error", strict)


class UnusedBytesTest(unittest.TestCase):
    """The search's waste for a block of chunk sizes at once
    (_unused_bytes) against the seed's _get_unused_byte, one size at a
    time, on random groups: oversize parameters, empty groups and ties
    included."""

    def test_equals_the_seeds_loop_size_by_size(self):
        import random
        rng = random.Random(7)
        for _ in range(300):
            size_list = [rng.choice([1, rng.randint(1, 64),
                                     rng.randint(1, 4096)])
                         for _ in range(rng.randint(0, 40))]
            start = rng.randint(1, 2048)
            step = rng.randint(1, 64)
            sizes = list(range(start, start + step * rng.randint(1, 80),
                               step))
            got = oracle._unused_bytes(size_list,
                                       np.array(sizes, dtype=np.int64))
            want = [oracle._get_unused_byte(size_list, c) for c in sizes]
            self.assertEqual([int(x) for x in got], want)

    def test_int64_guard(self):
        self.assertTrue(oracle._fits_int64({1: [10, 20]}, 1 << 20))
        self.assertFalse(oracle._fits_int64({1: [2**61]}, 2**61))


class ErrorTest(unittest.TestCase):

    def assertError(self, request, strict=False):
        got = oracle.search(request, strict=strict)
        self.assertEqual(list(got), ["error"], got)

    def test_where_the_seed_raises(self):
        self.assertError({"numels": [], "search_interval": 1})
        self.assertError({"numels": [5], "search_interval": 0})
        self.assertError({"numels": [5], "search_interval": 1,
                          "search_range_m": -1})
        self.assertError({"numels": [5], "search_interval": 1,
                          "search_range_m": "NaN"})
        self.assertError({"numels": [5], "search_interval": 1,
                          "min_chunk_size_m": "Infinity"})
        for strict in (False, True):
            self.assertError({"numels": [5], "search_interval": 0}, strict)

    def test_contract_rejections(self):
        # The seed only warns on degree 0 (numpy: x % 0 is 0) and runs on a
        # negative minimum; the contract rejects both.
        self.assertError({"numels": [5], "dp_degrees": [0],
                          "search_interval": 1})
        self.assertError({"numels": [5], "search_interval": 1,
                          "min_chunk_size_m": -1})
        self.assertNotIn("error", oracle.search(
            {"numels": [5], "search_interval": 1,
             "min_chunk_size_m": -1}, strict=True))

    def test_malformed_requests(self):
        self.assertError({"numels": [5, 6], "dp_degrees": [1, 2, 3],
                          "search_interval": 1})
        self.assertError({"numels": [-5], "search_interval": 1})
        self.assertError({"numels": [5], "search_interval": 1, "typo": 1})
        self.assertError([5])

    def test_jsonl_keeps_order(self):
        lines = [
            json.dumps({"numels": [3, 5, 2], "search_interval": 1,
                        "search_range_m": 2 * ONE_ELEMENT_M,
                        "min_chunk_size_m": 0,
                        "filter_exlarge_params": False}),
            "not json",
            json.dumps({"numels": [1, 2], "dp_degrees": [1, 2],
                        "search_interval": 1}),
        ]
        out = run_cli(["--jsonl"], "\n".join(lines) + "\n").splitlines()
        self.assertEqual(len(out), 3)
        self.assertEqual(json.loads(out[0]),
                         answer([config(1, 7, False)], 10, 4))
        self.assertIn("error", json.loads(out[1]))
        self.assertEqual(json.loads(out[2]),
                         answer([config(1, 1, True), config(2, 2, True)], 3, 0))


if __name__ == "__main__":
    unittest.main()
