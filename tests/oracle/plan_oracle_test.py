#!/usr/bin/python3
"""The plan oracle against cases worked by hand from docs/plan.md,
docs/placement.md and docs/layout.md (the arithmetic is written below), and
its two shortcuts (the peak objective's jumps, the bisected f*) against
the brute force they replace.

Run: /usr/bin/python3 tests/oracle/plan_oracle_test.py
     (ctest: plan_oracle_test)
"""

import json
import math
import os
import random
import subprocess
import sys
import unittest
from unittest import mock

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layout_oracle as lo  # noqa: E402
import plan_oracle as oracle  # noqa: E402
import placement_oracle as po  # noqa: E402

# Eight tensors of 64 elements. With min_chunk_size_m 0, interval 128 and
# search_range_m 0 the grid is the one size 128 = ceil(64 / 128) * 128, so
# at W = 1 next-fit makes 4 chunks of 2 tensors, none padded. GeminiPlugin's
# defaults (fp16, master weights, gradients in the fp16 chunk, Adam,
# pinned), per chunk on rank 0: params 2 * 128 = 256, master 4 * 128 = 512,
# Adam 8 * 128 = 1024; so device 4 * 1792 = 7168, the gathered buffer
# 2 * 128 = 256, and the inflated total T = 4 chunks * 256 bytes * 2
# parameters = 2048. The wide grid (interval 128, 1024 Mi) starts at 128
# too and nothing beats it: C = 256 gives 2 chunks, 3072 + 4096 + 512 = 7680
# > 7168 + 256 = 7424. So all three sources are one chunk size.
TINY = [64] * 8


def request(world_sizes, device, numels=TINY, interval=128, host=0,
            gpus=1, margin=0.0, **extra):
    """A plan of TINY; margin 0 by default, so that the cases worked by hand
    hold their needs against the whole device (class Margin sets one)."""
    r = {"search": {"numels": numels, "search_range_m": 0,
                    "search_interval": interval, "min_chunk_size_m": 0},
         "cluster": {"device_memory_bytes": device,
                     "host_memory_bytes": host, "gpus_per_node": gpus,
                     "world_sizes": world_sizes},
         "max_options": 100}
    if margin is not None:
        r["cluster"]["margin"] = margin
    r.update(extra)
    return r


def answer(r):
    a = oracle.plan(r)
    assert "error" not in a, a
    return a


def by_rank(a):
    """placement rank -> option, for answers of one world size and chunk."""
    out = {}
    for o in a["options"]:
        g = o["gemini"]
        if g["placement"] == "PLACEMENT_AUTO":
            rank = oracle.AUTO
        elif g["offload_param_frac"] > 0:
            rank = oracle.OPTIMIZER_AND_PARAMS
        elif g["offload_optim_frac"] == 1.0:
            rank = oracle.FULL_OPTIMIZER
        elif g["offload_optim_frac"] > 0:
            rank = oracle.PARTIAL_OPTIMIZER
        else:
            rank = oracle.NOTHING_MOVED
        out[rank] = o
    return out


