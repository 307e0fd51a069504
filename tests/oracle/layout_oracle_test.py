#!/usr/bin/python3
"""Tests of the layout oracle against cases worked by hand from issue 12.

Every expected figure below is worked from the issue's rules (the arithmetic
is in the comment next to it), never read back from the oracle.
Notation: [size,used] is one chunk; P the group's dp degree; "shards" the
sum of size/P over a rank's non-gathered chunks; "real" the real elements on
the rank (clamp(used - r*size/P, 0, size/P) summed over its shards).
Defaults: params 2*held, master 4*held, grads 0 (reused), Adam 2*4*real,
pinned (2+4)*shards.

Run: /usr/bin/python3 tests/oracle/layout_oracle_test.py
     (ctest: layout_oracle_test)
"""

import json
import math
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import chunk_search_oracle as search_oracle  # noqa: E402
import layout_oracle as oracle  # noqa: E402
from oracle_test import gpt2_numels  # noqa: E402

ORACLE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "layout_oracle.py")

# 2**-20: one element in the units of the _m fields (exact in binary).
ONE_ELEMENT_M = 1.0 / (1 << 20)


def config(degree, chunk_size, keep_gathered=False):
    return {"dp_degree": degree, "chunk_size": str(chunk_size),
            "keep_gathered": keep_gathered}


def chunk(size, used, first_param, num_params):
    return {"size": str(size), "used": str(used),
            "first_param": str(first_param), "num_params": str(num_params)}


def group(degree, chunk_size, keep_gathered, chunks, padding):
    return {"dp_degree": degree, "chunk_size": str(chunk_size),
            "keep_gathered": keep_gathered, "chunks": chunks,
            "padding": str(padding)}


def rank(params, master, grads, optimizer, frozen, device, pinned):
    """One rank's bytes; device is given (worked by hand), not summed here."""
    return {"param_bytes": str(params), "master_bytes": str(master),
            "grad_bytes": str(grads), "optimizer_bytes": str(optimizer),
            "frozen_bytes": str(frozen), "device_bytes": str(device),
            "pinned_host_bytes": str(pinned)}


def given(numels, degrees, configs, frozen=None, gemini=None):
    """A LayoutRequest with given configs; the search part is a valid
    ChunkSearchRequest (interval 1, range 0, default minimum)."""
    request = {"search": {"numels": numels, "dp_degrees": degrees,
                          "search_interval": 1},
               "configs": configs}
    if frozen is not None:
        request["frozen"] = frozen
    if gemini is not None:
        request["gemini"] = gemini
    return request


def run_cli(args, stdin):
    done = subprocess.run([sys.executable, ORACLE] + args, input=stdin,
                          capture_output=True, text=True, check=True)
    return done.stdout



def _static(rank):
    """A rank's bytes without issue 27's host fields, which static placement
    with nothing offloaded sets to (0, the pinned bytes)."""
    rank = dict(rank)
    assert rank.pop("offloaded_host_bytes") == "0", rank
    assert rank.pop("host_bytes") == rank["pinned_host_bytes"], rank
    return rank

class LayoutCase(unittest.TestCase):

    def layout(self, request):
        got = oracle.layout(request)
        self.assertNotIn("error", got)
        return got

    def assertLayout(self, got, groups, padding, most, least, gathered):
        self.assertEqual(got["groups"], groups)
        self.assertEqual(got["layout_padding"], str(padding))
        self.assertEqual(_static(got["most_loaded_rank"]), most)
        self.assertEqual(_static(got["least_loaded_rank"]), least)
        self.assertEqual(got["gathered_chunk_bytes"], str(gathered))

    def assertError(self, request, *names):
        got = oracle.layout(request)
        self.assertEqual(list(got), ["error"], got)
        for name in names:
            self.assertIn(name, got["error"])
        return got["error"]


