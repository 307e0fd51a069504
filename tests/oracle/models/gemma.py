"""Gemma and Gemma-2 (transformers' GemmaModel / GemmaForCausalLM and
Gemma2Model / Gemma2ForCausalLM): a head_dim of their own, and the
language-model head tied to the embeddings by default; Gemma-2 adds a norm
before and after the MLP."""

from .decoder import attention, causal_lm, gated_mlp, norms
from .family import Family
from .layers import scoped
from .random_config import common_head, decoder_shape, maybe

# GemmaConfig's defaults (Gemma 7B) and Gemma2Config's (Gemma-2 2B).
_GEMMA_DEFAULTS = {
    "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576,
    "num_hidden_layers": 28, "num_attention_heads": 16,
    "num_key_value_heads": 16, "head_dim": 256, "attention_bias": False,
    "tie_word_embeddings": True,
}
_GEMMA2_DEFAULTS = dict(
    _GEMMA_DEFAULTS, hidden_size=2304, intermediate_size=9216,
    num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4)


def _layer(cfg, *layer_norms):
    """self_attn (q, k, v, o all with attention_bias), mlp, then the
    norms."""
    h = cfg.size("hidden_size")
    bias = cfg.flag("attention_bias")
    # Gemma's config classes take null for these as None, which their
    # attention cannot size (no fallback to the heads or the width).
    cfg.size("num_key_value_heads")
    cfg.size("head_dim")
    return (attention(cfg, h, bias, bias)
            + scoped("mlp", gated_mlp(h, cfg.size("intermediate_size")))
            + norms(h, *layer_norms))


def _gemma(cfg, architecture):
    layer = _layer(cfg, "input_layernorm", "post_attention_layernorm")
    return causal_lm(cfg, architecture, lambda i: layer)


def _gemma2(cfg, architecture):
    layer = _layer(cfg, "input_layernorm", "post_attention_layernorm",
                   "pre_feedforward_layernorm", "post_feedforward_layernorm")
    return causal_lm(cfg, architecture, lambda i: layer)


def _random(rng, family):
    config = decoder_shape(rng, family.model_type, head_dim="explicit")
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    return common_head(rng, config, family)


def random_gemma_config(rng):
    """A small Gemma config (head_dim apart from the width, as Gemma's)."""
    return _random(rng, GEMMA)


def random_gemma2_config(rng):
    """A small Gemma-2 config."""
    return _random(rng, GEMMA2)


GEMMA = Family("gemma", ("GemmaForCausalLM", "GemmaModel"), _GEMMA_DEFAULTS,
               "hidden_size", _gemma)
GEMMA2 = Family("gemma2", ("Gemma2ForCausalLM", "Gemma2Model"),
                _GEMMA2_DEFAULTS, "hidden_size", _gemma2)
