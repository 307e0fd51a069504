"""Qwen2 and Qwen2.5 (model_type "qwen2": transformers' Qwen2Model and
Qwen2ForCausalLM): LLaMA's layer with biases on q, k and v."""

from .decoder import attention, causal_lm, gated_mlp, norms
from .family import Family
from .layers import scoped
from .random_config import common_head, decoder_shape

# Qwen2Config's defaults.
_DEFAULTS = {
    "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
    "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 32, "head_dim": None,
    "tie_word_embeddings": False,
}


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    inter = cfg.size("intermediate_size")
    # Qwen2DecoderLayer: self_attn (q, k, v with bias; o_proj without),
    # mlp, input_layernorm, post_attention_layernorm.
    layer = (attention(cfg, h, qkv_bias=True)
             + scoped("mlp", gated_mlp(h, inter))
             + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, lambda i: layer)


def random_config(rng):
    """A small Qwen2 config (tied as Qwen2.5's 0.5B-3B, or not)."""
    config = decoder_shape(rng, "qwen2")
    config["use_sliding_window"] = False
    if rng.random() < 0.5:  # null: as many as the heads
        config["num_key_value_heads"] = None
    return common_head(rng, config, FAMILY)


FAMILY = Family("qwen2", ("Qwen2ForCausalLM", "Qwen2Model"), _DEFAULTS,
                "hidden_size", _params)