class NextFitTest(LayoutCase):

    def test_closed_chunk_is_closed_for_good(self):
        # P=1, C=10, [6, 7, 4]: 6 opens [10,6]; 6+7=13>10 closes it, [10,7];
        # 7+4=11>10 closes that, [10,4]. The 4 would fit the first chunk
        # (6+4=10) but it is closed. Padding 4+3+6 = 13; the last chunk
        # stays at 10 (not shrunk to 4).
        # shards 10+10+10 = 30, real 6+7+4 = 17: params 2*30=60,
        # master 4*30=120, Adam 8*17=136, device 60+120+136=316,
        # pinned 6*30=180. P=1: least is rank 0 too. Gathered 2*10 = 20.
        got = self.layout(given([6, 7, 4], [1], [config(1, 10)]))
        expected = rank(60, 120, 0, 136, 0, 316, 180)
        self.assertLayout(
            got, [group(1, 10, False, [chunk(10, 6, 0, 1), chunk(10, 7, 1, 1),
                                       chunk(10, 4, 2, 1)], 13)],
            13, expected, expected, 20)
        self.assertNotIn("search", got)

    def test_first_tensor_of_zero_elements_opens_a_chunk(self):
        # P=1, C=4, [0]: the 0 opens [4,0], padding 4, not shrunk.
        # shards 4, real 0: params 8, master 16, Adam 0, device 24,
        # pinned 24, gathered 8.
        got = self.layout(given([0], [1], [config(1, 4)]))
        expected = rank(8, 16, 0, 0, 0, 24, 24)
        self.assertLayout(got, [group(1, 4, False, [chunk(4, 0, 0, 1)], 4)],
                          4, expected, expected, 8)
        # [0, 5]: the 0 opens [4,0]; 0+5>4 closes it, 5>4 opens [5,5]
        # (5 rounded up to P=1). Padding 4+0 = 4.
        # shards 4+5 = 9, real 0+5: params 18, master 36, Adam 40,
        # device 94, pinned 54, gathered 2*5 = 10.
        got = self.layout(given([0, 5], [1], [config(1, 4)]))
        expected = rank(18, 36, 0, 40, 0, 94, 54)
        self.assertLayout(
            got, [group(1, 4, False, [chunk(4, 0, 0, 1), chunk(5, 5, 1, 1)],
                        4)], 4, expected, expected, 10)

    def test_zero_elements_join_the_open_chunk(self):
        # P=1, C=4, [4, 0, 1]: 4 opens [4,4]; 4+0<=4 joins; 4+1>4 opens
        # [4,1]. Padding 0+3 = 3.
        got = self.layout(given([4, 0, 1], [1], [config(1, 4)]))
        self.assertEqual(got["groups"][0]["chunks"],
                         [chunk(4, 4, 0, 2), chunk(4, 1, 2, 1)])
        self.assertEqual(got["layout_padding"], "3")

    def test_oversize_rounds_to_the_degree_and_keeps_its_slack(self):
        # numels [7, 7, 1, 2, 3], degrees [2, 3, 2, 3, 2], C=6 for both
        # (lcm 6). Degree 2 ([7, 1, 3]): 7>6 opens [8,7] (7 up to a
        # multiple of 2, not of lcm 6, which would be 12); 7+1=8<=8 joins
        # its slack: [8,8]; 8+3>8 opens [6,3]. Padding 0+3 = 3.
        # Degree 3 ([7, 2]): 7>6 opens [9,7] (up to a multiple of 3);
        # 7+2=9 joins: [9,9]. Padding 0.
        # Shards: 8/2 + 6/2 + 9/3 = 4+3+3 = 10: params 20, master 40,
        # pinned 60. Rank 0: clamp(8,0,4)=4, clamp(3,0,3)=3, clamp(9,0,3)=3
        # -> 10, Adam 80, device 20+40+80 = 140. Rank P-1 (1 and 2):
        # clamp(8-4,0,4)=4, clamp(3-3,0,3)=0, clamp(9-6,0,3)=3 -> 7,
        # Adam 56, device 116. Largest non-gathered chunk 9: 18 bytes.
        got = self.layout(given([7, 7, 1, 2, 3], [2, 3, 2, 3, 2],
                                [config(2, 6), config(3, 6)]))
        self.assertLayout(
            got,
            [group(2, 6, False, [chunk(8, 8, 0, 2), chunk(6, 3, 4, 1)], 3),
             group(3, 6, False, [chunk(9, 9, 1, 2)], 0)],
            3, rank(20, 40, 0, 80, 0, 140, 60),
            rank(20, 40, 0, 56, 0, 116, 60), 18)

    def test_groups_follow_the_config_order(self):
        # The same request with the configs the other way round: the groups
        # come in the configs' order, the figures are unchanged.
        got = self.layout(given([7, 7, 1, 2, 3], [2, 3, 2, 3, 2],
                                [config(3, 6), config(2, 6)]))
        self.assertEqual([g["dp_degree"] for g in got["groups"]], [3, 2])
        self.assertEqual(got["groups"][0]["chunks"], [chunk(9, 9, 1, 2)])
        self.assertEqual(got["layout_padding"], "3")


