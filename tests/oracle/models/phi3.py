"""Phi-3 (transformers' Phi3Model and Phi3ForCausalLM): q, k and v fused in
one qkv_proj, defined after o_proj, and the MLP's gate and up fused in one
gate_up_proj."""

from .decoder import causal_lm, head_dims, norms
from .family import Family
from .layers import linear, scoped
from .random_config import common_head, decoder_shape, leave_out, maybe

# Phi3Config's defaults (Phi-3-mini).
_DEFAULTS = {
    "vocab_size": 32064, "hidden_size": 3072, "intermediate_size": 8192,
    "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": None, "head_dim": None,
    "tie_word_embeddings": False,
}


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    inter = cfg.size("intermediate_size")
    heads, kv_heads, head_dim = head_dims(cfg, h)
    # Phi3DecoderLayer: self_attn (o_proj, then qkv_proj), mlp
    # (gate_up_proj, down_proj), input_layernorm, post_attention_layernorm.
    layer = (scoped("self_attn", linear("o_proj", heads * head_dim, h, False)
                    + linear("qkv_proj", h, (heads + 2 * kv_heads)
                             * head_dim, False))
             + scoped("mlp", linear("gate_up_proj", h, 2 * inter, False)
                      + linear("down_proj", inter, h, False))
             + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, lambda i: layer)


def random_config(rng):
    """A small Phi-3 config."""
    config = decoder_shape(rng, "phi3")
    leave_out(rng, config, "num_key_value_heads")
    # Read only by the activation estimate's traits (decoder_traits.py).
    maybe(rng, config, "partial_rotary_factor",
          rng.choice([0.5, 0.75, 1.0]))
    maybe(rng, config, "resid_pdrop", rng.choice([0.0, 0.1]))
    return common_head(rng, config, FAMILY)


FAMILY = Family("phi3", ("Phi3ForCausalLM", "Phi3Model"), _DEFAULTS,
                "hidden_size", _params)