class Fractions(unittest.TestCase):
    def test_f_star_is_just_above_a_breakpoint(self):
        # Offloading a chunk's optimizer side frees master 512 + Adam 1024 =
        # 1536 on rank 0: the need is 7424 - 1536 k with k chunks
        # offloaded. Device 4400: k = 1 gives 5888 (fails), k = 2 gives
        # 4352 (passes). The chunks have one size (256 fp16 bytes), so the
        # breakpoints are 0, 256, 512, 768, 1024: a budget in (0, 256]
        # offloads 1 chunk, (256, 512] offloads 2. The budget is
        # T * f = 2048 f > 256, and 2048 * 0.125 = 256 exactly, so f* is
        # the double after 0.125 -- well below the 50% of the optimizer
        # that moves, since T counts each chunk twice.
        options = by_rank(answer(request([1], 4400)))
        self.assertEqual(sorted(options), [oracle.NOTHING_MOVED,
                                           oracle.PARTIAL_OPTIMIZER,
                                           oracle.FULL_OPTIMIZER,
                                           oracle.AUTO])
        partial = options[oracle.PARTIAL_OPTIMIZER]
        f = partial["gemini"]["offload_optim_frac"]
        self.assertEqual(f, math.nextafter(0.125, 1.0))
        self.assertEqual(partial["device_need_bytes"], str(7424 - 2 * 1536))
        self.assertEqual(partial["most_loaded_rank"]["device_bytes"],
                         str(7168 - 2 * 1536))
        self.assertTrue(partial["fits"])
        self.assertEqual(options[oracle.NOTHING_MOVED]["device_need_bytes"],
                         "7424")
        # Full offload: params only, 4 * 256 + the buffer.
        self.assertEqual(options[oracle.FULL_OPTIMIZER]["device_need_bytes"],
                         "1280")

    def test_g_star_is_just_past_a_suffix_sum(self):
        # Device 1000: full optimizer offload needs 1280 (fails). Moving the
        # fp16 shards of the first k chunks (compute order) frees 256 each:
        # k = 1 gives 1024 (fails), k = 2 gives 768 (passes). The suffix
        # sums of the fp16 bytes are 1024, 768, 512, 256: two chunks move
        # once keep = 2048 * (1 - g) < 768, i.e. 1 - g < 0.375. At
        # g = 0.625, 1 - g = 0.375 exactly (keep 768, not below); the next
        # double, 0.625 + 2^-53, gives 1 - g = 0.375 - 2^-53 (exact: the
        # spacing below 0.5 is 2^-54), keep 768 - 2^-42 < 768.
        options = by_rank(answer(request([1], 1000)))
        self.assertEqual(sorted(options), [oracle.NOTHING_MOVED,
                                           oracle.FULL_OPTIMIZER,
                                           oracle.OPTIMIZER_AND_PARAMS,
                                           oracle.AUTO])
        both = options[oracle.OPTIMIZER_AND_PARAMS]
        self.assertEqual(both["gemini"]["offload_optim_frac"], 1.0)
        self.assertEqual(both["gemini"]["offload_param_frac"],
                         math.nextafter(0.625, 1.0))
        self.assertEqual(both["device_need_bytes"], "768")
        self.assertTrue(both["fits"])
        # No partial optimizer offload: even f just below 1 leaves 1280.
        self.assertFalse(options[oracle.FULL_OPTIMIZER]["fits"])

    def test_no_fraction_fits(self):
        # Device 200: even every fp16 shard on the host leaves the 256-byte
        # buffer, so neither fraction helps: ranks 0, 2 and 4, none fits.
        options = by_rank(answer(request([1], 200)))
        self.assertEqual(sorted(options), [oracle.NOTHING_MOVED,
                                           oracle.FULL_OPTIMIZER,
                                           oracle.AUTO])
        self.assertFalse(any(o["fits"] for o in options.values()))

    def test_bisection_and_scan_agree(self):
        # The bisected breakpoints (rank 0's bytes from the count vectors)
        # against the placement oracle asked at every breakpoint in order,
        # on fresh random layouts of two and three chunk sizes.
        rng = random.Random(28)
        checked = 0
        for _ in range(30):
            numels = [rng.choice([64, 96, 200, 320]) for _ in range(
                rng.randint(3, 14))]
            r = request([rng.choice([1, 2, 4])], 1, numels=numels,
                        interval=rng.choice([64, 96, 128]))
            r["gemini"] = {"master_weights": rng.random() < 0.7,
                           "pin_memory": rng.random() < 0.5}
            parsed = oracle.parse(r)
            (_, numels_at_tp1, _), = parsed.meshes  # tp 1: the numels sent
            world = oracle._worlds(parsed, numels_at_tp1,
                                   oracle.world_sizes(parsed.cluster))[0]
            for _, configs in oracle._chunk_sizes(world):
                ev = oracle._Evaluator(oracle.parse(r), world, configs, (0, 0),
                                       None)
                nothing = ev.place(po.PLACEMENT_STATIC)[0]["device_bytes"]
                full = ev.place(po.PLACEMENT_STATIC, 1.0)[0]["device_bytes"]
                # Rank 0's worst-order bytes from the count vectors are the
                # placement oracle's, at breakpoints and between them.
                vectors = oracle._CountVectors(ev)
                for f in [rng.random() for _ in range(3)] + [
                        oracle._smallest_f_above(s, float(ev.total))
                        for s in vectors.breakpoints()[:4]]:
                    self.assertEqual(
                        vectors.worst_device(float(ev.total) * f),
                        ev.place(po.PLACEMENT_STATIC, f)[0]["device_bytes"],
                        (r, f))
                for device in rng.sample(range(full, nothing + 1), 3):
                    ev.parsed = oracle.parse(dict(r, cluster=dict(
                        r["cluster"], device_memory_bytes=device +
                        ev.fixed)))
                    ev.cache.clear()
                    results = []
                    for limit in (0, 10**6):
                        with mock.patch.object(oracle, "LINEAR_BREAKPOINTS",
                                               limit):
                            with mock.patch.object(oracle, "LINEAR_CHUNKS",
                                                   limit):
                                results.append(oracle._partial_optim(ev))
                    self.assertEqual(results[0], results[1], (r, device))
                    checked += results[0] is not None
        self.assertGreater(checked, 20)