class ShardTest(LayoutCase):

    def test_padding_sits_on_the_highest_ranks(self):
        # P=4, C=8, [3]: [8,3], shard 2. Rank 0: clamp(3,0,2)=2; rank 3:
        # clamp(3-6,0,2)=0. Shards 2: params 4, master 8, pinned 12.
        # Most: Adam 8*2=16, device 4+8+16 = 28; least: Adam 0, device 12.
        # Padding 5, gathered 2*8 = 16.
        got = self.layout(given([3], [4], [config(4, 8)]))
        self.assertLayout(got, [group(4, 8, False, [chunk(8, 3, 0, 1)], 5)],
                          5, rank(4, 8, 0, 16, 0, 28, 12),
                          rank(4, 8, 0, 0, 0, 12, 12), 16)

    def test_clamp_on_every_rank(self):
        # [8,3] over 4 ranks of 2: 2, 1 (3-2), 0 (3-4 < 0), 0.
        # [8,8]: 2 on each. [8,0]: 0 on each.
        for used, per_rank in ((3, [2, 1, 0, 0]), (8, [2, 2, 2, 2]),
                               (0, [0, 0, 0, 0])):
            c = oracle.Chunk(8, used, 0, 1)
            with self.subTest(used=used):
                self.assertEqual([oracle._real_on_rank(c, 4, r)
                                  for r in range(4)], per_rank)

    def test_three_coprime_degrees(self):
        # [100, 100, 100] at degrees 2, 3, 5, each C=120: [120,100] each,
        # padding 3*20 = 60. Shards 60+40+24 = 124: params 248,
        # master 496, pinned 744. Rank 0: 60+40+24 = 124, Adam 992,
        # device 248+496+992 = 1736. Rank P-1: clamp(100-60,0,60)=40,
        # clamp(100-80,0,40)=20, clamp(100-96,0,24)=4 -> 64, Adam 512,
        # device 1256. Gathered 2*120 = 240.
        got = self.layout(given([100, 100, 100], [2, 3, 5],
                                [config(d, 120) for d in (2, 3, 5)]))
        self.assertLayout(
            got, [group(d, 120, False, [chunk(120, 100, i, 1)], 20)
                  for i, d in enumerate((2, 3, 5))],
            60, rank(248, 496, 0, 992, 0, 1736, 744),
            rank(248, 496, 0, 512, 0, 1256, 744), 240)


class GatheredTest(LayoutCase):

    def test_kept_gathered_group(self):
        # P=4, C=5 (not a multiple of 4: allowed when gathered), [2, 2, 3, 7]:
        # [5,4] (2+2), 4+3>5 opens [5,3], 3+7>5 and 7>5 opens [8,7] (7 up to
        # a multiple of 4). Padding 1+2+1 = 4.
        # Whole on every rank: held 5+5+8 = 18, used 4+3+7 = 14:
        # params 36, master 72, Adam 8*14 = 112, device 220, pinned 0.
        # No non-gathered chunk: gathered 0.
        got = self.layout(given([2, 2, 3, 7], [4], [config(4, 5, True)]))
        expected = rank(36, 72, 0, 112, 0, 220, 0)
        self.assertLayout(
            got, [group(4, 5, True, [chunk(5, 4, 0, 2), chunk(5, 3, 2, 1),
                                     chunk(8, 7, 3, 1)], 4)],
            4, expected, expected, 0)

    def test_gathered_and_sharded_together(self):
        # Degree 1: [3] at C=4: [4,3], padding 1. Degree 2: [50] kept
        # gathered at C=100: [100,50], padding 50. Total padding 51.
        # held 4 + 100 = 104: params 208, master 416; Adam 8*(3+50) = 424;
        # device 208+416+424 = 1048; pinned only the shard: 6*4 = 24.
        # Rank P-1 holds the same (P=1, and gathered is whole).
        # Gathered bytes: the largest non-gathered chunk, 4: 8 (not 200).
        got = self.layout(given([3, 50], [1, 2],
                                [config(1, 4), config(2, 100, True)]))
        expected = rank(208, 416, 0, 424, 0, 1048, 24)
        self.assertLayout(
            got, [group(1, 4, False, [chunk(4, 3, 0, 1)], 1),
                  group(2, 100, True, [chunk(100, 50, 1, 1)], 50)],
            51, expected, expected, 8)


