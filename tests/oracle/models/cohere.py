"""Cohere Command-R (model_type "cohere": transformers' CohereModel and
CohereForCausalLM, modeling_cohere.py at 4.51.3): one norm per layer before
attention and MLP side by side; CohereLayerNorm has a weight and no bias;
q_norm and k_norm hold one row per head where use_qk_norm."""

from .decoder import causal_lm, gated_mlp, head_dims
from .family import Family
from .layers import linear, scoped
from .random_config import common_head, decoder_shape, maybe

# CohereConfig's defaults (Command-R's shape).
_DEFAULTS = {
    "vocab_size": 256000, "hidden_size": 8192, "intermediate_size": 22528,
    "num_hidden_layers": 40, "num_attention_heads": 64,
    "num_key_value_heads": None, "attention_bias": False,
    "use_qk_norm": False, "tie_word_embeddings": True,
}


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    heads, kv_heads, head_dim = head_dims(cfg, h)
    bias = cfg.flag("attention_bias")
    attn = (linear("q_proj", h, heads * head_dim, bias)
            + linear("k_proj", h, kv_heads * head_dim, bias)
            + linear("v_proj", h, kv_heads * head_dim, bias)
            + linear("o_proj", heads * head_dim, h, bias))
    if cfg.flag("use_qk_norm"):
        attn += [("q_norm.weight", heads * head_dim),
                 ("k_norm.weight", kv_heads * head_dim)]
    # CohereDecoderLayer: self_attn, mlp, input_layernorm.
    layer = (scoped("self_attn", attn)
             + scoped("mlp", gated_mlp(h, cfg.size("intermediate_size")))
             + [("input_layernorm.weight", h)])
    return causal_lm(cfg, architecture, lambda i: layer)


def random_config(rng):
    """A small Command-R config."""
    config = decoder_shape(rng, "cohere")
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    maybe(rng, config, "use_qk_norm", rng.random() < 0.5)
    return common_head(rng, config, FAMILY)


FAMILY = Family("cohere", ("CohereForCausalLM", "CohereModel"), _DEFAULTS,
                "hidden_size", _params)
