#!/usr/bin/python3
"""The placement oracle's shortcuts against the brute force they replace.

place() takes each rank's extremes over every chunk order by sorting each
size's chunks (_Extremes.by_sorting, docs/placement.md "Which chunks, over
every order"); here it is held equal to the enumeration of every choice of
chunks (_Extremes.by_enumeration) on random small layouts: mixed chunk
sizes (oversize tensors, groups of several degrees), kept-gathered groups,
frozen parameters, every switch of the settings, shard_param_frac beside a
partial offload, and fractions of 0, 1, random ones and ones at the exact
thresholds where one more chunk is offloaded. _visit, which simulates
setup_grads_device's loop a run of equal chunks at a time, is held equal to
the loop itself, one chunk at a time. The hand-worked cases of the policies
are layout_oracle_test.py's PlacementTest.

Run: /usr/bin/python3 tests/oracle/placement_oracle_test.py
     (ctest: placement_oracle_test)
"""

import collections
import itertools
import math
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layout_oracle as lo  # noqa: E402
import placement_oracle as po  # noqa: E402


def visit_one_by_one(weights, budget):
    """setup_grads_device's loop as ColossalAI writes it: each chunk goes
    to the host while the bytes offloaded so far are below the budget."""
    offloaded, taken = 0, []
    for w in weights:
        taken.append(offloaded < budget)
        offloaded += w if taken[-1] else 0
    return taken


def random_layout(rng):
    """(groups, frozen_numel): one to three groups of distinct degrees and
    chunk sizes, now and then an oversize tensor (a chunk of its own size:
    one of two per group, so that sizes repeat and the size classes stay
    few), some tensors frozen (in no chunk), a group kept gathered now and
    then."""
    groups, frozen_numel = [], 0
    for degree in rng.sample([1, 2, 3, 4], rng.randint(1, 3)):
        size = degree * rng.randint(2, 12)
        params = []
        for i in range(rng.randint(1, 7)):
            numel = (rng.choice([size + 1, 2 * size]) if rng.random() < 0.15
                     else rng.randint(0, size))
            if rng.random() < 0.15:
                frozen_numel += numel
            else:
                params.append((i, numel))
        chunks = lo._place(params, size, degree)
        kept = rng.random() < 0.2
        groups.append(lo.Group(lo.Config(degree, size, kept), chunks,
                               sum(c.size - c.used for c in chunks)))
    return groups, frozen_numel


def random_settings(rng, optim):
    return {"precision": 0, "master_weights": rng.random() < 0.8,
            "gradient_accumulation": rng.random() < 0.3,
            "pin_memory": rng.random() < 0.5,
            "optimizer": po.OPTIMIZER_NONE if rng.random() < 0.1 else 0,
            "placement": po.PLACEMENT_STATIC,
            "shard_param_frac": (rng.choice([0.3, 0.6, 0.9])
                                 if rng.random() < 0.25 else None),
            "offload_optim_frac": optim,
            "offload_param_frac": rng.choice([0.0, 0.0, 0.5]),
            "device_memory_bytes": None}


def thresholds(groups):
    """Fractions at and around every sum of whole chunks' fp16 bytes: the
    budgets T x f where one more chunk is offloaded (f = s / T, then the
    doubles on either side), inside (0, 1)."""
    flat = [(c, g.config.dp_degree, g.config.keep_gathered)
            for g in groups for c in g.chunks]
    total = float(sum(po.HALF * c.size * c.num_params for c, _, _ in flat))
    classes = po._classes(flat)
    sums = {sum(w * k for w, k in zip(classes, counts))
            for counts in itertools.product(
                *(range(len(v) + 1) for v in classes.values()))}
    out = set()
    for s in sums:
        f = s / total if total else 0.0
        out |= {math.nextafter(f, 0.0), f, math.nextafter(f, 1.0)}
    return sorted(f for f in out if 0.0 < f < 1.0)


class VisitTest(unittest.TestCase):

    def test_runs_are_the_loop_one_chunk_at_a_time(self):
        rng = random.Random(2701)
        for _ in range(3000):
            runs = [(rng.randint(0, 9), rng.randint(0, 4))  # 0: empty chunks
                    for _ in range(rng.randint(1, 4))]
            weights = [w for w, k in runs for _ in range(k)]
            total = sum(weights)
            budget = rng.choice([rng.uniform(0, total + 1),
                                 float(rng.randint(0, total + 1)),
                                 math.nextafter(rng.randint(1, total + 1), 0),
                                 0.0])
            one = visit_one_by_one(weights, budget)
            ends = list(itertools.accumulate(k for _, k in runs))
            starts = [0] + ends[:-1]
            self.assertEqual(po._visit(runs, budget),
                             [sum(one[a:b]) for a, b in zip(starts, ends)],
                             (runs, budget))


class ExtremesTest(unittest.TestCase):

    def test_sorting_equals_the_enumeration(self):
        rng = random.Random(2727)
        compared = differ = thresholds_seen = 0
        seen = collections.Counter()
        for case in range(400):
            groups, frozen_numel = random_layout(rng)
            seen["mixed sizes"] += len({c.size for g in groups
                                        for c in g.chunks}) > 1
            seen["kept gathered"] += any(g.config.keep_gathered
                                         for g in groups)
            seen["frozen"] += frozen_numel > 0
            fractions = [0.0, 1.0] + [rng.random() for _ in range(2)]
            at = thresholds(groups)
            fractions += rng.sample(at, min(4, len(at)))
            thresholds_seen += min(4, len(at))
            for f in fractions:
                s = random_settings(rng, f)
                sorted_ = po.place(groups, frozen_numel, s)
                enumerated = po.place(groups, frozen_numel, s,
                                      by_enumeration=True)
                self.assertEqual(sorted_, enumerated, (case, groups, s))
                compared += 1
                differ += sorted_[0] != sorted_[1]
                seen["gathered at run time"] += (
                    sorted_[3]["gathered_at_run_time"] > 0)
        # Enough cases where the order matters (rank 0's two extremes
        # differ), of each kind of layout, and the thresholds were asked.
        self.assertGreater(differ, 600)
        self.assertGreater(min(seen.values()), 60, seen)
        self.assertGreater(thresholds_seen, 800)
        self.assertEqual(compared, 4 * 400 + thresholds_seen)

    def test_auto_offloads_every_chunk_either_way(self):
        rng = random.Random(2728)
        for _ in range(50):
            groups, frozen_numel = random_layout(rng)
            s = random_settings(rng, 0.0)
            s.update(placement=po.PLACEMENT_AUTO, shard_param_frac=None,
                     offload_param_frac=0.0)
            self.assertEqual(po.place(groups, frozen_numel, s),
                             po.place(groups, frozen_numel, s,
                                      by_enumeration=True))


if __name__ == "__main__":
    unittest.main()