class FrozenTest(LayoutCase):

    def test_frozen_left_out_and_counted(self):
        # [4, 100, 4], the 100 frozen; P=1, C=8: 4 opens [8,4], the 100 is
        # skipped, 4+4=8 joins: one chunk [8,8] from param 0 with 2 params.
        # shards 8: params 16, master 32, Adam 64, frozen 2*100 = 200,
        # device 16+32+64+200 = 312, pinned 48. Gathered 16.
        got = self.layout(given([4, 100, 4], [1], [config(1, 8)],
                                frozen=[False, True, False]))
        expected = rank(16, 32, 0, 64, 200, 312, 48)
        self.assertLayout(got, [group(1, 8, False, [chunk(8, 8, 0, 2)], 0)],
                          0, expected, expected, 16)

    def test_frozen_counted_by_the_search(self):
        # Swept (minimum 0, no filter): start = max 100, one candidate,
        # C=100; total 4+100+4 = 108 counts the frozen 100; waste
        # (seed, over all three sizes) [4] then 4+100>100 -> [100] then
        # 100+4 > 100 -> [4]: 96 + 0 + 96 = 192.
        # Laid out: [100,8] (frozen skipped), padding 92.
        # params 200, master 400, Adam 64, frozen 200, device 864,
        # pinned 600, gathered 200.
        request = {"search": {"numels": [4, 100, 4], "search_interval": 1,
                              "min_chunk_size_m": 0,
                              "filter_exlarge_params": False},
                   "frozen": [False, True, False]}
        got = self.layout(request)
        self.assertEqual(got["search"]["configs"], [config(1, 100)])
        self.assertEqual(got["search"]["total_param_size"], "108")
        self.assertEqual(got["search"]["min_chunk_waste"], "192")
        expected = rank(200, 400, 0, 64, 200, 864, 600)
        self.assertLayout(
            got, [group(1, 100, False, [chunk(100, 8, 0, 2)], 92)],
            92, expected, expected, 200)

    def test_frozen_in_a_kept_gathered_total(self):
        # Default minimum 32 Mi: the group (total 108, frozen included) is
        # kept gathered at 108. Laid out: [108,8], padding 100.
        # held 108: params 216, master 432, Adam 8*8 = 64, frozen 200,
        # device 912, pinned 0, gathered 0.
        request = {"search": {"numels": [4, 100, 4], "search_interval": 1},
                   "frozen": [False, True, False]}
        got = self.layout(request)
        self.assertEqual(got["search"]["configs"], [config(1, 108, True)])
        expected = rank(216, 432, 0, 64, 200, 912, 0)
        self.assertLayout(
            got, [group(1, 108, True, [chunk(108, 8, 0, 2)], 100)],
            100, expected, expected, 0)

    def test_frozen_only_group_has_no_chunks(self):
        # Degree 2 holds only the frozen 6: it still needs a config, has
        # no chunk, and the 6 is 12 frozen bytes. Degree 1: [3] at C=4.
        # held 4: params 8, master 16, Adam 24, frozen 12, device 60,
        # pinned 24, gathered 8.
        got = self.layout(given([3, 6], [1, 2],
                                [config(1, 4), config(2, 4)],
                                frozen=[False, True]))
        expected = rank(8, 16, 0, 24, 12, 60, 24)
        self.assertLayout(
            got, [group(1, 4, False, [chunk(4, 3, 0, 1)], 1),
                  group(2, 4, False, [], 0)], 1, expected, expected, 8)


class SettingsTest(LayoutCase):
    """Every GeminiSettings switch on one layout.

    P=2, C=4, [3, 5, 3] with the 5 frozen: [4,3] and [4,3], shards 2+2 = 4,
    held 4; rank 0 real clamp(3,0,2)*2 = 4, rank 1 clamp(1,0,2)*2 = 2;
    frozen 2*5 = 10 whatever the settings. params 2*4 = 8 always.
    master 4*4 = 16 when on; grads 2*4 = 8 unless reused (master on and no
    accumulation); Adam 2*(4 or 2)*real; pinned (2 + 4 master + 2 grads)*4.
    """

    # (master, accumulation, pin, optimizer) -> (master, grads, Adam most,
    # Adam least, device most, device least, pinned)
    ROWS = [
        # defaults: 16, 0, 8*4=32, 8*2=16; 8+16+32+10=66, 8+16+16+10=50;
        # (2+4)*4 = 24.
        ((True, False, True, "OPTIMIZER_ADAM"), (16, 0, 32, 16, 66, 50, 24)),
        # master off: grads separate 8; Adam 2*2*4=16, 2*2*2=8;
        # 8+8+16+10=42, 8+8+8+10=34; (2+2)*4 = 16.
        ((False, False, True, "OPTIMIZER_ADAM"), (0, 8, 16, 8, 42, 34, 16)),
        # accumulation on: grads separate 8; 8+16+8+32+10=74, 58;
        # (2+4+2)*4 = 32.
        ((True, True, True, "OPTIMIZER_ADAM"), (16, 8, 32, 16, 74, 58, 32)),
        # pin off: as the defaults, pinned 0.
        ((True, False, False, "OPTIMIZER_ADAM"), (16, 0, 32, 16, 66, 50, 0)),
        # no optimizer: 8+16+10 = 34 on both; pinned 24.
        ((True, False, True, "OPTIMIZER_NONE"), (16, 0, 0, 0, 34, 34, 24)),
        # master off and accumulation on: as master off.
        ((False, True, True, "OPTIMIZER_ADAM"), (0, 8, 16, 8, 42, 34, 16)),
        # master off, no optimizer, pin off: 8+8+10 = 26; pinned 0.
        ((False, False, False, "OPTIMIZER_NONE"), (0, 8, 0, 0, 26, 26, 0)),
        # accumulation, no optimizer, pin off: 8+16+8+10 = 42; pinned 0.
        ((True, True, False, "OPTIMIZER_NONE"), (16, 8, 0, 0, 42, 42, 0)),
        # master off, accumulation, no optimizer: 26; (2+2)*4 = 16.
        ((False, True, True, "OPTIMIZER_NONE"), (0, 8, 0, 0, 26, 26, 16)),
    ]

    def test_every_switch(self):
        for (master, accumulation, pin, optimizer), row in self.ROWS:
            m, g, opt_most, opt_least, dev_most, dev_least, pinned = row
            for precision in ("PRECISION_FP16", "PRECISION_BF16"):
                gemini = {"precision": precision, "master_weights": master,
                          "gradient_accumulation": accumulation,
                          "pin_memory": pin, "optimizer": optimizer}
                with self.subTest(gemini=gemini):
                    got = self.layout(given([3, 5, 3], [2], [config(2, 4)],
                                            frozen=[False, True, False],
                                            gemini=gemini))
                    self.assertLayout(
                        got, [group(2, 4, False, [chunk(4, 3, 0, 1),
                                                  chunk(4, 3, 2, 1)], 2)],
                        2, rank(8, m, g, opt_most, 10, dev_most, pinned),
                        rank(8, m, g, opt_least, 10, dev_least, pinned), 8)

    def test_defaults_and_spellings(self):
        # No gemini field is the first row; lowerCamelCase names and enum
        # numbers (PRECISION_BF16 = 1, OPTIMIZER_NONE = 1) read the same.
        request = given([3, 5, 3], [2], [config(2, 4)],
                        frozen=[False, True, False])
        default = self.layout(request)
        self.assertEqual(_static(default["most_loaded_rank"]),
                         rank(8, 16, 0, 32, 10, 66, 24))
        spelled = self.layout(dict(request, gemini={
            "precision": 1, "masterWeights": True,
            "gradientAccumulation": False, "pinMemory": True,
            "optimizer": 1}))
        self.assertEqual(_static(spelled["most_loaded_rank"]),
                         rank(8, 16, 0, 0, 10, 34, 24))


