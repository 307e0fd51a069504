#!/usr/bin/python3
"""The model-family oracle (tests/oracle/models) on fresh random small
configs, against parameter counts written out here layer by layer.

For each family the test writes the arithmetic of one layer (its numel and
its number of tensors) and of the parts around the layers; the oracle's
parameters, grouped by layer through their names, must match it. Tying:
an untied head adds exactly one tensor at the end; a tied one is listed
once, under its first name.

Run: /usr/bin/python3 tests/oracle/models_random_test.py
     (ctest: models_random_test; CHUNKPLAN_TEST_SEED=N repeats a run)
"""

import os
import random
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models  # noqa: E402

CONFIGS_PER_FAMILY = 40
_LAYER = re.compile(r"(?:^|\.)(?:h|layer|layers)\.(\d+)\.")


def seed():
    value = os.environ.get("CHUNKPLAN_TEST_SEED")
    return int(value) if value else random.SystemRandom().randrange(2**32)


def value(c, key, default):
    """c[key], or `default` where the config leaves it out or sets null."""
    return default if c.get(key) is None else c[key]


def flag(c, key, default):
    return c[key] if key in c else default


def arch(c, family):
    return (c.get("architectures") or [models.MODEL_TYPES[family][0]])[0]


def head(c, width, untied_default=False):
    """The lm_head's numel where the class has an untied one, else 0."""
    tied = flag(c, "tie_word_embeddings", not untied_default)
    causal = arch(c, c["model_type"]).endswith(("ForCausalLM", "LMHeadModel"))
    return c["vocab_size"] * width if causal and not tied else 0


