#!/usr/bin/env python3
"""The C++ description under tensor parallelism (server/models with a
tp_size, through chunkplan-describe-tool) against the independent oracle
(tests/oracle/tp_oracle.py over tests/oracle/models): tp rank 0's names and
numels in order, the padded vocabulary, the policy applied, and the same
refusals (ColossalAI's words in the C++ message), on every served family x
tp in {1, 2, 4, 8} x enable_sequence_parallelism (what fails on every mesh:
the mesh's own rule is the plan tests') x the published configs and fresh
random configs (a new
seed each run, printed; CHUNKPLAN_SEED=N repeats a run). Random configs are
also tried scaled by 8 in their widths and heads, so that most shard.

    tp_differential_test.py PATH/TO/chunkplan-describe-tool
"""

import json
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "oracle"))
from models import FAMILIES, PUBLISHED, describe, random_config  # noqa: E402
from tp_oracle import TpRefused, shard  # noqa: E402

TOOL = None  # set from argv in main
TP_SIZES = (1, 2, 4, 8)
RANDOM_CONFIGS_PER_FAMILY = 12
MAX_REPORTED = 5
# Widths and head counts: scaled together, every ratio transformers checks
# holds and tp divides more of them.
SCALED_KEYS = ("hidden_size", "n_embd", "num_attention_heads", "n_head",
               "num_key_value_heads", "num_kv_heads", "intermediate_size",
               "ffn_dim", "n_inner", "ffn_hidden_size", "word_embed_proj_dim",
               "moe_intermediate_size")


def scaled(config, factor):
    return {k: (v * factor if k in SCALED_KEYS and isinstance(v, int)
                and not isinstance(v, bool) else v)
            for k, v in config.items()}


def run_tool(requests):
    lines = "".join(json.dumps({"config": c, "architecture": a or "",
                                "tp_size": tp, "sequence_parallelism": sp})
                    + "\n" for c, a, tp, sp in requests)
    done = subprocess.run([TOOL, "--batch", "--max_params=100000000"],
                          input=lines, capture_output=True, text=True,
                          check=True, timeout=300)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(requests), done.stderr
    return answers


def expected(config, architecture, tp, sp=False):
    """The oracle's answer: a dict, ("refused", words) or None where the
    whole model is refused already (not this test's business)."""
    try:
        whole = describe(config, architecture)
    except ValueError:
        return None
    try:
        s = shard(whole, config, tp, sp)
    except TpRefused as refused:
        return ("refused", str(refused))
    return {"names": s.names, "numels": s.numels, "tp_policy": s.policy,
            "padded_vocab_size": s.padded_vocab_size,
            "sp_ignored": "sequence parallelism ignored by the policy"
                          in s.notes}


def difference(want, got):
    if want is None:
        return None
    if isinstance(want, tuple):
        if "error" not in got:
            return f"oracle refuses ({want[1]}), C++ answers"
        if got["error"]["code"] != "INVALID_ARGUMENT" or \
                want[1] not in got["error"]["message"]:
            return f"oracle refuses ({want[1]}), C++ {got['error']}"
        return None
    if "error" in got:
        return f"oracle answers, C++ {got['error']}"
    for key in ("tp_policy", "padded_vocab_size"):
        if want[key] != got[key]:
            return f"{key}: oracle {want[key]!r}, C++ {got[key]!r}"
    # The policy's warning where it turns sequence parallelism off
    # (opt.py, falcon.py, gptj.py, mistral.py: "... will ignore the
    # sequence parallelism flag.").
    warned = any("will ignore the sequence parallelism flag" in note
                 for note in got.get("tp_notes", []))
    if want["sp_ignored"] != warned:
        return (f"sequence parallelism ignored: oracle {want['sp_ignored']}, "
                f"C++ notes {got.get('tp_notes')}")
    for i, (w, g) in enumerate(zip(zip(want["names"], want["numels"]),
                                   zip(got["names"], got["numels"]))):
        if w != g:
            return f"parameter {i}: oracle {w}, C++ {g}"
    if len(want["names"]) != len(got["names"]):
        return "parameter counts differ"
    if got["total"] != sum(got["numels"]):
        return "C++ total is not the sum of its numels"
    return None


