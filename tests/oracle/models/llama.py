"""LLaMA, LLaMA-2 and LLaMA-3/3.x (model_type "llama": transformers'
LlamaModel and LlamaForCausalLM)."""

from .decoder import attention, causal_lm, gated_mlp, norms
from .family import Family
from .layers import scoped
from .random_config import common_head, decoder_shape, leave_out, maybe

# LlamaConfig's defaults (LLaMA-7B).
_DEFAULTS = {
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": None, "head_dim": None, "attention_bias": False,
    "mlp_bias": False, "tie_word_embeddings": False,
}


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    inter = cfg.size("intermediate_size")
    attention_bias = cfg.flag("attention_bias")
    mlp_bias = cfg.flag("mlp_bias")
    # LlamaDecoderLayer: self_attn (o_proj too takes attention_bias), mlp,
    # input_layernorm, post_attention_layernorm.
    layer = (attention(cfg, h, attention_bias, attention_bias)
             + scoped("mlp", gated_mlp(h, inter, mlp_bias))
             + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, lambda i: layer)


def random_config(rng):
    """A small LLaMA / LLaMA-2 config (attention and MLP biases at random,
    or left out)."""
    config = decoder_shape(rng, "llama")
    leave_out(rng, config, "num_key_value_heads")
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    maybe(rng, config, "mlp_bias", rng.random() < 0.5)
    return common_head(rng, config, FAMILY)


def random_llama3_config(rng):
    """A small config shaped as LLaMA-3/3.x publishes them: grouped-query
    attention, llama3 rope scaling, head_dim and tying as in 3.2 1B/3B."""
    config = decoder_shape(rng, "llama")
    config.update(attention_bias=False, mlp_bias=False, rope_theta=500000.0,
                  rope_scaling={"factor": 32.0, "high_freq_factor": 4.0,
                                "low_freq_factor": 1.0,
                                "original_max_position_embeddings": 8192,
                                "rope_type": "llama3"})
    config["tie_word_embeddings"] = rng.random() < 0.5
    maybe(rng, config, "architectures", [rng.choice(FAMILY.architectures)])
    return config


FAMILY = Family("llama", ("LlamaForCausalLM", "LlamaModel"), _DEFAULTS,
                "hidden_size", _params)