class SearchedTest(LayoutCase):

    def test_filter_dropped_parameter_is_placed(self):
        # Nineteen 0s and one 10, minimum 4: the filter drops the 10 (limit
        # about 7.04), start 4, C=4, waste 0, total 10 (oracle_test's case).
        # Laid out: the first 0 opens [4,0], the other 0s join it; the 10
        # (dropped by the search, placed anyway) is oversize: [10,10].
        # Padding 4. shards 14: params 28, master 56, Adam 8*10 = 80,
        # device 164, pinned 84; gathered 2*10 = 20.
        request = {"search": {"numels": [0] * 19 + [10],
                              "search_interval": 1, "search_range_m": 0,
                              "min_chunk_size_m": 4 * ONE_ELEMENT_M}}
        got = self.layout(request)
        self.assertEqual(got["search"],
                         {"configs": [config(1, 4)],
                          "total_param_size": "10", "min_chunk_waste": "0"})
        expected = rank(28, 56, 0, 80, 0, 164, 84)
        self.assertLayout(
            got, [group(1, 4, False, [chunk(4, 0, 0, 19),
                                      chunk(10, 10, 19, 1)], 4)],
            4, expected, expected, 20)

    def test_gathered_group_first_as_the_search_gives(self):
        # oracle_test's case: configs [(2, 30, kept), (1, 120)], total 130,
        # waste 20. Degree 2 ([10, 20]) at 30: [30,30], padding 0.
        # Degree 1 ([100]) at 120: [120,100], padding 20.
        # held 30 + 120 = 150: params 300, master 600; Adam 8*(30+100) =
        # 1040; device 1940; pinned 6*120 = 720; gathered 240.
        request = {"search": {"numels": [100, 10, 20], "dp_degrees": [1, 2, 2],
                              "search_interval": 30, "search_range_m": 0,
                              "min_chunk_size_m": 50 * ONE_ELEMENT_M}}
        got = self.layout(request)
        self.assertEqual(got["search"],
                         {"configs": [config(2, 30, True), config(1, 120)],
                          "total_param_size": "130", "min_chunk_waste": "20"})
        expected = rank(300, 600, 0, 1040, 0, 1940, 720)
        self.assertLayout(
            got, [group(2, 30, True, [chunk(30, 30, 1, 2)], 0),
                  group(1, 120, False, [chunk(120, 100, 0, 1)], 20)],
            20, expected, expected, 240)

    def test_search_part_agrees_with_the_search_oracle(self):
        # The searched configs and figures are the search oracle's, and the
        # groups are laid out at exactly those configs.
        searches = [
            {"numels": [3, 5, 2], "search_interval": 1,
             "search_range_m": 2 * ONE_ELEMENT_M, "min_chunk_size_m": 0,
             "filter_exlarge_params": False},
            {"numels": [100, 100, 100], "dp_degrees": [2, 3, 5],
             "search_interval": 7, "search_range_m": 0,
             "min_chunk_size_m": 0, "filter_exlarge_params": False},
            {"numels": [1, 2], "dp_degrees": [1, 2], "search_interval": 1},
            {"numels": [3] * 20 + [1000], "dp_degrees": [1] * 20 + [2],
             "search_interval": 1, "search_range_m": 3 * ONE_ELEMENT_M,
             "min_chunk_size_m": 0},
        ]
        for search in searches:
            with self.subTest(search=search):
                got = self.layout({"search": search})
                want = search_oracle.search(search)
                self.assertEqual(got["search"], want)
                self.assertEqual(
                    [(g["dp_degree"], g["chunk_size"], g["keep_gathered"])
                     for g in got["groups"]],
                    [(c["dp_degree"], c["chunk_size"], c["keep_gathered"])
                     for c in want["configs"]])

    def test_searched_equals_given(self):
        # [3, 5, 2], best C=7 (oracle_test): laying out the search's answer
        # is laying out the same configs given. [7,3], 3+5>7 -> [7,7]:
        # padding 4+0 = 4.
        search = {"numels": [3, 5, 2], "search_interval": 1,
                  "search_range_m": 2 * ONE_ELEMENT_M, "min_chunk_size_m": 0,
                  "filter_exlarge_params": False}
        searched = self.layout({"search": search})
        laid = self.layout({"search": search, "configs": [config(1, 7)]})
        self.assertEqual(searched["groups"][0]["chunks"],
                         [chunk(7, 3, 0, 1), chunk(7, 7, 1, 2)])
        self.assertEqual({k: v for k, v in searched.items() if k != "search"},
                         laid)


