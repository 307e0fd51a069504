#!/usr/bin/python3
"""The activation oracle against hand-worked figures and against torch:
the itemized list equals what autograd saves on one small model of each
family (Debian's torch 1.13, its extra saves taken out by name), torch
1.13's extra saves are exactly the listed ones, the norms' backward
constants are what torch.profiler measures, and the peak is within 5%.

Run: /usr/bin/python3 tests/oracle/activation_oracle_test.py
     (ctest: activation_oracle_test)
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import activation_oracle as oracle  # noqa: E402

TINY_LLAMA = {"num_layers": 2, "hidden_size": 8, "num_attention_heads": 2,
              "vocab_size": 16, "intermediate_size": 16}

GPT2 = {"norm": "layer_norm", "gated_mlp": False, "activation": "gelu_new",
        "rotary": False, "fp32_softmax": False, "scale_by_tensor": True,
        "tied_embeddings": True, "fused_qkv": True}


def request(shape, b, s, checkpointing=False, attention="default",
            family=None, **traits):
    shape = dict(shape, **traits)
    r = {"shape": shape,
         "workload": {"micro_batch": b, "sequence_length": s,
                      "activation_checkpointing": checkpointing,
                      "attention": attention}}
    if family:
        r.update(family=family, measure=True)
    return json.dumps(r)


def answer(line):
    return {k: (v if k in ("error", "code") else int(v))
            for k, v in json.loads(oracle.answer(line)).items()}


class HandWorked(unittest.TestCase):
    def test_tiny_llama_under_sdpa(self):
        # N = bsh = 32: a layer's norms 2 x (4N + 4bs + 2N + 2N) = 544,
        # SDPA q, k, v, out 4 x 2bsad + logsumexp 4bsa = 288, MLP 4 x 2bsI
        # = 512; input_ids 32, cos and sin 4sd = 64, final norm 272; the
        # loss 4bsv + 8(s + 1) + 4 = 300; the 16-bit logits 2bsv = 128.
        # The loss's two fp32 gradients 8bsv, the second once the targets
        # 8(s + 1) and the weight 4 are released.
        a = answer(request(TINY_LLAMA, 1, 4))
        self.assertEqual(a["per_layer_bytes"], 1344)
        self.assertEqual(a["outside_layers_bytes"], 368)
        self.assertEqual(a["loss_bytes"], 300)
        self.assertEqual(a["total_bytes"], 2688 + 368 + 300 + 128)
        self.assertEqual(a["transient_bytes"], 8 * 4 * 16 - 8 * 5 - 4)

    def test_eager_adds_the_scores_flash_keeps_kv_narrow(self):
        sdpa = answer(request(TINY_LLAMA, 1, 4))["per_layer_bytes"]
        eager = answer(request(TINY_LLAMA, 1, 4, attention="eager"))
        # Eager: fp32 softmax 4P + its 16-bit copy 2P (P = bas^2 = 32) in
        # place of the logsumexp (32).
        self.assertEqual(eager["per_layer_bytes"], sdpa - 32 + 6 * 32)
        gqa = dict(TINY_LLAMA, num_attention_heads=4, num_key_value_heads=1)
        fa2 = answer(request(gqa, 1, 4, attention="flash_attention_2"))
        sd = answer(request(gqa, 1, 4, attention="sdpa"))
        # k and v at one head (2bsd = 16 each) and rng_state 16, against
        # SDPA's repeated k and v (64 each).
        self.assertEqual(sd["per_layer_bytes"] - fa2["per_layer_bytes"],
                         2 * (64 - 16) - 16)

    def test_checkpointing_keeps_inputs_and_reruns_a_layer(self):
        full = answer(request(TINY_LLAMA, 1, 4))
        ckpt = answer(request(TINY_LLAMA, 1, 4, checkpointing=True))
        self.assertEqual(ckpt["per_layer_bytes"], 2 * 1 * 4 * 8)
        self.assertEqual(ckpt["recompute_bytes"], full["per_layer_bytes"])

    def test_phi3_v_keeps_the_fused_output_and_rope_is_partial(self):
        # Phi-3, b = 1, no repeat (kv = a = 2, d = 4, s = 4): v is a view
        # of qkv_proj's output, whose whole storage 2s(a + 2kv)d = 192 PV
        # keeps, against LLaMA's v (2sad = 64); cos and sin two wide:
        # 4s x 2 = 32 against 4sd = 64.
        phi3 = dict(TINY_LLAMA, fused_qkv=True, fused_gate_up=True,
                    rotary_dim=2)
        p = answer(request(phi3, 1, 4, attention="eager"))
        ll = answer(request(TINY_LLAMA, 1, 4, attention="eager"))
        self.assertEqual(p["per_layer_bytes"] - ll["per_layer_bytes"], 128)
        self.assertEqual(p["outside_layers_bytes"] -
                         ll["outside_layers_bytes"], -32)
        # At b = 2 the reshape copies: v as LLaMA's.
        p2 = answer(request(phi3, 2, 4, attention="eager"))
        ll2 = answer(request(TINY_LLAMA, 2, 4, attention="eager"))
        self.assertEqual(p2["per_layer_bytes"], ll2["per_layer_bytes"])
        # flash_attention_2 keeps v at its heads: the fused storage again.
        f = answer(request(phi3, 1, 4, attention="flash_attention_2"))
        fl = answer(request(TINY_LLAMA, 1, 4, attention="flash_attention_2"))
        self.assertEqual(f["per_layer_bytes"] - fl["per_layer_bytes"], 128)

    def test_refusals(self):
        self.assertEqual(
            answer(request(TINY_LLAMA, 0, 4))["error"],
            "workload.micro_batch must be at least 1")
        no = answer(request(TINY_LLAMA, 1, 4, not_estimated="X: why"))
        self.assertEqual(no["code"], "UNIMPLEMENTED")
        self.assertEqual(no["error"],
                         "activations: not estimated for this family: X: why")
        self.assertEqual(
            answer(request(dict(TINY_LLAMA, vocab_size=2**62), 1, 4))["error"],
            "activations.loss_bytes exceeds 2^64-1 bytes")


# What the LayerNorm families share (MHA, h = a x d, a non-gated MLP).
LAYER_NORM = {"norm": "layer_norm", "gated_mlp": False,
              "num_key_value_heads": 0, "head_dim": 0}


# Falcon's traits every layout shares (falcon_traits.cc), BLOOM's.
FALCON = {"fused_qkv": True, "direct_sdpa": True, "fp32_softmax": False}
BLOOM = {"fused_qkv": True, "rotary": False, "alibi": True,
         "embedding_norm": True, "activation": "bloom_gelu", "no_sdpa": True,
         "no_flash": True, "num_key_value_heads": 0, "head_dim": 0}


class FalconAndBloomWorked(unittest.TestCase):
    """Falcon's and BLOOM's attention terms, worked by hand."""

    def test_bloom_views_keep_the_fused_output_once(self):
        # b = 1: q, k and v stay views of the fused output, 2 x 1 x 3 x
        # (3 x 8) = 144 bytes kept once; at b = 2 three copies 3 x 2 x 2 x
        # 3 x 8 = 288. Layer at b = 1, s = 3, h = 8, a = 2, I = 32, P = 18:
        # norm 48 + 24 and its output 48, fused 144, softmax 72 + its 16-bit
        # copy 36, o_proj input 48, second norm 48 + 24 and its output 48,
        # GeLU's input 192, its output 192: 924.
        shape = dict(BLOOM, norm="layer_norm", gated_mlp=False, num_layers=1,
                     hidden_size=8, num_attention_heads=2,
                     intermediate_size=32, vocab_size=16)
        one = answer(request(shape, 1, 3, False, "eager"))
        self.assertEqual(one["per_layer_bytes"], 924)
        two = answer(request(shape, 2, 3, False, "eager"))
        # every term doubles but q, k, v: 2 x (924 - 144) + 288
        self.assertEqual(two["per_layer_bytes"], 2 * (924 - 144) + 288)

    def test_bloom_refuses_sdpa_and_flash_attention(self):
        shape = dict(BLOOM, norm="layer_norm", gated_mlp=False, num_layers=1,
                     hidden_size=8, num_attention_heads=2,
                     intermediate_size=32, vocab_size=16)
        for attention in ("sdpa", "flash_attention_2"):
            a = answer(request(shape, 1, 3, False, attention))
            self.assertEqual(a["code"], "INVALID_ARGUMENT")
            self.assertIn(attention.upper(), a["error"])

    def test_falcon_multi_query_sdpa_saves_what_eager_does(self):
        # One K/V head for four query heads: sdpa's math path, the same
        # layer saves as eager (no mask argument: none without
        # checkpointing).
        shape = dict(LAYER_NORM, **FALCON, num_layers=1, hidden_size=16,
                     num_attention_heads=4, num_key_value_heads=1,
                     indexed_kv=True, single_norm=True, intermediate_size=32,
                     vocab_size=16)
        eager = answer(request(shape, 2, 3, False, "eager"))
        sdpa = answer(request(shape, 2, 3, False, "sdpa"))
        self.assertEqual(eager["per_layer_bytes"], sdpa["per_layer_bytes"])


class Measured(unittest.TestCase):
    """One small model of each family, run in torch."""

    SHAPE = {"num_layers": 2, "hidden_size": 24, "num_attention_heads": 4,
             "num_key_value_heads": 2, "head_dim": 6,
             "intermediate_size": 40, "vocab_size": 96}
    FAMILIES = {"llama": {}, "mistral": {}, "qwen2": {},
                "qwen3": {"qk_norm": True},
                "gemma": {"norm": "gemma_rms", "embed_scale": True,
                          "tied_embeddings": True},
                "phi3": {"fused_qkv": True, "fused_gate_up": True,
                         "rotary_dim": 4, "attention_dropout": True,
                         "hidden_dropout": True},
                "cohere": {"norm": "cohere_layer_norm", "parallel_block": True,
                           "tied_embeddings": True, "qk_norm": True},
                "gemma2": {"norm": "gemma_rms", "embed_scale": True,
                           "tied_embeddings": True, "four_norms": True,
                           "attn_softcap": True, "final_softcap": True},
                "gemma3_text": {"norm": "gemma_rms", "tied_embeddings": True,
                                "four_norms": True, "qk_norm": True,
                                "local_rotary": True,
                                "both_rotary_used": True,
                                "final_softcap": True},
                "gpt2": dict(GPT2, num_key_value_heads=0, head_dim=0,
                             attention_dropout=True, hidden_dropout=True,
                             embedding_dropout=True),
                # the LayerNorm families (layer_norm_torch.py)
                "gpt_neox": dict(LAYER_NORM, fused_qkv=True, value_view=True,
                                 rotary_dim=2, parallel_residual=True,
                                 activation="gelu_fast", hidden_dropout=True,
                                 embedding_dropout=True),
                "opt": dict(LAYER_NORM, rotary=False, activation="relu",
                            mask_positions=True, hidden_dropout=True,
                            embed_proj_dim=12),
                "gptj": dict(LAYER_NORM, single_norm=True, gptj_rotary=True,
                             fp32_logits=True, head_bias=True, no_sdpa=True,
                             rotary_dim=4,
                             activation="gelu_new", attention_dropout=True),
                # Falcon's new architecture (falcon_bloom_torch.py): two
                # K/V heads broadcast to four, ln_attn and ln_mlp
                "falcon": dict(LAYER_NORM, **FALCON, num_key_value_heads=2,
                               kv_broadcast=True, indexed_kv=True,
                               parallel_residual=True, hidden_dropout=True,
                               one_residual_mask=True),
                "bloom": dict(LAYER_NORM, **BLOOM, intermediate_size=96,
                              attention_dropout=True, hidden_dropout=True)}

    def test_falcon_layouts(self):
        # Multi-query with one norm (Falcon-7B), and three full projections
        # in a sequential layer with both residual masks (Falcon-RW's
        # layout, rotary): saves exact, peak within 5%.
        for traits in (dict(FALCON, num_key_value_heads=1, indexed_kv=True,
                            single_norm=True),
                       dict(FALCON, num_key_value_heads=4, value_view=True,
                            hidden_dropout=True, activation="relu")):
            for checkpointing in (False, True):
                with self.subTest(traits=traits, checkpointing=checkpointing):
                    self.assert_measured(answer(request(
                        self.SHAPE, 2, 7, checkpointing, "eager", "falcon",
                        **dict(LAYER_NORM, **traits))))

    def assert_measured(self, a):
        """Saves equal to autograd's, the peak within 5%."""
        self.assertEqual(a["measured_saved_bytes"], a["saved_bytes"])
        ratio = ((a["total_bytes"] + a["transient_bytes"]) /
                 a["measured_peak_bytes"])
        self.assertGreater(ratio, 0.95)
        self.assertLess(ratio, 1.05)

    def test_saved_bytes_and_peak(self):
        for family, traits in self.FAMILIES.items():
            for checkpointing in (False, True):
                with self.subTest(family=family, checkpointing=checkpointing):
                    self.assert_measured(answer(request(
                        self.SHAPE, 2, 7, checkpointing, "eager", family,
                        **traits)))

    def test_torch_1_13_extra_saves_are_the_listed_ones(self):
        # 1.13's mean.dim keeps its input (x32^2, 4 bytes an element) in
        # each RMS norm: 2 per layer and the final one over (b s, h), and
        # Qwen3's q_norm and k_norm over (b s a, d) and (b s kv, d).
        b, s, h, a, kv, d = 2, 7, 24, 4, 2, 6
        plain = answer(request(self.SHAPE, b, s, False, "eager", "llama"))
        self.assertEqual(plain["measured_saved_bytes_torch_1_13"] -
                         plain["measured_saved_bytes"], 5 * 4 * b * s * h)
        q3 = answer(request(self.SHAPE, b, s, False, "eager", "qwen3",
                            qk_norm=True))
        self.assertEqual(q3["measured_saved_bytes_torch_1_13"] -
                         q3["measured_saved_bytes"],
                         5 * 4 * b * s * h + 2 * 4 * b * s * (a + kv) * d)
        # LayerNorm keeps no mean.dim; its CPU mean and rstd are bf16
        # (counted at CUDA's fp32): no extra bytes from 1.13.
        g = answer(request(dict(self.SHAPE, num_key_value_heads=0,
                                head_dim=0), b, s, False, "eager", "gpt2",
                           **GPT2))
        self.assertEqual(g["measured_saved_bytes_torch_1_13"] +
                         5 * 2 * 2 * b * s, g["measured_saved_bytes"])