class Sources(unittest.TestCase):
    def test_equal_configs_are_one_chunk_size(self):
        a = answer(request([1], 4400))
        self.assertEqual({o["chunk_size_from"] for o in a["options"]},
                         {"colossalai_search"})
        self.assertEqual({o["objective"] for o in a["options"]},
                         {"OBJECTIVE_SEED_WASTE"})
        self.assertEqual(a["options_considered"], "4")

    def test_the_wide_grid_finds_a_better_size(self):
        # Interval 192: the request's grid is the one size 192, 3 tensors a
        # chunk, chunks [3][3][2] of 192: device 6 * 576 + 8 * 512 = 7552,
        # + 384 = 7936. Both request-grid sources are 192 (one chunk size);
        # the wide grid (interval min(128, 192) = 128) finds 128 (7424).
        a = answer(request([1], 10**6, interval=192))
        sizes = {(o["chunk_size_from"], o["configs"][0]["chunk_size"],
                  o["objective"], o["device_need_bytes"])
                 for o in a["options"]
                 if o["gemini"]["offload_optim_frac"] == 0.0 and
                 o["gemini"]["placement"] == "PLACEMENT_STATIC"}
        self.assertEqual(sizes, {
            ("colossalai_search", "192", "OBJECTIVE_SEED_WASTE", "7936"),
            ("peak_rank_bytes_wide", "128", "OBJECTIVE_PEAK_RANK_BYTES",
             "7424")})
        self.assertEqual(a["options_considered"], "6")

    def test_divisibility(self):
        # The search rounds its pick up to the lcm of the degrees, W, so
        # the colossalai_search option at W = 3 lays out 129 = 43 * 3, not
        # 128: the divisibility rule cannot fire through a request.
        a = answer(request([3], 10**6))
        self.assertIn(("colossalai_search", "129"),
                      {(o["chunk_size_from"], o["configs"][0]["chunk_size"])
                       for o in a["options"]})
        # The rule itself: a non-gathered size not a multiple of W is out.
        self.assertFalse(oracle._divisible([lo.Config(3, 128, False)], 3))
        self.assertTrue(oracle._divisible([lo.Config(3, 128, True)], 3))
        self.assertTrue(oracle._divisible([lo.Config(3, 129, False)], 3))

    def test_next_change(self):
        # A 1000-element tensor, then 30 of 10 (the 3-sigma filter leaves
        # the giant out of the grid's start). At C' = 300: the giant's
        # oversize chunk [1000], then one chunk of the 30 (used 300, the
        # last: nothing follows it). The only decision that can flip is the
        # giant's: at C' = 1000 it opens a regular chunk. At C' = 20 the
        # small chunks [10, 10] would take the next 10 at C' = 30.
        numels = [1000] + [10] * 30
        search = {"numels": numels, "search_range_m": 1, "search_interval": 10,
                  "min_chunk_size_m": 0}
        parsed = lo.parse({"search": search})
        layout = lo._layout(numels, parsed.args[1], [],
                            [lo.Config(1, 300, False)], parsed.settings)
        self.assertEqual([c.size for c in layout.groups[0].chunks],
                         [1000, 300])
        self.assertEqual(oracle._next_change(layout, numels), 1000)
        layout = lo._layout(numels, parsed.args[1], [],
                            [lo.Config(1, 20, False)], parsed.settings)
        self.assertEqual(oracle._next_change(layout, numels), 30)
        # The first grid index whose C' reaches t: grid 10, 20, ... with
        # W = 4 (C' = C rounded up to a multiple of 4): C = 990 (index 98)
        # gives 992, C = 1000 (index 99) gives 1000. So t = 993 .. 1000 is
        # first reached at index 99, t = 992 at 98; never before index + 1.
        grid = lo._grid(lo.parse({"search": dict(search, dp_degrees=[4])})
                        .args)
        self.assertEqual((grid.start, grid.interval, grid.lcm), (10, 10, 4))
        self.assertEqual(oracle._first_index_reaching(grid, 3, 1000), 99)
        self.assertEqual(oracle._first_index_reaching(grid, 3, 993), 99)
        self.assertEqual(oracle._first_index_reaching(grid, 3, 992), 98)
        self.assertEqual(oracle._first_index_reaching(grid, 120, 996), 121)

    def test_jumps_find_the_brute_force_best(self):
        # Half the cases hold giants the 3-sigma filter leaves out of the
        # grid's start: oversize chunks, whose tensors join or not as C'
        # passes their numel.
        rng = random.Random(2805)
        oversize = 0
        for case in range(80):
            numels = [rng.randint(0, 400) for _ in range(rng.randint(1, 12))]
            if case % 2:
                numels = [rng.randint(0, 40) for _ in range(30)]
                for _ in range(rng.randint(1, 2)):
                    numels.insert(rng.randint(0, 30), rng.randint(300, 3000))
            w = rng.randint(1, 6)
            search = {"numels": numels, "dp_degrees": [w],
                      "search_range_m": rng.randint(0, 3000) / 2**20,
                      "search_interval": rng.randint(1, 90),
                      "min_chunk_size_m": rng.choice([0, 0, 500 / 2**20]),
                      "filter_exlarge_params": rng.random() < 0.5}
            if case % 2:
                search.update(min_chunk_size_m=0, filter_exlarge_params=True)
            frozen = ([rng.random() < 0.2 for _ in numels]
                      if rng.random() < 0.3 else [])
            parsed = lo.parse({"search": search, "frozen": frozen})
            grid = lo._grid(parsed.args)
            args = (parsed.args[0], parsed.args[1], parsed.frozen,
                    parsed.settings, grid)
            self.assertEqual(oracle._peak_best(*args, brute=True),
                             oracle._peak_best(*args, brute=False), search)
            first = lo._layout(args[0], args[1], args[2],
                               lo._configs_at(grid, grid.start), args[3],
                               outcome=False)
            oversize += any(c.size > g.config.chunk_size
                            for g in first.groups for c in g.chunks
                            if not g.config.keep_gathered)
        self.assertGreater(oversize, 30)