class TpDifferentialTest(unittest.TestCase):

    def compare(self, cases):
        answers = run_tool(cases)
        mismatches = []
        outcomes = {"sharded": 0, "refused": 0, "sp_refused": 0}
        for (config, arch, tp, sp), got in zip(cases, answers):
            want = expected(config, arch, tp, sp)
            if isinstance(want, dict) and tp > 1 and want["tp_policy"]:
                outcomes["sharded"] += 1
            elif isinstance(want, tuple):
                outcomes["refused"] += 1
                outcomes["sp_refused"] += "sp_size and sp_group" in want[1]
            problem = difference(want, got)
            if problem:
                mismatches.append(f"tp {tp} sp {sp} {arch or 'default'}: "
                                  f"{problem}"
                                  f"\n  config: {json.dumps(config)}")
        self.assertEqual(mismatches[:MAX_REPORTED], [],
                         f"{len(mismatches)} of {len(cases)} differ")
        return outcomes

    def test_published_configs(self):
        cases = []
        for _, path, architecture, _, _ in PUBLISHED:
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
            cases += [(config, architecture, tp, sp) for tp in TP_SIZES
                      for sp in (False, True)]
        outcomes = self.compare(cases)
        self.assertGreater(outcomes["sharded"], 10, outcomes)
        self.assertGreater(outcomes["refused"], 0, outcomes)
        # LLaMA's, Qwen2's and Qwen3's attention forward under GeminiPlugin
        self.assertGreater(outcomes["sp_refused"], 0, outcomes)

    def test_random_configs_of_every_family(self):
        seed = int(os.environ.get("CHUNKPLAN_SEED",
                                  random.SystemRandom().randrange(2**32)))
        print(f"tp_differential_test: seed {seed} "
              f"(CHUNKPLAN_SEED={seed} repeats it)", flush=True)
        rng = random.Random(seed)
        totals = {"sharded": 0, "refused": 0, "sp_refused": 0}
        for family in FAMILIES:
            with self.subTest(family=family, seed=seed):
                cases = []
                for _ in range(RANDOM_CONFIGS_PER_FAMILY):
                    config = random_config(family, rng)
                    sp = rng.random() < 0.25
                    for c in (config, scaled(config, 8)):
                        cases += [(c, None, tp, sp) for tp in TP_SIZES]
                for key, count in self.compare(cases).items():
                    totals[key] += count
        print(f"tp_differential_test: random configs {totals}", flush=True)
        # Both outcomes are compared, sharding most.
        self.assertGreater(totals["sharded"], totals["refused"] // 4, totals)
        self.assertGreater(totals["refused"], 0, totals)

    def test_llama2_70b_at_tp2(self):
        """The issue's figure: LLaMA-2 70B, tp_size 2: every rank keeps
        half of each split layer; vocab 32000 is a multiple of 128."""
        config = {"model_type": "llama", "hidden_size": 8192,
                  "intermediate_size": 28672, "num_attention_heads": 64,
                  "num_key_value_heads": 8, "num_hidden_layers": 80,
                  "vocab_size": 32000}
        got = run_tool([(config, None, 2, False), (config, None, 8, False)])
        want = expected(config, None, 2)
        self.assertIsNone(difference(want, got[0]))
        self.assertEqual(got[0]["padded_vocab_size"], 32000)
        self.assertEqual(got[1]["padded_vocab_size"], 32256)  # 63 * 512

    def test_untied_opt_350m_at_tp2(self):
        """OPT's postprocess (ColossalAI policies/opt.py:433-444) binds
        lm_head.weight to embed_tokens.weight under tp whatever the config
        says: facebook/opt-350m's config untied (tie_word_embeddings false;
        the published file leaves it at OPTConfig's true) lists
        lm_head.weight at tp 1 and not at tp 2, where its numels equal the
        oracle's and embed_tokens keeps half of the vocabulary padded to a
        multiple of 128: 50304 / 2 rows of word_embed_proj_dim 512."""
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                            "oracle", "models", "data", "opt-350m.json")
        with open(path, encoding="utf-8") as f:
            config = dict(json.load(f), tie_word_embeddings=False)
        got = run_tool([(config, None, 1, False), (config, None, 2, False)])
        self.assertIn("lm_head.weight", got[0]["names"])
        self.assertNotIn("lm_head.weight", got[1]["names"])
        self.assertEqual(len(got[1]["names"]), len(got[0]["names"]) - 1)
        self.assertIsNone(difference(expected(config, None, 2), got[1]))
        self.assertEqual(
            got[1]["numels"][got[1]["names"].index(
                "model.decoder.embed_tokens.weight")], 50304 // 2 * 512)
        self.assertEqual(got[1]["padded_vocab_size"], 50304)


def main():
    global TOOL
    TOOL = sys.argv.pop(1)
    unittest.main()


if __name__ == "__main__":
    main()
