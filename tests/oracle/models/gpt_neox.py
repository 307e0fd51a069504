"""GPT-NeoX and Pythia (transformers' GPTNeoXModel and
GPTNeoXForCausalLM)."""

from .family import Family
from .hf_config import divisible
from .layers import embedding, layer_norm, linear, repeated, with_head
from .random_config import common_head, maybe

# GPTNeoXConfig's defaults (GPT-NeoX-20B).
_DEFAULTS = {
    "vocab_size": 50432, "hidden_size": 6144, "num_hidden_layers": 44,
    "num_attention_heads": 64, "intermediate_size": 24576,
    "attention_bias": True, "tie_word_embeddings": False,
}


def _layer(h, inter, bias):
    """GPTNeoXLayer: input_layernorm, post_attention_layernorm, attention
    (query_key_value, dense: with attention_bias), mlp (dense_h_to_4h,
    dense_4h_to_h: with bias)."""
    return (layer_norm("input_layernorm", h)
            + layer_norm("post_attention_layernorm", h)
            + linear("attention.query_key_value", h, 3 * h, bias)
            + linear("attention.dense", h, h, bias)
            + linear("mlp.dense_h_to_4h", h, inter)
            + linear("mlp.dense_4h_to_h", inter, h))


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    divisible(h, cfg.size("num_attention_heads"),
              "hidden_size / num_attention_heads")
    inter = cfg.size("intermediate_size")
    vocab = cfg.size("vocab_size")
    bias = cfg.flag("attention_bias")
    # GPTNeoXModel: embed_in, layers, final_layer_norm.
    model = (embedding("embed_in", vocab, h)
             + repeated("layers", cfg.size("num_hidden_layers"),
                        lambda i: _layer(h, inter, bias))
             + layer_norm("final_layer_norm", h))
    if architecture == "GPTNeoXModel":
        return model
    # GPTNeoXForCausalLM: gpt_neox, then embed_out unless tied to embed_in.
    return with_head(cfg, model, "gpt_neox", "embed_out", h, vocab)


def random_config(rng):
    """A small GPT-NeoX config."""
    heads = rng.randint(1, 4)
    config = {"model_type": "gpt_neox",
              "hidden_size": heads * rng.randint(1, 8),
              "num_attention_heads": heads,
              "num_hidden_layers": rng.randint(1, 3),
              "intermediate_size": rng.randint(1, 40),
              "vocab_size": rng.randint(1, 300),
              "rotary_pct": rng.choice([0.25, 1.0])}
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    maybe(rng, config, "use_parallel_residual", rng.random() < 0.5)
    return common_head(rng, config, FAMILY)


FAMILY = Family("gpt_neox", ("GPTNeoXForCausalLM", "GPTNeoXModel"),
                _DEFAULTS, "hidden_size", _params)
