"""BLOOM (model_type "bloom": transformers' BloomModel and BloomForCausalLM,
modeling_bloom.py at 4.51.3): a LayerNorm after the word embeddings, biased
fused attention, an MLP of 4 * hidden, lm_head tied by default."""

from .family import Family
from .hf_config import divisible
from .layers import embedding, layer_norm, linear, repeated, with_head
from .random_config import common_head

# BloomConfig's defaults (a tiny shape), tie_word_embeddings
# PretrainedConfig's.
_DEFAULTS = {
    "vocab_size": 250880, "hidden_size": 64, "n_layer": 2, "n_head": 8,
    "tie_word_embeddings": True,
}


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    divisible(h, cfg.size("n_head"), "hidden_size / n_head")
    vocab = cfg.size("vocab_size")
    # BloomBlock: input_layernorm, self_attention, post_attention_layernorm,
    # mlp.
    block = (layer_norm("input_layernorm", h)
             + linear("self_attention.query_key_value", h, 3 * h)
             + linear("self_attention.dense", h, h)
             + layer_norm("post_attention_layernorm", h)
             + linear("mlp.dense_h_to_4h", h, 4 * h)
             + linear("mlp.dense_4h_to_h", 4 * h, h))
    model = (embedding("word_embeddings", vocab, h)
             + layer_norm("word_embeddings_layernorm", h)
             + repeated("h", cfg.size("n_layer"), lambda i: block)
             + layer_norm("ln_f", h))
    if architecture == "BloomModel":
        return model
    return with_head(cfg, model, "transformer", "lm_head", h, vocab)


def random_config(rng):
    """A small BLOOM config."""
    heads = rng.randint(1, 4)
    config = {"model_type": "bloom", "hidden_size": heads * rng.randint(1, 6),
              "n_head": heads, "n_layer": rng.randint(1, 3),
              "vocab_size": rng.randint(1, 200)}
    return common_head(rng, config, FAMILY)


FAMILY = Family("bloom", ("BloomForCausalLM", "BloomModel"), _DEFAULTS,
                "hidden_size", _params)