class Texts(unittest.TestCase):
    def test_why_not(self):
        # Host bytes of rank 0 with nothing moved: pinned fp16 and master
        # shards, (2 + 4) * 512 = 3072; with 2 GPUs a node at W = 1, one
        # rank a node. Full optimizer offload adds Adam's 4096 on the host.
        a = by_rank(answer(request([1], 4400, host=3000, gpus=2)))
        self.assertEqual(a[oracle.NOTHING_MOVED]["why_not"],
                         "device: 7424 > 4400 by 3024; host: 3072 > 3000 by 72")
        self.assertEqual(a[oracle.FULL_OPTIMIZER]["why_not"],
                         "host: 7168 > 3000 by 4168")
        self.assertEqual(a[oracle.FULL_OPTIMIZER]["host_bytes_per_node"],
                         "7168")
        self.assertFalse(a[oracle.FULL_OPTIMIZER]["fits"])
        self.assertEqual(a[oracle.FULL_OPTIMIZER]["notes"][-1],
                         oracle.OPTIMIZER_NOTE)

    def test_colossalai_text(self):
        a = by_rank(answer(request([1], 4400)))
        f = a[oracle.PARTIAL_OPTIMIZER]["gemini"]["offload_optim_frac"]
        static = eval("dict(" + a[oracle.PARTIAL_OPTIMIZER]["colossalai"] +
                      ")")
        self.assertEqual(static, {
            "placement_policy": "static", "shard_param_frac": 1.0,
            "offload_optim_frac": math.nextafter(0.125, 1.0),
            "offload_param_frac": 0.0, "precision": "fp16",
            "master_weights": True, "enable_gradient_accumulation": False,
            "pin_memory": True,
            "chunk_config_dict": {1: {"chunk_size": 128,
                                      "keep_gathered": False}}})
        self.assertEqual(static["offload_optim_frac"], f)
        r = request([2], 1000, gemini={
            "precision": "PRECISION_BF16", "master_weights": False,
            "gradientAccumulation": True, "pin_memory": False,
            "placement": "PLACEMENT_AUTO", "offload_optim_frac": 0.5})
        auto = by_rank(answer(r))[oracle.AUTO]
        self.assertEqual(eval("dict(" + auto["colossalai"] + ")"), {
            "placement_policy": "auto", "precision": "bf16",
            "master_weights": False, "enable_gradient_accumulation": True,
            "pin_memory": False,
            "chunk_config_dict": {2: {"chunk_size": 128,
                                      "keep_gathered": False}}})
        self.assertEqual(auto["gemini"]["device_memory_bytes"], "1000")
        # The request's placement fields are ignored.
        nothing = by_rank(answer(r))[oracle.NOTHING_MOVED]
        self.assertEqual(nothing["gemini"]["placement"], "PLACEMENT_STATIC")
        self.assertEqual(nothing["gemini"]["offload_optim_frac"], 0.0)


