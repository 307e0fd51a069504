#!/usr/bin/python3
"""The activation oracle against the paper's own totals and hand-worked
figures (Korthikanti et al. 2022, arXiv 2205.05198, Sec. 4.1 and Table 2).

Run: /usr/bin/python3 tests/oracle/activation_oracle_test.py
     (ctest: activation_oracle_test)
"""

import json
import os
import random
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import activation_oracle as oracle  # noqa: E402

LLAMA2_7B = {"num_layers": 32, "hidden_size": 4096,
             "num_attention_heads": 32, "vocab_size": 32000}


def workload(b, s, checkpointing=False, flash=False):
    return {"micro_batch": b, "sequence_length": s,
            "activation_checkpointing": checkpointing,
            "flash_attention": flash}


class PaperTotals(unittest.TestCase):
    def test_block_subtotals(self):
        # Sec. 4.1: attention 11sbh + 5as^2b, MLP 19sbh, norms 4sbh.
        s, b, h, a = 3, 5, 7, 11
        terms = oracle.layer_terms(s, b, h, a)
        total = sum(n for _, n, _ in terms)
        scores = sum(n for _, n, score in terms if score)
        self.assertEqual(scores, 5 * a * s * s * b)
        self.assertEqual(total - scores, (11 + 19 + 4) * s * b * h)

    def test_table2_rows_on_random_shapes(self):
        rng = random.Random(2205_05198)
        for _ in range(200):
            s, b = rng.randint(1, 1 << 16), rng.randint(1, 64)
            a = rng.randint(1, 128)
            h = a * rng.randint(1, 256)
            # sbh(34 + 5as/h), exact because h | 5as*h.
            self.assertEqual(oracle.per_layer(s, b, h, a, False, False),
                             s * b * h * (34 * h + 5 * a * s) // h)
            self.assertEqual(oracle.per_layer(s, b, h, a, False, True),
                             34 * s * b * h)
            self.assertEqual(oracle.per_layer(s, b, h, a, True, False),
                             2 * s * b * h)


class HandWorked(unittest.TestCase):
    def test_llama2_7b_s4096_b1(self):
        # sbh = 4096 * 1 * 4096 = 16_777_216; 4sbv = 4 * 4096 * 32000.
        outside = 5 * 16_777_216 + 524_288_000
        cases = [
            # 34sbh + 5as^2b = 570_425_344 + 5*32*4096^2 = 3_254_779_904
            (workload(1, 4096), 3_254_779_904,
             32 * 3_254_779_904 + outside),
            (workload(1, 4096, flash=True), 570_425_344,
             32 * 570_425_344 + outside),
            (workload(1, 4096, checkpointing=True), 33_554_432,
             32 * 33_554_432 + outside),
        ]
        for w, one, total in cases:
            parts = oracle.estimate(LLAMA2_7B, w)
            self.assertEqual(parts["per_layer_bytes"], one)
            self.assertEqual(parts["total_bytes"], total)
        self.assertEqual(oracle.estimate(LLAMA2_7B, cases[0][0])[
            "total_bytes"], 104_761_131_008)


class Lines(unittest.TestCase):
    def run_lines(self, requests):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "activation_oracle.py")
        out = subprocess.run(
            [sys.executable, script, "--jsonl"], check=True, text=True,
            input="".join(json.dumps(r) + "\n" for r in requests),
            capture_output=True).stdout
        return [json.loads(line) for line in out.splitlines()]

    def test_answers_and_refusals(self):
        huge = dict(LLAMA2_7B, num_layers=2**40)
        answers = self.run_lines([
            {"shape": LLAMA2_7B, "workload": workload(1, 4096)},
            {"shape": LLAMA2_7B, "workload": workload(0, 4096)},
            {"shape": dict(LLAMA2_7B, vocab_size="0"),
             "workload": workload(1, 1)},
            {"shape": huge, "workload": workload(1, 4096)},
        ])
        self.assertEqual(answers[0]["total_bytes"], "104761131008")
        self.assertEqual(answers[1],
                         {"error": "workload.micro_batch must be at least 1"})
        self.assertEqual(answers[2],
                         {"error": "shape.vocab_size must be at least 1"})
        self.assertEqual(
            answers[3],
            {"error": "activations.layers_bytes exceeds 2^64-1 bytes"})


if __name__ == "__main__":
    unittest.main()