class PublishedModelTest(LayoutCase):
    """ColossalAI's GPT-2 test model at dp 1, searched as ColossalAI's test
    does (range 1 Mi, interval 128, minimum 0, filter on): C = 527872."""

    def test_gpt2_dp1(self):
        numels = gpt2_numels()
        got = self.layout({"search": {
            "numels": numels, "dp_degrees": [1], "search_range_m": 1,
            "search_interval": 128, "min_chunk_size_m": 0,
            "filter_exlarge_params": True}})
        self.assertEqual(got["search"]["configs"], [config(1, 527872)])
        chunks = got["groups"][0]["chunks"]
        # Invariants: every non-frozen element placed once; the padding is
        # what the chunks leave.
        self.assertEqual(sum(int(c["used"]) for c in chunks), sum(numels))
        padding = sum(int(c["size"]) - int(c["used"]) for c in chunks)
        self.assertEqual(got["layout_padding"], str(padding))
        self.assertEqual(got["groups"][0]["padding"], str(padding))
        # By hand: wte 50258*128 = 6433024 > C opens [6433024,6433024];
        # then wpe 1024*128 = 131072, two layers of 2*128 + 49152 + 384 +
        # 16384 + 128 + 2*128 + 65536 + 512 + 65536 + 128 = 198272 each,
        # and ln_f 2*128: 131072 + 396544 + 256 = 527872, exactly C:
        # [527872,527872] with params 1..27. Padding 0.
        self.assertEqual(chunks, [chunk(6433024, 6433024, 0, 1),
                                  chunk(527872, 527872, 1, 27)])
        # held = used = 6433024 + 527872 = 6960896: params 13921792,
        # master 27843584, Adam 55687168, device 14*6960896 = 97452544,
        # pinned 6*6960896 = 41765376; gathered 2*6433024 = 12866048.
        expected = rank(13921792, 27843584, 0, 55687168, 0, 97452544,
                        41765376)
        self.assertEqual(_static(got["most_loaded_rank"]), expected)
        self.assertEqual(_static(got["least_loaded_rank"]), expected)
        self.assertEqual(got["gathered_chunk_bytes"], "12866048")