class Order(unittest.TestCase):
    def test_fits_then_world_size_then_rank(self):
        # W = 1 (device 4400): rank 0 needs 7424 (no), f* 4352, full 1280,
        # auto 1280. W = 2: shards of 64, rank 0 device 4 * (128 + 256 +
        # 8 * 64) = 3584 + 256 = 3840 fits, so no f*; full offload and auto
        # 4 * 128 + 256 = 768. The world sizes are given as [2, 1].
        a = answer(request([2, 1], 4400))
        got = [(o["world_size"], o["gemini"]["placement"],
                o["gemini"]["offload_optim_frac"], o["device_need_bytes"],
                o["fits"]) for o in a["options"]]
        f = math.nextafter(0.125, 1.0)
        self.assertEqual(got, [
            (1, "PLACEMENT_STATIC", f, "4352", True),
            (1, "PLACEMENT_STATIC", 1.0, "1280", True),
            (1, "PLACEMENT_AUTO", 0.0, "1280", True),
            (2, "PLACEMENT_STATIC", 0.0, "3840", True),
            (2, "PLACEMENT_STATIC", 1.0, "768", True),
            (2, "PLACEMENT_AUTO", 0.0, "768", True),
            (1, "PLACEMENT_STATIC", 0.0, "7424", False)])
        self.assertEqual(a["options_considered"], "7")
        r = request([2, 1], 4400, max_options=2)
        self.assertEqual(answer(r)["options"], a["options"][:2])

    def test_misfits_by_device_excess_then_host(self):
        # Device 700, host 3500, 2 GPUs a node. W = 1: rank 0 is over by
        # 7424 - 700 = 6724 (host 3072 within); full offload and auto by
        # 580 on the device and 7168 - 3500 = 3668 on the host (pinned 3072
        # + Adam 4096); no f* (1280 at best), but g*: 1280 - 256 k <= 700
        # needs k = 3, keep = 2048 (1 - g) < 512, so g* is the double after
        # 0.75; the host bytes stay (the fp16 shard has its pinned copy):
        # 3668. W = 2 (shards of 64): rank 0 by 3840 - 700 = 3140 (host
        # 2 * 6 * 256 = 3072 within); full offload and auto by 768 - 700 =
        # 68 and 2 * (1536 + 8 * 256) - 3500 = 3668; g*: 768 - 128 k <=
        # 700 needs k = 1, keep < 1024, so the double after 0.5: 3668.
        # By device excess first: the two g* options (0 on the device, then
        # world size), 68, 580, then the device overshoots 3140 and 6724
        # (within the host: they come last all the same).
        a = answer(request([1, 2], 700, host=3500, gpus=2))
        got = [(o["world_size"], o["gemini"]["placement"],
                o["gemini"]["offload_optim_frac"],
                o["gemini"]["offload_param_frac"], o["why_not"])
               for o in a["options"]]
        static, auto = "PLACEMENT_STATIC", "PLACEMENT_AUTO"
        g1, g2 = math.nextafter(0.75, 1.0), math.nextafter(0.5, 1.0)
        host = "host: 7168 > 3500 by 3668"
        self.assertEqual(got, [
            (1, static, 1.0, g1, host),
            (2, static, 1.0, g2, host),
            (2, static, 1.0, 0.0, "device: 768 > 700 by 68; " + host),
            (2, auto, 0.0, 0.0, "device: 768 > 700 by 68; " + host),
            (1, static, 1.0, 0.0, "device: 1280 > 700 by 580; " + host),
            (1, auto, 0.0, 0.0, "device: 1280 > 700 by 580; " + host),
            (2, static, 0.0, 0.0, "device: 3840 > 700 by 3140"),
            (1, static, 0.0, 0.0, "device: 7424 > 700 by 6724")])
        for o in a["options"]:
            self.assertFalse(o["verdict"]["tight"])


