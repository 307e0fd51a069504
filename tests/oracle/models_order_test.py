#!/usr/bin/python3
"""The model-family oracle's names and numels, in order, for tiny configs of
the families added for issue 26, each list written out here from the
modules' __init__ (registration order) and the layer shapes.

Tiny shape: hidden 4, 2 heads, 1 key/value head, head_dim 2 (3 for Gemma),
intermediate 3, vocabulary 5.

Run: /usr/bin/python3 tests/oracle/models_order_test.py
     (ctest: models_order_test)
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models  # noqa: E402

TINY = {"hidden_size": 4, "num_attention_heads": 2, "num_key_value_heads": 1,
        "intermediate_size": 3, "vocab_size": 5, "num_hidden_layers": 1}


def listed(config, architecture=None):
    d = models.describe(config, architecture)
    return list(zip(d.names, d.numels))


def layer(i, params):
    return [("model.layers.%d.%s" % (i, name), numel)
            for name, numel in params]


# q_proj 4x4 and bias 4, k_proj and v_proj 4x2 and bias 2, o_proj 4x4.
QWEN_ATTENTION = [
    ("self_attn.q_proj.weight", 16), ("self_attn.q_proj.bias", 4),
    ("self_attn.k_proj.weight", 8), ("self_attn.k_proj.bias", 2),
    ("self_attn.v_proj.weight", 8), ("self_attn.v_proj.bias", 2),
    ("self_attn.o_proj.weight", 16)]
MLP = [("mlp.gate_proj.weight", 12), ("mlp.up_proj.weight", 12),
       ("mlp.down_proj.weight", 12)]
NORMS = [("input_layernorm.weight", 4),
         ("post_attention_layernorm.weight", 4)]


class OrderTest(unittest.TestCase):
    def test_qwen2(self):
        expected = ([("model.embed_tokens.weight", 20)]
                    + layer(0, QWEN_ATTENTION + MLP + NORMS)
                    + [("model.norm.weight", 4), ("lm_head.weight", 20)])
        self.assertEqual(listed(dict(TINY, model_type="qwen2")), expected)
        # Tied (Qwen2.5 0.5B-3B): lm_head is embed_tokens, listed once.
        self.assertEqual(listed(dict(TINY, model_type="qwen2",
                                     tie_word_embeddings=True)),
                         expected[:-1])
        self.assertEqual(listed(dict(TINY, model_type="qwen2"),
                                "Qwen2Model")[0], ("embed_tokens.weight", 20))

    def test_phi3(self):
        # o_proj (4x4) is defined before qkv_proj (4 x (2 + 2*1)*2);
        # gate_up_proj 4 x 2*3, down_proj 3x4.
        expected = ([("model.embed_tokens.weight", 20)]
                    + layer(0, [("self_attn.o_proj.weight", 16),
                                ("self_attn.qkv_proj.weight", 32),
                                ("mlp.gate_up_proj.weight", 24),
                                ("mlp.down_proj.weight", 12)] + NORMS)
                    + [("model.norm.weight", 4), ("lm_head.weight", 20)])
        self.assertEqual(listed(dict(TINY, model_type="phi3")), expected)

    def test_gemma_and_gemma2(self):
        # head_dim 3 apart from the width: q_proj 4x6, k_proj and v_proj
        # 4x3, o_proj 6x4; tied by default, so no lm_head.
        attention = [("self_attn.q_proj.weight", 24),
                     ("self_attn.k_proj.weight", 12),
                     ("self_attn.v_proj.weight", 12),
                     ("self_attn.o_proj.weight", 24)]
        gemma = dict(TINY, model_type="gemma", head_dim=3)
        self.assertEqual(listed(gemma), (
            [("model.embed_tokens.weight", 20)]
            + layer(0, attention + MLP + NORMS)
            + [("model.norm.weight", 4)]))
        gemma2 = dict(gemma, model_type="gemma2")
        self.assertEqual(listed(gemma2), (
            [("model.embed_tokens.weight", 20)]
            + layer(0, attention + MLP + NORMS
                    + [("pre_feedforward_layernorm.weight", 4),
                       ("post_feedforward_layernorm.weight", 4)])
            + [("model.norm.weight", 4)]))
        self.assertEqual(
            listed(dict(gemma2, tie_word_embeddings=False))[-1],
            ("lm_head.weight", 20))

    def test_gpt_neox(self):
        prefix = "gpt_neox.layers.0."
        expected = [("gpt_neox.embed_in.weight", 20)] + [
            (prefix + name, numel) for name, numel in [
                ("input_layernorm.weight", 4), ("input_layernorm.bias", 4),
                ("post_attention_layernorm.weight", 4),
                ("post_attention_layernorm.bias", 4),
                ("attention.query_key_value.weight", 48),
                ("attention.query_key_value.bias", 12),
                ("attention.dense.weight", 16), ("attention.dense.bias", 4),
                ("mlp.dense_h_to_4h.weight", 12),
                ("mlp.dense_h_to_4h.bias", 3),
                ("mlp.dense_4h_to_h.weight", 12),
                ("mlp.dense_4h_to_h.bias", 4)]] + [
            ("gpt_neox.final_layer_norm.weight", 4),
            ("gpt_neox.final_layer_norm.bias", 4),
            ("embed_out.weight", 20)]
        config = dict(TINY, model_type="gpt_neox")
        del config["num_key_value_heads"]
        self.assertEqual(listed(config), expected)
        # attention_bias false drops the attention's two biases.
        no_bias = listed(dict(config, attention_bias=False))
        self.assertEqual(no_bias, [p for p in expected if not p[0].startswith(
            (prefix + "attention.query_key_value.bias",
             prefix + "attention.dense.bias"))])

    def test_qwen2_moe(self):
        config = dict(TINY, model_type="qwen2_moe", num_hidden_layers=2,
                      num_experts=2, moe_intermediate_size=2,
                      shared_expert_intermediate_size=5,
                      decoder_sparse_step=2)
        # Layer 0: (0 + 1) % 2 != 0, a dense MLP of intermediate_size.
        # Layer 1: sparse: gate 4x2, two experts of 4x2, 4x2, 2x4, the
        # shared expert 4x5, 4x5, 5x4, shared_expert_gate 4x1.
        sparse = [("mlp.gate.weight", 8)]
        for e in range(2):
            sparse += [("mlp.experts.%d.gate_proj.weight" % e, 8),
                       ("mlp.experts.%d.up_proj.weight" % e, 8),
                       ("mlp.experts.%d.down_proj.weight" % e, 8)]
        sparse += [("mlp.shared_expert.gate_proj.weight", 20),
                   ("mlp.shared_expert.up_proj.weight", 20),
                   ("mlp.shared_expert.down_proj.weight", 20),
                   ("mlp.shared_expert_gate.weight", 4)]
        expected = ([("model.embed_tokens.weight", 20)]
                    + layer(0, QWEN_ATTENTION + MLP + NORMS)
                    + layer(1, QWEN_ATTENTION + sparse + NORMS)
                    + [("model.norm.weight", 4), ("lm_head.weight", 20)])
        self.assertEqual(listed(config), expected)
        # mlp_only_layers makes layer 1 dense too; no experts, likewise.
        dense = ([("model.embed_tokens.weight", 20)]
                 + layer(0, QWEN_ATTENTION + MLP + NORMS)
                 + layer(1, QWEN_ATTENTION + MLP + NORMS)
                 + [("model.norm.weight", 4), ("lm_head.weight", 20)])
        self.assertEqual(listed(dict(config, mlp_only_layers=[1])), dense)
        self.assertEqual(listed(dict(config, num_experts=0,
                                     decoder_sparse_step=0)), dense)

    def test_llama3_tied(self):
        # LLaMA-3.2 1B/3B: lm_head tied, listed once; head_dim explicit.
        d = models.describe(os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "models", "data",
            "llama-3.2-1b.json"))
        self.assertEqual(d.names[-1], "model.norm.weight")
        self.assertEqual(d.numels[0], 128256 * 2048)
        # q_proj 2048 x 32*64, k_proj 2048 x 8*64.
        self.assertEqual(d.numels[1:3], [2048 * 2048, 2048 * 512])


class RefusalTest(unittest.TestCase):
    def test_refused(self):
        cases = [
            (dict(TINY, model_type="qwen2_moe", mlp_only_layers="1"),
             "mlp_only_layers"),
            (dict(TINY, model_type="qwen2_moe", num_experts=-1),
             "num_experts"),
            (dict(TINY, model_type="qwen2_moe", decoder_sparse_step=0),
             "decoder_sparse_step"),
            (dict(TINY, model_type="gemma", head_dim=None), "head_dim"),
            (dict(TINY, model_type="phi3", num_attention_heads=3),
             "divisible"),
            (dict(TINY, model_type="gpt_neox", num_attention_heads=3),
             "divisible"),
            (dict(TINY, model_type="qwen2", num_key_value_heads=3),
             "num_key_value_heads"),
        ]
        for config, words in cases:
            with self.subTest(config=config):
                with self.assertRaisesRegex(ValueError, words):
                    models.describe(config)


if __name__ == "__main__":
    unittest.main()