class ErrorTest(LayoutCase):

    def test_config_for_an_absent_degree(self):
        self.assertError(given([4], [1], [config(1, 4), config(2, 4)]),
                         "configs[1].dp_degree")

    def test_degree_without_a_config(self):
        self.assertError(given([4, 4], [1, 2], [config(1, 4)]),
                         "configs", "degree 2")

    def test_degree_with_two_configs(self):
        self.assertError(given([4], [1], [config(1, 4), config(1, 8)]),
                         "configs[1].dp_degree")

    def test_chunk_size_zero(self):
        self.assertError(given([4, 4], [1, 2], [config(1, 4), config(2, 0)]),
                         "configs[1].chunk_size")
        self.assertError(given([4], [1], [config(1, 0, True)]),
                         "configs[0].chunk_size")

    def test_sharded_chunk_size_not_a_multiple_of_the_degree(self):
        self.assertError(given([4], [2], [config(2, 5)]),
                         "configs[0].chunk_size")
        # Kept gathered, 5 at degree 2 is fine: [5,4], held 5, Adam 8*4.
        got = self.layout(given([4], [2], [config(2, 5, True)]))
        self.assertEqual(_static(got["most_loaded_rank"]),
                         rank(10, 20, 0, 32, 0, 62, 0))

    def test_frozen_of_the_wrong_length(self):
        self.assertError(given([4, 4], [1], [config(1, 4)], frozen=[True]),
                         "frozen")
        self.assertError(given([4], [1], [config(1, 4)],
                               frozen=[False, False]), "frozen")

    def test_search_part_still_validated(self):
        # Valid configs do not excuse an invalid ChunkSearchRequest.
        for search in ({"numels": [4], "search_interval": 0},
                       {"numels": [], "search_interval": 1},
                       {"numels": [4, 4], "dp_degrees": [1, 1, 1],
                        "search_interval": 1},
                       {"numels": [4], "search_interval": 1,
                        "search_range_m": -1}):
            with self.subTest(search=search):
                self.assertError({"search": search,
                                  "configs": [config(1, 4)]}, "search")

    def test_64_bit_overflow(self):
        # P=1, C=2**63, [2**62, 2**62, 2**62]: [2**63,2**63] (two fit
        # exactly), [2**63,2**62]. params 2*(2**63+2**63) = 2**65 > 2**64-1.
        big = 1 << 62
        self.assertError(given([str(big)] * 3, [1],
                               [config(1, 1 << 63)]), "param_bytes")

    def test_64_bit_overflow_of_the_sum_only(self):
        # P=1, C = n = X = 3*2**59: [X,X]. params 2X = 3*2**60, master
        # 4X = 3*2**61, Adam 8X = 3*2**62 (< 2**64 = 4*2**62), pinned 6X,
        # gathered 2X all fit; device 14X = 42*2**59 > 32*2**59 = 2**64.
        x = 3 << 59
        self.assertError(given([str(x)], [1], [config(1, x)]),
                         "device_bytes")
        # Without Adam: device 2X + 4X = 6X = 18*2**59 = 9*2**60 fits.
        got = self.layout(given([str(x)], [1], [config(1, x)],
                                gemini={"optimizer": "OPTIMIZER_NONE"}))
        self.assertEqual(_static(got["most_loaded_rank"]),
                         rank(3 << 60, 3 << 61, 0, 0, 0, 9 << 60, 9 << 60))


class CommandLineTest(unittest.TestCase):

    def test_jsonl_one_line_per_request(self):
        lines = [
            json.dumps(given([3], [4], [config(4, 8)])),
            "not json",
            json.dumps(given([4], [1], [config(1, 0)])),
            json.dumps(given([6, 7, 4], [1], [config(1, 10)])),
        ]
        out = run_cli(["--jsonl"], "\n".join(lines) + "\n").splitlines()
        self.assertEqual(len(out), 4)
        first = json.loads(out[0])
        # ShardTest's first case: [8,3] over 4 ranks.
        self.assertEqual(first["groups"],
                         [group(4, 8, False, [chunk(8, 3, 0, 1)], 5)])
        self.assertEqual(_static(first["least_loaded_rank"]),
                         rank(4, 8, 0, 0, 0, 12, 12))
        self.assertIn("error", json.loads(out[1]))
        self.assertIn("configs[0].chunk_size", json.loads(out[2])["error"])
        # NextFitTest's first case: padding 13.
        self.assertEqual(json.loads(out[3])["layout_padding"], "13")

    def test_single_request(self):
        got = json.loads(run_cli([], json.dumps(given([0], [1],
                                                      [config(1, 4)]))))
        self.assertEqual(got["groups"],
                         [group(1, 4, False, [chunk(4, 0, 0, 1)], 4)])