class Margin(unittest.TestCase):
    def test_unset_is_five_percent_and_f_star_leaves_it(self):
        # Device 4400, margin unset: 0.05 * 4400 is 220 as a double, so the
        # budget is 4180. Two chunks offloaded need 4352 (within the memory,
        # not the margin); three need 7424 - 3 * 1536 = 2816: a budget
        # 2048 f > 512, so f* is the double after 0.25 (with no margin, the
        # double after 0.125: Fractions).
        a = by_rank(answer(request([1], 4400, margin=None)))
        partial = a[oracle.PARTIAL_OPTIMIZER]
        self.assertEqual(partial["gemini"]["offload_optim_frac"],
                         math.nextafter(0.25, 1.0))
        self.assertEqual(partial["device_need_bytes"], "2816")
        v = partial["verdict"]
        self.assertEqual((v["margin"], v["margin_bytes"], v["headroom_bytes"],
                          v["device_excess_bytes"], v["fits"], v["tight"]),
                         (0.05, "220", "1584", "0", True, False))
        self.assertEqual(a[oracle.NOTHING_MOVED]["why_not"],
                         "device: 7424 > 4180 by 3244 (device memory 4400 "
                         "less margin 220)")

    def test_tight_options_rank_after_those_that_fit(self):
        # Device 1300, margin 0.05: 65 bytes (0.05 * 1300 is 65 as a
        # double), a budget of 1235. Full offload and auto need 1280:
        # within the memory, not the margin: tight. No f < 1 passes (every
        # chunk offloaded is full offload's 1280); g*: 1280 - 256 k <= 1235
        # needs k = 1, keep = 2048 (1 - g) < 1024, the double after 0.5:
        # 1024, which fits with a headroom of 276.
        a = answer(request([1], 1300, margin=0.05))
        got = [(o["gemini"]["placement"], o["gemini"]["offload_optim_frac"],
                o["gemini"]["offload_param_frac"], o["device_need_bytes"],
                o["verdict"]["fits"], o["verdict"]["tight"],
                o["verdict"]["headroom_bytes"]) for o in a["options"]]
        g = math.nextafter(0.5, 1.0)
        self.assertEqual(got, [
            ("PLACEMENT_STATIC", 1.0, g, "1024", True, False, "276"),
            ("PLACEMENT_STATIC", 1.0, 0.0, "1280", False, True, "20"),
            ("PLACEMENT_AUTO", 0.0, 0.0, "1280", False, True, "20"),
            ("PLACEMENT_STATIC", 0.0, 0.0, "7424", False, False, "0")])
        self.assertEqual(a["options"][1]["why_not"],
                         "device: 1280 > 1235 by 45 (device memory 1300 "
                         "less margin 65)")
        self.assertFalse(a["options"][1]["fits"])

    def test_the_verdict_repeats_the_options_fields(self):
        for o in answer(request([1, 2], 700, host=3500, gpus=2,
                                margin=0.125))["options"]:
            v = o["verdict"]
            self.assertEqual((v["device_need_bytes"], v["host_bytes_per_node"],
                              v["fits"], v["why_not"]),
                             (o["device_need_bytes"], o["host_bytes_per_node"],
                              o["fits"], o["why_not"]))
            self.assertEqual((v["device_memory_bytes"], v["margin"],
                              v["margin_bytes"], v["host_memory_bytes"]),
                             ("700", 0.125, "88", "3500"))


class Workload(unittest.TestCase):
    LLAMA = {"model_type": "llama", "hidden_size": 8, "intermediate_size": 16,
             "num_hidden_layers": 2, "num_attention_heads": 2,
             "vocab_size": 16}

    def test_activation_counts_in_the_verdict(self):
        # L = 2, h = 8, a = 2 (d = 4), intermediate 16, v = 16, s = 4,
        # b = 1, SDPA, worked tensor by tensor (N = bsh = 32): a layer's
        # norms 2 x (4N + 4bs + 2N + 2N) = 544, SDPA q, k, v, out 4 x 64 +
        # logsumexp 32, the MLP 4 x 2bsI = 512: 1344, twice; input_ids 32,
        # cos and sin 64, the final norm 272; the loss 4bsv + 8(s + 1) + 4
        # = 300; the 16-bit logits 128: 3484 held. The largest transient:
        # the loss's two fp32 (b, s, v) gradients, 512, the second once the
        # targets and the weight (44) are released: 468.
        model = {"hf_config_json": json.dumps(self.LLAMA)}
        r = {"search": {"model": model, "search_range_m": 0,
                        "min_chunk_size_m": 0},
             "cluster": {"device_memory_bytes": 10**9, "gpus_per_node": 8,
                         "world_sizes": [1]},
             "workload": {"micro_batch": 1, "sequenceLength": 4}}
        a = answer(r)
        for o in a["options"]:
            self.assertEqual(o["activation_bytes"], "3484")
            self.assertEqual(o["transient_bytes"], "468")
            self.assertEqual(o["notes"][-1], oracle.ESTIMATE_NOTE)
            self.assertEqual(
                int(o["device_need_bytes"]),
                int(o["most_loaded_rank"]["device_bytes"]) +
                int(o["gathered_chunk_bytes"]) + 3484 + 468)
        # Without the workload the same request counts no activations, and
        # it answers as the numels of the model's description (interval 0
        # with a model means 1024) but for the gathered chunks' count: the
        # numels have no operations (one chunk); the model's hold two at
        # once. On one rank a chunk's shard is all of it, so the bytes are
        # the largest chunk's either way.
        del r["workload"]
        numels = dict(r, search={
            "numels": oracle.models.describe(self.LLAMA).numels,
            "search_range_m": 0, "min_chunk_size_m": 0,
            "search_interval": 1024})
        plain = answer(r)
        by_numels = answer(numels)
        self.assertEqual({o.pop("gathered_chunks") for o in plain["options"]},
                         {"2"})
        self.assertEqual(
            {o.pop("gathered_chunks") for o in by_numels["options"]}, {"1"})
        self.assertEqual(plain, by_numels)
        self.assertEqual({o["activation_bytes"] for o in plain["options"]},
                         {"0"})


