#!/usr/bin/python3
"""The LoRA oracle (tests/oracle/models/lora.py) against PEFT's own
published print_trainable_parameters() figures: trainable and all
parameters of three models (models.lora.PEFT_PUBLISHED, each cited), the
base's total against its published figure where models.PUBLISHED has one,
and PEFT's order and names on a small model worked by hand.

    /usr/bin/python3 tests/oracle/lora_oracle_test.py -v
"""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import models  # noqa: E402
from models.lora import PEFT_PUBLISHED, adapt, trainable_mask  # noqa: E402

DATA = os.path.join(HERE, "models", "data")


class PublishedTest(unittest.TestCase):

    def test_peft_published_counts(self):
        for config, rank, targets, trainable, total, citation in \
                PEFT_PUBLISHED:
            with self.subTest(config=config, citation=citation):
                adapted = adapt(models.describe(os.path.join(DATA, config)),
                                rank, targets)
                self.assertEqual(adapted.trainable_total, trainable)
                self.assertEqual(adapted.total, total)

    def test_llama_3_2_1b_base_is_the_published_model(self):
        published = {os.path.basename(p[1]): p[3] for p in models.PUBLISHED}
        d = models.describe(os.path.join(DATA, "llama-3.2-1b.json"))
        self.assertEqual(d.total, published["llama-3.2-1b.json"])


class OrderTest(unittest.TestCase):
    """A two-layer LLaMA worked by hand: each adapted module's weight
    becomes base_layer.weight, then lora_A (r x in) and lora_B (out x r)
    follow it, in its place."""
    CONFIG = {"model_type": "llama", "hidden_size": 8,
              "intermediate_size": 16, "num_hidden_layers": 2,
              "num_attention_heads": 2, "num_key_value_heads": 1,
              "vocab_size": 10}

    def test_layer_zero(self):
        a = adapt(models.describe(self.CONFIG), 2, ["v_proj", "down_proj"])
        layer = [(n, x, t) for n, x, t in zip(a.names, a.numels, a.trainable)
                 if n.startswith("model.layers.0.")]
        p = "model.layers.0."
        self.assertEqual(layer, [
            (p + "self_attn.q_proj.weight", 64, False),
            (p + "self_attn.k_proj.weight", 32, False),
            (p + "self_attn.v_proj.base_layer.weight", 32, False),
            (p + "self_attn.v_proj.lora_A.default.weight", 2 * 8, True),
            (p + "self_attn.v_proj.lora_B.default.weight", 4 * 2, True),
            (p + "self_attn.o_proj.weight", 64, False),
            (p + "mlp.gate_proj.weight", 128, False),
            (p + "mlp.up_proj.weight", 128, False),
            (p + "mlp.down_proj.base_layer.weight", 128, False),
            (p + "mlp.down_proj.lora_A.default.weight", 2 * 16, True),
            (p + "mlp.down_proj.lora_B.default.weight", 8 * 2, True),
            (p + "input_layernorm.weight", 8, False),
            (p + "post_attention_layernorm.weight", 8, False)])

    def test_a_target_that_matches_nothing(self):
        with self.assertRaisesRegex(ValueError, "'qproj'"):
            adapt(models.describe(self.CONFIG), 2, ["q_proj", "qproj"])

    def test_trainable_mask(self):
        names = ["a.weight", "b.weight", "lm_head.weight"]
        self.assertEqual(trainable_mask(names, [True] * 3, freeze="^a"),
                         [False, True, True])
        self.assertEqual(trainable_mask(names, [False] * 3, train="head"),
                         [False, False, True])
        with self.assertRaisesRegex(ValueError, "freeze"):
            trainable_mask(names, [True] * 3, freeze="nothing")


if __name__ == "__main__":
    unittest.main()
