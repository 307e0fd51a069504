#!/usr/bin/python3
"""The layout oracle's all-at-once sweep (layout_sweep) against its
reference, one candidate at a time (_seed_waste, and values(): _layout's
next-fit, shards and rank bytes), on random small searched requests: every
candidate's seed waste, layout padding and peak must be equal, and so the
frontier and the pick of every objective.

Run: /usr/bin/python3 tests/oracle/layout_sweep_test.py
     (ctest: layout_sweep_test; a few seconds)
"""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import layout_oracle as oracle  # noqa: E402

# 2**-20: one element in the units of the _m fields (exact in binary).
ONE_ELEMENT_M = 1.0 / (1 << 20)
CASES = 800


def random_request(rng):
    """A searched LayoutRequest over a few parameters and degrees, with
    zero-element and oversize tensors, frozen ones, kept-gathered groups
    (min_chunk_size above a group's total) and every memory switch."""
    count = rng.randint(1, 24)
    degrees = [rng.choice((1, 2, 3, 4, 8)) for _ in range(count)]
    # Mostly small, now and then one the 3-sigma filter drops (so over C).
    numels = [rng.choice((0, rng.randint(1, 40), rng.randint(1, 40),
                          rng.randint(1, 400), rng.randint(1, 400),
                          rng.randint(1, 400), rng.randint(2000, 5000)))
              for _ in range(count)]
    request = {
        "search": {
            "numels": numels, "dp_degrees": degrees,
            "search_range_m": rng.randint(0, 120) * ONE_ELEMENT_M,
            "search_interval": rng.randint(1, 9),
            "min_chunk_size_m": rng.randint(0, 150) * ONE_ELEMENT_M,
            "filter_exlarge_params": rng.random() < 0.7},
        "gemini": {
            "master_weights": rng.random() < 0.7,
            "gradient_accumulation": rng.random() < 0.3,
            "pin_memory": rng.random() < 0.5,
            "optimizer": rng.choice(("OPTIMIZER_ADAM", "OPTIMIZER_NONE"))},
        "objective": rng.choice(("OBJECTIVE_SEED_WASTE",
                                 "OBJECTIVE_LAYOUT_PADDING",
                                 "OBJECTIVE_PEAK_RANK_BYTES"))}
    if rng.random() < 0.4:
        request["frozen"] = [rng.random() < 0.3 for _ in range(count)]
    return request


class SweepTest(unittest.TestCase):

    def test_all_at_once_equals_one_at_a_time(self):
        rng = random.Random(20261205)
        checked = gathered = oversize = 0
        for case in range(CASES):
            request = random_request(rng)
            req = oracle._Request(request, need_search=True)
            for measures in (False, True):
                self.assertEqual(
                    req.sweep(measures, method="all_at_once"),
                    req.sweep(measures, method="reference"),
                    f"case {case}: {request}")
            checked += 1
            gathered += bool(req.grid.gathered)
            oversize += max(request["search"]["numels"]) > req.grid.start
        # The cases reach kept-gathered groups and tensors over C.
        self.assertEqual(checked, CASES)
        self.assertGreater(gathered, CASES // 10)
        self.assertGreater(oversize, CASES // 20)

    def test_the_sweep_is_used_and_moves_fall_back(self):
        rng = random.Random(7)
        request = random_request(rng)
        req = oracle._Request(request, need_search=True)
        chunks = list(range(req.grid.start, req.grid.start + 3))
        self.assertIsNotNone(req._swept_measures(chunks))
        request["gemini"]["offload_optim_frac"] = 0.5
        req = oracle._Request(request, need_search=True)
        self.assertIsNone(req._swept_measures(chunks))
        self.assertEqual(req.sweep(True, method="all_at_once"),
                         req.sweep(True, method="reference"))


if __name__ == "__main__":
    unittest.main()