class WholeNodes(unittest.TestCase):
    """An answer in nodes: each option's nodes are ceil(W / gpus_per_node),
    and whole_nodes asks for W = gpus_per_node x 1 .. max_nodes."""

    def whole(self, gpus, max_nodes, device):
        r = request([], device, gpus=gpus)
        r["cluster"].update(whole_nodes=True, max_nodes=max_nodes)
        return r

    def test_nodes_round_up(self):
        # 3 GPUs a node: W = 1, 3 -> one node; 4 -> two; 7 -> three.
        a = answer(request([7, 4, 3, 1], 10**9, gpus=3))
        got = {(o["world_size"], o["nodes"]) for o in a["options"]}
        self.assertEqual(got, {(1, 1), (3, 1), (4, 2), (7, 3)})

    def test_whole_nodes_are_the_listed_multiples(self):
        # 2 GPUs a node, up to 3 nodes: the plan of W = 2, 4, 6.
        listed = answer(request([6, 2, 4], 4400, gpus=2))
        whole = answer(self.whole(2, 3, 4400))
        self.assertEqual(whole, listed)
        self.assertEqual(sorted({o["world_size"] for o in whole["options"]}),
                         [2, 4, 6])

    def test_the_first_fit_is_the_fewest_nodes(self):
        # Class Order's case on one GPU a node, up to 4 nodes: W = 1 fits
        # with f* (4352 of 4400), so the first option is one node; every
        # option that fits after it is on as many nodes or more.
        a = answer(self.whole(1, 4, 4400))
        first = a["options"][0]
        self.assertEqual((first["world_size"], first["nodes"],
                          first["device_need_bytes"], first["fits"]),
                         (1, 1, "4352", True))
        fitting = [o["nodes"] for o in a["options"] if o["fits"]]
        self.assertEqual(fitting, sorted(fitting))
        self.assertEqual(sorted({o["nodes"] for o in a["options"]}),
                         [1, 2, 3, 4])

    def test_refusals(self):
        cases = [
            (self.whole(2, 3, 4400), {"world_sizes": [2]},
             "cluster.world_sizes:"),
            (self.whole(2, 3, 4400), {"max_nodes": 0}, "cluster.max_nodes:"),
            (self.whole(2, 3, 4400), {"max_nodes": 65}, "cluster.max_nodes:"),
            (self.whole(2, 3, 4400), {"gpus_per_node": 2**31, "max_nodes": 2},
             "cluster.max_nodes:"),
            (self.whole(2, 3, 4400), {"margin": 1.0}, "cluster.margin:"),
            (self.whole(2, 3, 4400), {"gpus_per_node": 0},
             "cluster.gpus_per_node:"),
            (request([1], 4400), {"max_nodes": 2}, "cluster.max_nodes:"),
        ]
        for r, fields, prefix in cases:
            r["cluster"].update(fields)
            error = oracle.plan(r).get("error", "")
            self.assertTrue(error.startswith(prefix), (fields, error))
        # Layout takes neither.
        for fields in ({"whole_nodes": True}, {"max_nodes": 2}):
            layout = {"search": {"numels": TINY, "dp_degrees": [1],
                                 "search_range_m": 0, "search_interval": 128,
                                 "min_chunk_size_m": 0},
                      "cluster": dict({"device_memory_bytes": 4400},
                                      **fields)}
            error = lo.layout(layout).get("error", "")
            self.assertTrue(error.startswith("cluster." + next(iter(fields))),
                            error)


class SequenceParallelism(unittest.TestCase):
    """GeminiPlugin gives ShardConfig no sequence_parallel_process_group
    and no mode (gemini_plugin.py:560-568; split_gather by shard_config.py):
    LLaMA's policy swaps in the attention forward that asserts a group
    (policies/llama.py: get_llama_flash_attention_forward(..., sp_group)),
    so a named tp degree is refused and a searched one skipped; GPT-2's
    forward gathers over the whole world, so its tp degrees run only where
    the world is the tp group (zero x extra_dp = 1)."""

    GPT2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2",
            "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 1000}
    LLAMA = {"model_type": "llama", "hidden_size": 64,
             "intermediate_size": 128, "num_hidden_layers": 2,
             "num_attention_heads": 4, "num_key_value_heads": 4,
             "vocab_size": 1000}

    def plan(self, config, worlds, **top):
        return oracle.plan(dict({
            "search": {"model": {"hf_config_json": json.dumps(config)},
                       "search_range_m": 0.001, "min_chunk_size_m": 0},
            "gemini": {"enable_sequence_parallelism": True},
            "cluster": {"device_memory_bytes": 2**30, "gpus_per_node": 8,
                        "world_sizes": worlds},
            "max_options": 200}, **top))

    def test_llama_named_is_refused_and_searched_is_skipped(self):
        error = self.plan(self.LLAMA, [2], tp_sizes=[2]).get("error", "")
        self.assertTrue(error.startswith(
            "search.model: gemini.enable_sequence_parallelism: "), error)
        self.assertIn("Must specify sp_size and sp_group for sequence "
                      "parallel", error)
        options = self.plan(self.LLAMA, [2, 4], search_tp=True)["options"]
        self.assertTrue(options)
        self.assertEqual({o["gemini"]["tp_size"] for o in options}, {0})

    def test_gpt2_runs_where_the_world_is_the_tp_group(self):
        options = self.plan(self.GPT2, [2, 4], tp_sizes=[2],
                            extra_dp_sizes=[1, 2])["options"]
        self.assertTrue(options)
        self.assertEqual({(o["world_size"], o["gemini"]["extra_dp_size"])
                          for o in options}, {(2, 0)})
        error = self.plan(self.GPT2, [4], tp_sizes=[2],
                          extra_dp_sizes=[1, 2]).get("error", "")
        self.assertTrue(error.startswith(
            "gemini.enable_sequence_parallelism: "), error)
        self.assertIn("label shape ... does not match logit shape", error)


