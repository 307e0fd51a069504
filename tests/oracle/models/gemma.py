"""Gemma, Gemma-2 and Gemma-3's text model (transformers' GemmaModel /
GemmaForCausalLM, Gemma2Model / Gemma2ForCausalLM, and Gemma3TextModel /
Gemma3ForCausalLM of model_type "gemma3_text", modeling_gemma3.py at
4.51.3): a head_dim of their own, and the language-model head tied to the
embeddings by default; Gemma-2 adds a norm before and after the MLP;
Gemma-3 keeps them and adds q_norm and k_norm (of head_dim) after o_proj."""

from .decoder import attention, causal_lm, gated_mlp, norms
from .family import Family
from .layers import rms_norm, scoped
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
# Gemma3TextConfig's: Gemma-2 2B's shape, a vocabulary of 262,208.
_GEMMA3_DEFAULTS = dict(_GEMMA2_DEFAULTS, vocab_size=262208)


def _layer(cfg, *layer_norms, qk_norm=False):
    """self_attn (q, k, v, o all with attention_bias; q_norm and k_norm
    where qk_norm), mlp, then the norms."""
    h = cfg.size("hidden_size")
    bias = cfg.flag("attention_bias")
    # Gemma's config classes take null for these as None, which their
    # attention cannot size (no fallback to the heads or the width).
    cfg.size("num_key_value_heads")
    head_dim = cfg.size("head_dim")
    attn = attention(cfg, h, bias, bias)
    if qk_norm:
        attn += scoped("self_attn", rms_norm("q_norm", head_dim)
                       + rms_norm("k_norm", head_dim))
    return (attn
            + scoped("mlp", gated_mlp(h, cfg.size("intermediate_size")))
            + norms(h, *layer_norms))


def _gemma(cfg, architecture):
    layer = _layer(cfg, "input_layernorm", "post_attention_layernorm")
    return causal_lm(cfg, architecture, lambda i: layer)


def _gemma2(cfg, architecture):
    layer = _layer(cfg, "input_layernorm", "post_attention_layernorm",
                   "pre_feedforward_layernorm", "post_feedforward_layernorm")
    return causal_lm(cfg, architecture, lambda i: layer)


def _gemma3(cfg, architecture):
    layer = _layer(cfg, "input_layernorm", "post_attention_layernorm",
                   "pre_feedforward_layernorm", "post_feedforward_layernorm",
                   qk_norm=True)
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


def random_gemma3_config(rng):
    """A small Gemma-3 text config."""
    return _random(rng, GEMMA3)


GEMMA = Family("gemma", ("GemmaForCausalLM", "GemmaModel"), _GEMMA_DEFAULTS,
               "hidden_size", _gemma)
GEMMA2 = Family("gemma2", ("Gemma2ForCausalLM", "Gemma2Model"),
                _GEMMA2_DEFAULTS, "hidden_size", _gemma2)
GEMMA3 = Family("gemma3_text", ("Gemma3ForCausalLM", "Gemma3TextModel"),
                _GEMMA3_DEFAULTS, "hidden_size", _gemma3)
