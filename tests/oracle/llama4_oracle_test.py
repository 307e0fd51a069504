#!/usr/bin/python3
"""llama4_oracle's itemized list against what autograd saves in
gemma3_llama4_torch.Llama4ForCausalLM (CPU, bf16, eager), on random small
shapes with checkpointing on and off: equal to the byte once torch 1.13's
extra saves (saved_tensors.TORCH_1_13_ONLY: mean.dim's input) are taken
out."""

import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import gemma3_llama4_torch  # noqa: E402
import llama4_oracle  # noqa: E402
import saved_tensors  # noqa: E402

SHAPES = 200  # per checkpointing setting


def config(rng, checkpointing):
    """A random small Llama4TextConfig as gemma3_llama4_torch reads it."""
    kv = rng.choice([1, 2, 4])
    layers = rng.randint(1, 5)
    experts = rng.randint(1, 4)
    return {
        "family": "llama4_text", "layers": layers,
        "hidden": rng.choice([8, 12, 16]), "heads": kv * rng.choice([1, 2, 3]),
        "kv_heads": kv, "head_dim": rng.choice([2, 4, 8]),
        "vocab": rng.randint(5, 40), "intermediate": 1, "qkv_bias": False,
        "o_bias": False, "mlp_bias": False, "qk_norm": False, "norm": "rms",
        "act": "silu", "embed_scale": False,
        "attention_dropout": rng.choice([0.0, 0.0, 0.1]),
        "tied": rng.random() < 0.5, "checkpointing": checkpointing,
        "llama4": {"experts": experts, "top_k": rng.randint(1, experts),
                   "inter": rng.randint(1, 10), "inter_mlp": rng.randint(1, 12),
                   "moe_layers": [i for i in range(layers)
                                  if rng.random() < 0.5],
                   "use_qk_norm": rng.random() < 0.6,
                   "attn_temperature_tuning": rng.random() < 0.6,
                   "floor_scale": 8192, "attn_scale": 0.1}}


def measured(c, b, s, seed=0):
    """Bytes saved for backward under torch >= 2.2, and under 1.13."""
    torch.manual_seed(seed)
    model = gemma3_llama4_torch.build(c)
    model.train()
    ids = torch.randint(0, c["vocab"], (b, s))
    mask = torch.ones(b, s, dtype=torch.long)
    recorder = saved_tensors.SavedRecorder()
    with recorder.hooks():
        loss, _ = model(ids, mask, ids)
    modern, raw, _ = saved_tensors.saved_bytes(model, loss.grad_fn, recorder)
    return modern, raw


class SavesEqualAutograd(unittest.TestCase):

    def run_shapes(self, checkpointing, seed):
        rng = random.Random(seed)
        for k in range(SHAPES):
            c = config(rng, checkpointing)
            b, s = rng.randint(1, 3), rng.randint(1, 7)
            with self.subTest(shape=k, b=b, s=s, c=c):
                modern, _ = measured(c, b, s, seed=k)
                self.assertEqual(llama4_oracle.saved_bytes(c, b, s), modern)

    def test_without_checkpointing(self):
        self.run_shapes(False, 1)

    def test_with_checkpointing(self):
        self.run_shapes(True, 2)

    def test_routing_changes_no_save(self):
        """Every expert takes every token: two routers (seeds), one count."""
        c = config(random.Random(3), False)
        c["llama4"]["moe_layers"] = list(range(c["layers"]))
        self.assertEqual(measured(c, 2, 5, seed=0), measured(c, 2, 5, seed=1))

    def test_one_token_index_is_the_arange(self):
        """With b = s = 1 the gather index's reshape is a view of arange(1):
        8 bytes, not 8E."""
        c = config(random.Random(4), False)
        c["llama4"].update(experts=3, top_k=1, moe_layers=[0])
        c["layers"] = 1
        names = dict(llama4_oracle.tensors(c, 1, 1))
        self.assertEqual(
            names["layer 0: moe: gather / scatter_add_ index (E*T, 1) int64,"
                  " expanded"], 8)
        self.assertEqual(llama4_oracle.saved_bytes(c, 1, 1),
                         measured(c, 1, 1)[0])


if __name__ == "__main__":
    unittest.main()