class Errors(unittest.TestCase):
    def error(self, r):
        a = oracle.plan(r)
        self.assertIn("error", a, r)
        return a["error"]

    def test_each_checked_field(self):
        good = request([1, 2], 4400)
        llama = {"hf_config_json": json.dumps(Workload.LLAMA)}
        bert = {"hf_config_json": json.dumps({"model_type": "bert"})}

        def cluster(**fields):
            return dict(good, cluster=dict(good["cluster"], **fields))

        cases = [
            (cluster(device_memory_bytes=0), "cluster.device_memory_bytes:"),
            (cluster(gpus_per_node=0), "cluster.gpus_per_node:"),
            (cluster(world_sizes=[]), "cluster.world_sizes:"),
            (cluster(world_sizes=list(range(1, 66))),
             "cluster.world_sizes:"),
            (cluster(world_sizes=[4, 0]), "cluster.world_sizes[1]:"),
            (cluster(world_sizes=[4, 2, 4]), "cluster.world_sizes[2]:"),
            (cluster(margin=1.0), "cluster.margin:"),
            (cluster(margin=-0.01), "cluster.margin:"),
            (cluster(margin="NaN"), "cluster.margin:"),
            (cluster(world_sizes=[], margin=2), "cluster.world_sizes:"),
            (dict(good, workload={"micro_batch": 0, "sequence_length": 2}),
             "workload.micro_batch"),
            (dict(good, workload={"micro_batch": 1, "sequence_length": 0}),
             "workload.sequence_length"),
            (dict(good, workload={"micro_batch": 1, "sequence_length": 2}),
             "workload:"),
            (dict(good, search={"model": bert},
                  workload={"micro_batch": 1, "sequence_length": 2}),
             "workload:"),
            (dict(good, search={"model": llama, "numels": [1]}), "search:"),
            (dict(good, search={"model": {"hf_config_json": "{"}}),
             "search.model.hf_config_json:"),
            (dict(good, search={"model": {"hf_config_json": "{}"}}),
             "search.model:"),
            (dict(good, search=dict(good["search"], search_interval=0)),
             "search:"),
            (dict(good, frozen=[True]), "frozen:"),
            (dict(good, cluster=dict(good["cluster"], reserve_bytes=2**64 - 1)),
             "options (world size 1"),
        ]
        for r, prefix in cases:
            self.assertTrue(self.error(r).startswith(prefix),
                            (prefix, self.error(r)))

    def test_world_size_zero_names_the_index(self):
        self.assertEqual(
            self.error(request([4, 0], 1)),
            "cluster.world_sizes[1]: 0; a world size is at least 1")
        self.assertEqual(self.error(request([4, 2, 4], 1)),
                         "cluster.world_sizes[2]: 4 repeats "
                         "cluster.world_sizes[0]")


class Lines(unittest.TestCase):
    def test_one_answer_a_line(self):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "plan_oracle.py")
        requests = [request([1], 4400), request([1], 0), request([2], 4400)]
        out = subprocess.run(
            [sys.executable, script, "--lines"], check=True, text=True,
            input="".join(json.dumps(r) + "\n" for r in requests) + "{\n",
            capture_output=True).stdout.splitlines()
        self.assertEqual(len(out), 4)
        self.assertEqual(json.loads(out[0]), answer(requests[0]))
        self.assertIn("cluster.device_memory_bytes",
                      json.loads(out[1])["error"])
        self.assertEqual(json.loads(out[2]), answer(requests[2]))
        self.assertIn("error", json.loads(out[3]))


if __name__ == "__main__":
    unittest.main()