class PlacementTest(LayoutCase):
    """Issue 27's policies on cases worked by hand: degree 1, chunks of 400
    holding (100, 200), (300, 50) and (60, 70); 800 fp16 bytes each, the
    inflated total 3 x 2 x 800 = 4800."""

    def three(self, **gemini):
        return self.layout(given([100, 200, 300, 50, 60, 70], [],
                                 [config(1, 400)], gemini=gemini))

    def test_the_budget_counts_each_chunk_once_per_parameter(self):
        got = self.three(offload_optim_frac=0.3)   # 1440: two chunks of 800
        p = got["placement"]
        self.assertEqual((p["offloaded_chunks"], p["offloaded_chunks_max"]),
                         ("2", "2"))
        most = got["most_loaded_rank"]
        # Worst order: 300 and 130 real elements go, 350 keep Adam (8 B).
        self.assertEqual(most["optimizer_bytes"], str(8 * 350))
        self.assertEqual(most["master_bytes"], str(4 * 400))
        self.assertEqual(most["offloaded_host_bytes"], str(8 * 430))
        self.assertEqual(got["most_loaded_rank_least"]["optimizer_bytes"],
                         str(8 * 130))

    def test_an_exact_threshold_and_the_next_double(self):
        request = given([400, 400, 400], [], [config(1, 400)],
                        gemini={"offload_optim_frac": 1 / 3})
        self.assertEqual(
            oracle.layout(request)["placement"]["offloaded_chunks"], "1")
        request["gemini"]["offload_optim_frac"] = math.nextafter(1 / 3, 1)
        self.assertEqual(
            oracle.layout(request)["placement"]["offloaded_chunks"], "2")

    def test_mixed_sizes_give_both_counts(self):
        # C = 10 at degree 1: 25 and 25 get oversize chunks of their own
        # (50 bytes each), 5 a chunk of 10 (20 bytes); one parameter each:
        # total 120, 0.75 -> budget 90. Largest first: 50, 100 >= 90 -> 2;
        # smallest first: 20, 70, 120 -> 3.
        request = given([25, 25, 5], [], [config(1, 10)],
                        gemini={"offload_optim_frac": 0.75})
        p = oracle.layout(request)["placement"]
        self.assertEqual((p["offloaded_chunks"], p["offloaded_chunks_max"]),
                         ("2", "3"))

    def test_offload_param_frac_is_zeroed_with_a_note(self):
        p = self.three(offload_param_frac=0.5)["placement"]
        self.assertEqual(p["param_offloaded_chunks"], "0")
        self.assertIn("is ignored", p["notes"][0])
        got = self.three(offload_param_frac=0.75, offload_optim_frac=1.0)
        self.assertEqual(got["placement"]["param_offloaded_chunks"], "2")
        self.assertEqual(got["most_loaded_rank"]["param_bytes"], str(2 * 400))

    def test_auto_and_its_warm_up_share(self):
        got = self.layout(given([100, 200, 300, 50, 60, 70], [],
                                [config(1, 400)],
                                gemini={"placement": "PLACEMENT_AUTO",
                                        "device_memory_bytes": 10000}))
        self.assertEqual(got["most_loaded_rank"]["device_bytes"], "2400")
        self.assertIn("will be moved", got["placement"]["notes"][1])

    def test_refusals_name_the_field(self):
        for gemini, field in (
                ({"offload_optim_frac": "NaN"}, "gemini.offload_optim_frac"),
                ({"shard_param_frac": 1.5}, "gemini.shard_param_frac"),
                ({"placement": 1, "offload_param_frac": 0.5},
                 "gemini.offload_param_frac"),
                ({"device_memory_bytes": 5}, "gemini.device_memory_bytes")):
            got = oracle.layout(given([1], [], [config(1, 1)], gemini=gemini))
            self.assertTrue(got["error"].startswith(field), got)


class PlacedPeakTest(unittest.TestCase):
    """The peak objective under a partial optimizer offload, each candidate
    laid out and placed; worked by hand in tests/planner/placed_peak_test.cc
    (four tensors of 8 at dp 2, C = 8, 16, 24, 32)."""

    def frontier(self, frac, objective):
        return oracle.frontier({
            "search": {"numels": [8, 8, 8, 8], "dp_degrees": [2],
                       "search_range_m": 24 / 2**20, "search_interval": 8,
                       "min_chunk_size_m": 0},
            "gemini": {"offload_optim_frac": frac},
            "objective": objective})

    def rows(self, answer):
        self.assertNotIn("error", answer)
        return [(p["candidate"], p["value"], p["peak_rank_bytes"])
                for p in answer["points"]]

    def test_partial_offload_scores_each_candidate_placed(self):
        # Peaks 192, 160, 240 (the worst order offloads the chunk with 8
        # real elements), 96.
        self.assertEqual(
            self.rows(self.frontier(0.25, "OBJECTIVE_PEAK_RANK_BYTES")),
            [("0", "192", "192"), ("1", "160", "160"), ("3", "96", "96")])
        self.assertEqual(
            self.rows(self.frontier(0.5, "OBJECTIVE_PEAK_RANK_BYTES")),
            [("0", "144", "144"), ("1", "64", "64")])

    def test_other_objectives_points_carry_the_placed_peak(self):
        self.assertEqual(
            self.rows(self.frontier(0.25, "OBJECTIVE_LAYOUT_PADDING")),
            [("0", "0", "192")])


if __name__ == "__main__":
    unittest.main()