def attention(c, h, kv_default, qkv_bias=False, o_bias=False):
    """(numel, tensors) of q, k, v, o with heads H, kv heads KV, head_dim
    hd: q h*H*hd, k and v h*KV*hd each, o H*hd*h, and the biases."""
    heads = c["num_attention_heads"]
    kv = value(c, "num_key_value_heads", kv_default or heads)
    hd = value(c, "head_dim", h // heads)
    numel = h * heads * hd + 2 * h * kv * hd + heads * hd * h
    numel += (heads * hd + 2 * kv * hd) * qkv_bias + h * o_bias
    return numel, 4 + 3 * qkv_bias + o_bias


# Each expectation: (numel outside the layers, [(numel, tensors) of layer
# i for each i]).

def expect_gpt2(c):
    d, vocab = c["n_embd"], c["vocab_size"]
    inner = value(c, "n_inner", 4 * d)
    # ln_1 2d, c_attn d*3d + 3d, c_proj d*d + d, ln_2 2d, c_fc d*inner +
    # inner, c_proj inner*d + d: 12 tensors.
    layer = (2 * d + d * 3 * d + 3 * d + d * d + d + 2 * d + d * inner
             + inner + inner * d + d, 12)
    outside = vocab * d + c["n_positions"] * d + 2 * d + head(c, d)
    return outside, [layer] * c["n_layer"]


def expect_bert(c):
    h, inter, vocab = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    # query, key, value, output.dense 4*(h*h + h), LayerNorm 2h,
    # intermediate h*inter + inter, output inter*h + h, LayerNorm 2h.
    layer = (4 * (h * h + h) + 2 * h + h * inter + inter + inter * h + h
             + 2 * h, 16)
    outside = (vocab + c["max_position_embeddings"] + c["type_vocab_size"]) \
        * h + 2 * h
    if arch(c, "bert") == "BertModel":
        outside += h * h + h                     # pooler.dense
    else:
        # predictions.bias, transform.dense, transform.LayerNorm, and the
        # decoder's weight where it is not tied to the word embeddings.
        outside += vocab + h * h + h + 2 * h
        outside += 0 if flag(c, "tie_word_embeddings", True) else vocab * h
    return outside, [layer] * c["num_hidden_layers"]


def expect_opt(c):
    h, ffn, vocab = c["hidden_size"], c["ffn_dim"], c["vocab_size"]
    proj = value(c, "word_embed_proj_dim", h)
    b = flag(c, "enable_bias", True)
    norm = 2 * h if flag(c, "layer_norm_elementwise_affine", True) else 0
    norms = 2 if norm else 0
    # k, v, q, out_proj 4*(h*h + b*h), fc1 h*ffn + b*ffn, fc2 ffn*h + b*h,
    # two LayerNorms.
    layer = (4 * (h * h + b * h) + h * ffn + b * ffn + ffn * h + b * h
             + 2 * norm, 4 * (1 + b) + 2 * (1 + b) + 2 * norms)
    outside = vocab * proj + (c["max_position_embeddings"] + 2) * h
    outside += 2 * h * proj if proj != h else 0  # project_out, project_in
    if flag(c, "do_layer_norm_before", True) and not flag(
            c, "_remove_final_layer_norm", False):
        outside += norm
    return outside + head(c, proj), [layer] * c["num_hidden_layers"]


def decoder(c, layer, kv_default=None, untied_default=True, norms=2):
    """embed_tokens, layers, norm, lm_head; layer: (numel, tensors) of the
    attention and MLP of layer i; norms: RMS norms per layer."""
    h = c["hidden_size"]
    layers = [(numel + norms * h, tensors + norms)
              for numel, tensors in (layer(i) for i in
                                     range(c["num_hidden_layers"]))]
    outside = c["vocab_size"] * h + h + head(c, h, untied_default)
    return outside, layers


def gated(h, inter, bias=False):
    """gate_proj, up_proj h*inter each, down_proj inter*h (+ biases)."""
    return 3 * h * inter + (2 * inter + h) * bias, 3 + 3 * bias


def plus(*parts):
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def expect_llama(c):
    h, inter = c["hidden_size"], c["intermediate_size"]
    ab, mb = flag(c, "attention_bias", False), flag(c, "mlp_bias", False)
    layer = plus(attention(c, h, None, ab, ab), gated(h, inter, mb))
    return decoder(c, lambda i: layer)


def expect_mistral(c):
    h, inter = c["hidden_size"], c["intermediate_size"]
    return decoder(c, lambda i: plus(attention(c, h, 8), gated(h, inter)))


def expect_mixtral(c):
    h, inter = c["hidden_size"], c["intermediate_size"]
    experts = value(c, "num_local_experts", 8)
    # gate h*E, then each expert's w1, w2, w3: 3*h*inter.
    moe = (h * experts + experts * 3 * h * inter, 1 + 3 * experts)
    return decoder(c, lambda i: plus(attention(c, h, 8), moe))


def expect_qwen2(c):
    h, inter = c["hidden_size"], c["intermediate_size"]
    kv_default = c["num_attention_heads"] if "num_key_value_heads" in c \
        else 32
    return decoder(c, lambda i: plus(attention(c, h, kv_default, True),
                                     gated(h, inter)))


def expect_gemma(c, norms=2):
    h, inter = c["hidden_size"], c["intermediate_size"]
    b = flag(c, "attention_bias", False)
    return decoder(c, lambda i: plus(attention(c, h, None, b, b),
                                     gated(h, inter)),
                   untied_default=False, norms=norms)


def expect_phi3(c):
    h, inter = c["hidden_size"], c["intermediate_size"]
    heads = c["num_attention_heads"]
    kv = value(c, "num_key_value_heads", heads)
    hd = value(c, "head_dim", h // heads)
    # o_proj heads*hd*h, qkv_proj h*(heads + 2kv)*hd, gate_up_proj
    # h*2*inter, down_proj inter*h.
    layer = (heads * hd * h + h * (heads + 2 * kv) * hd + h * 2 * inter
             + inter * h, 4)
    return decoder(c, lambda i: layer)


def expect_gpt_neox(c):
    h, inter, vocab = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    b = flag(c, "attention_bias", True)
    # two LayerNorms 4h, query_key_value h*3h + b*3h, dense h*h + b*h,
    # dense_h_to_4h h*inter + inter, dense_4h_to_h inter*h + h.
    layer = (4 * h + h * 3 * h + b * 3 * h + h * h + b * h + h * inter
             + inter + inter * h + h, 4 + 2 + 2 * b + 4)
    outside = vocab * h + 2 * h + head(c, h, untied_default=True)
    return outside, [layer] * c["num_hidden_layers"]


def expect_qwen2_moe(c):
    h = c["hidden_size"]
    experts = c["num_experts"]
    dense_only = value(c, "mlp_only_layers", [])
    qkv_bias = flag(c, "qkv_bias", True)

    def layer(i):
        attn = attention(c, h, 16, qkv_bias)
        if i in dense_only or experts == 0 or (i + 1) % c[
                "decoder_sparse_step"]:
            return plus(attn, gated(h, c["intermediate_size"]))
        # gate h*E, E experts of 3*h*moe, shared_expert 3*h*shared,
        # shared_expert_gate h*1.
        moe = (h * experts + experts * 3 * h * c["moe_intermediate_size"]
               + 3 * h * c["shared_expert_intermediate_size"] + h,
               1 + 3 * experts + 3 + 1)
        return plus(attn, moe)
    return decoder(c, layer)


def expect_qwen3(c):
    h, inter = c["hidden_size"], c["intermediate_size"]
    b = flag(c, "attention_bias", False)
    hd = c["head_dim"]
    # q, k, v, o (attention_bias on all four), q_norm and k_norm hd each.
    attn = plus(attention(c, h, 32, b, b), (2 * hd, 2))
    return decoder(c, lambda i: plus(attn, gated(h, inter)))


def expect_qwen3_moe(c):
    h = c["hidden_size"]
    experts = c["num_experts"]
    dense_only = value(c, "mlp_only_layers", [])
    b = flag(c, "attention_bias", False)
    hd = value(c, "head_dim", h // c["num_attention_heads"])
    attn = plus(attention(c, h, 4, b, b), (2 * hd, 2))

    def layer(i):
        if i in dense_only or experts == 0 or (i + 1) % c[
                "decoder_sparse_step"]:
            return plus(attn, gated(h, c["intermediate_size"]))
        # gate h*E, E experts of 3*h*moe; no shared expert.
        moe = (h * experts + experts * 3 * h * c["moe_intermediate_size"],
               1 + 3 * experts)
        return plus(attn, moe)
    return decoder(c, layer)


def expect_gemma3(c):
    hd = c["head_dim"]
    outside, layers = expect_gemma(c, norms=4)
    # Gemma-2's layer and q_norm, k_norm of head_dim.
    return outside, [(n + 2 * hd, t + 2) for n, t in layers]


def expect_cohere(c):
    h, inter = c["hidden_size"], c["intermediate_size"]
    heads = c["num_attention_heads"]
    kv = value(c, "num_key_value_heads", heads)
    hd = value(c, "head_dim", h // heads)
    b = flag(c, "attention_bias", False)
    qk = ((heads + kv) * hd, 2) if flag(c, "use_qk_norm", False) else (0, 0)
    # One norm per layer; lm_head tied by default.
    return decoder(c, lambda i: plus(attention(c, h, None, b, b), qk,
                                     gated(h, inter)),
                   untied_default=False, norms=1)


def expect_llama4(c):
    h, layers = c["hidden_size"], c["num_hidden_layers"]
    b = flag(c, "attention_bias", False)
    if c.get("moe_layers") is not None:
        sparse = set(c["moe_layers"])
    else:
        step = c.get("interleave_moe_layer_step", 1)
        sparse = {i for i in range(layers) if (i + 1) % step == 0}

    def layer(i):
        attn = attention(c, h, 8, b, b)
        if i not in sparse:
            return plus(attn, gated(h, c["intermediate_size_mlp"]))
        e, inter = c["num_local_experts"], c["intermediate_size"]
        # gate_up_proj E*h*2*inter, down_proj E*inter*h, router h*E,
        # shared_expert 3*h*inter.
        moe = (e * h * 2 * inter + e * inter * h + h * e + 3 * h * inter, 6)
        return plus(attn, moe)
    return decoder(c, layer)


def expect_deepseek(c, v2):
    h = c["hidden_size"]
    heads, kv, rope = (c["num_attention_heads"], c["kv_lora_rank"],
                       c["qk_rope_head_dim"])
    nope, v, q = c["qk_nope_head_dim"], c["v_head_dim"], c["q_lora_rank"]
    b = flag(c, "attention_bias", False)
    if q is None:
        attn = (h * heads * (nope + rope), 1)
    else:
        # q_a_proj (+ bias), q_a_layernorm, q_b_proj.
        attn = (h * q + b * q + q + q * heads * (nope + rope), 3 + b)
    # kv_a_proj_with_mqa (+ bias), kv_a_layernorm, kv_b_proj, o_proj
    # (+ bias).
    attn = plus(attn, (h * (kv + rope) + b * (kv + rope) + kv
                       + kv * heads * (nope + v) + heads * v * h + b * h,
                       4 + 2 * b))
    routed = c["n_routed_experts"]
    shared = c["n_shared_experts"]
    freq = c.get("moe_layer_freq", 1) if v2 else 1

    def layer(i):
        if routed and i >= c["first_k_dense_replace"] and i % freq == 0:
            mi = c["moe_intermediate_size"]
            # experts 3*h*mi each, the router h*E, shared experts
            # 3*h*(mi*shared).
            moe = (routed * 3 * h * mi + routed * h, 3 * routed + 1)
            if shared is not None:
                moe = plus(moe, (3 * h * mi * shared, 3))
            return plus(attn, moe)
        return plus(attn, gated(h, c["intermediate_size"]))
    return decoder(c, layer)


def expect_falcon(c):
    h, vocab = c["hidden_size"], c["vocab_size"]
    heads = c["num_attention_heads"]
    hd = h // heads
    new = flag(c, "new_decoder_architecture", False)
    if new:
        qkv = (heads + 2 * value(c, "num_kv_heads", heads)) * hd
    elif flag(c, "multi_query", True):
        qkv = h + 2 * hd
    else:
        qkv = 3 * h
    ffn = value(c, "ffn_hidden_size", 4 * h)
    b = flag(c, "bias", False)
    num_ln = value(c, "num_ln_in_parallel_attn", 2 if new else None)
    norms = 2 if not flag(c, "parallel_attn", True) or num_ln == 2 else 1
    # query_key_value, dense, dense_h_to_4h, dense_4h_to_h (+ biases), and
    # the LayerNorms (weight and bias each).
    layer = (h * qkv + h * h + 2 * h * ffn + b * (qkv + h + ffn + h)
             + norms * 2 * h, 4 + 4 * b + 2 * norms)
    outside = vocab * h + 2 * h + head(c, h)
    return outside, [layer] * c["num_hidden_layers"]


def expect_gptj(c):
    d, vocab = c["n_embd"], c["vocab_size"]
    inner = value(c, "n_inner", 4 * d)
    # ln_1 2d, k, v, q, out 4*d*d, fc_in d*inner + inner, fc_out
    # inner*d + d: 10 tensors.
    layer = (2 * d + 4 * d * d + d * inner + inner + inner * d + d, 10)
    outside = vocab * d + 2 * d
    if arch(c, "gptj") == "GPTJForCausalLM":
        # lm_head.bias always; its weight unless tied (untied by default).
        outside += vocab + head(c, d, untied_default=True)
    return outside, [layer] * c["n_layer"]


def expect_bloom(c):
    h, vocab = c["hidden_size"], c["vocab_size"]
    # input_layernorm 2h, query_key_value 3h*h + 3h, dense h*h + h,
    # post_attention_layernorm 2h, dense_h_to_4h 4h*h + 4h, dense_4h_to_h
    # 4h*h + h: 12 tensors.
    layer = (2 * h + 3 * h * h + 3 * h + h * h + h + 2 * h + 4 * h * h
             + 4 * h + 4 * h * h + h, 12)
    outside = vocab * h + 2 * h + 2 * h + head(c, h)
    return outside, [layer] * c["n_layer"]


EXPECT = {
    "gpt2": expect_gpt2, "bert": expect_bert, "opt": expect_opt,
    "llama": expect_llama, "llama3": expect_llama, "mistral": expect_mistral,
    "mixtral": expect_mixtral, "qwen2": expect_qwen2, "gemma": expect_gemma,
    "gemma2": lambda c: expect_gemma(c, norms=4), "phi3": expect_phi3,
    "gpt_neox": expect_gpt_neox, "qwen2_moe": expect_qwen2_moe,
    "qwen3": expect_qwen3, "qwen3_moe": expect_qwen3_moe,
    "gemma3_text": expect_gemma3, "cohere": expect_cohere,
    "llama4_text": expect_llama4,
    "deepseek_v2": lambda c: expect_deepseek(c, True),
    "deepseek_v3": lambda c: expect_deepseek(c, False),
    "falcon": expect_falcon, "gptj": expect_gptj, "bloom": expect_bloom,
}


def by_layer(description):
    """(numel outside the layers, {i: (numel, tensors)})."""
    outside, layers = 0, {}
    for name, numel in zip(description.names, description.numels):
        match = _LAYER.search(name)
        if match is None:
            outside += numel
            continue
        i = int(match.group(1))
        total, tensors = layers.get(i, (0, 0))
        layers[i] = (total + numel, tensors + 1)
    return outside, layers


class RandomConfigTest(unittest.TestCase):
    def setUp(self):
        self.seed = seed()
        self.rng = random.Random(self.seed)

    def configs(self, family):
        for _ in range(CONFIGS_PER_FAMILY):
            yield models.random_config(family, self.rng)

    def test_every_family_has_a_formula(self):
        self.assertEqual(set(EXPECT), set(models.FAMILIES))

    def test_layers_and_totals_match_the_formulas(self):
        for family in models.FAMILIES:
            for c in self.configs(family):
                with self.subTest(family=family, config=c, seed=self.seed):
                    d = models.describe(c)
                    self.assertEqual(len(set(d.names)), len(d.names))
                    outside, layers = EXPECT[family](c)
                    got_outside, got_layers = by_layer(d)
                    self.assertEqual(got_outside, outside)
                    self.assertEqual(got_layers, dict(enumerate(layers)))
                    self.assertEqual(d.total, outside + sum(
                        numel for numel, _ in layers))

    def test_a_tied_head_is_listed_once(self):
        for family in models.FAMILIES:
            head_class = models.MODEL_TYPES[
                models.random_config(family, self.rng)["model_type"]][0]
            for c in self.configs(family):
                with self.subTest(family=family, config=c, seed=self.seed):
                    tied = models.describe(dict(c, tie_word_embeddings=True),
                                           head_class)
                    untied = models.describe(
                        dict(c, tie_word_embeddings=False), head_class)
                    # The head's weight is the one name untied adds (last,
                    # or before GPT-J's lm_head.bias, which stays).
                    extra = [i for i, name in enumerate(untied.names)
                             if name not in tied.names]
                    self.assertEqual(len(extra), 1)
                    i = extra[0]
                    self.assertEqual(untied.names[:i] + untied.names[i + 1:],
                                     tied.names)
                    self.assertEqual(
                        untied.numels[:i] + untied.numels[i + 1:],
                        tied.numels)
                    self.assertTrue(untied.names[i].endswith(
                        ("lm_head.weight", "embed_out.weight",
                         "decoder.weight")))
                    self.assertEqual(untied.numels[i], tied.numels[0])


if __name__ == "__main__":
    unittest.main()