class NormBackward(unittest.TestCase):
    """NORM_BACKWARD: each norm's backward above its saves and its output
    gradient, per element, re-measured."""

    def test_constants_are_measured(self):
        import torch
        import torch.profiler
        from torch import nn

        import decoder_torch
        decoder_torch.TORCH_2_MEAN = True
        try:
            for kind, make in (
                    ("rms", decoder_torch.LlamaRMSNorm),
                    ("gemma_rms", decoder_torch.GemmaRMSNorm),
                    ("layer_norm", lambda h: nn.LayerNorm(
                        h, dtype=decoder_torch.DTYPE))):
                rows, h = 64, 256
                norm = make(h)
                x = torch.randn(rows, h, dtype=decoder_torch.DTYPE,
                                requires_grad=True)
                g = torch.randn(rows, h, dtype=decoder_torch.DTYPE)
                with torch.profiler.profile(
                        activities=[torch.profiler.ProfilerActivity.CPU],
                        profile_memory=True) as prof:
                    y = norm(x)
                    with torch.profiler.record_function("backward"):
                        y.backward(g)
                events, mark = [], None
                for e in prof.profiler.kineto_results.events():
                    if e.name() == "[memory]":
                        events.append((e.start_us(), e.nbytes()))
                    elif e.name() == "backward" and mark is None:
                        mark = e.start_us()
                events.sort(key=lambda t: t[0])
                total, start, peak = 0, None, 0
                for t, n in events:
                    if t >= mark and start is None:
                        start = total
                    total += n
                    if t >= mark:
                        peak = max(peak, total)
                extra = (peak - start) / (rows * h)
                with self.subTest(kind=kind, extra=extra):
                    # (the weight's gradient and the per-row terms: a
                    # few hundredths an element)
                    self.assertLessEqual(extra,
                                         oracle.NORM_BACKWARD[kind] + 0.1)
                    self.assertGreater(extra, oracle.NORM_BACKWARD[kind] - 1)
        finally:
            decoder_torch.TORCH_2_MEAN = False


if __name__ == "__main__":
    unittest.main()
