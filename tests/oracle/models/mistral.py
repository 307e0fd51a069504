"""Mistral (grouped-query attention) and Mixtral (its mixture of experts):
transformers' *Model and *ForCausalLM classes as transformers 4.x defines
them (Mixtral's experts as one module per expert with w1, w2, w3)."""

from .decoder import attention, causal_lm, gated_mlp, norms
from .family import Family
from .layers import linear, repeated, scoped
from .random_config import common_head, decoder_shape, maybe

# The config classes' defaults (Mistral-7B, Mixtral-8x7B).
_MISTRAL_DEFAULTS = {
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": None, "tie_word_embeddings": False,
}
_MIXTRAL_DEFAULTS = dict(_MISTRAL_DEFAULTS, num_local_experts=8)


def _expert(h, inter):
    """MixtralBlockSparseTop2MLP: w1, w2, w3."""
    return (linear("w1", h, inter, False) + linear("w2", inter, h, False)
            + linear("w3", h, inter, False))


def _layer(cfg, feed_forward):
    """MistralDecoderLayer / MixtralDecoderLayer: self_attn, the
    feed-forward part, input_layernorm, post_attention_layernorm."""
    h = cfg.size("hidden_size")
    return (attention(cfg, h) + feed_forward(h, cfg.size("intermediate_size"))
            + norms(h, "input_layernorm", "post_attention_layernorm"))


def _mistral(cfg, architecture):
    layer = _layer(cfg, lambda h, inter: scoped("mlp", gated_mlp(h, inter)))
    return causal_lm(cfg, architecture, lambda i: layer)


def _mixtral(cfg, architecture):
    experts = cfg.size("num_local_experts")

    def sparse_moe(h, inter):
        # block_sparse_moe: the router `gate`, then experts[e].
        return scoped("block_sparse_moe", linear("gate", h, experts, False)
                      + repeated("experts", experts,
                                 lambda e: _expert(h, inter)))
    layer = _layer(cfg, sparse_moe)
    return causal_lm(cfg, architecture, lambda i: layer)


def random_mistral_config(rng):
    """A small Mistral config."""
    return common_head(rng, decoder_shape(rng, "mistral"), MISTRAL)


def random_mixtral_config(rng):
    """A small Mixtral config."""
    config = decoder_shape(rng, "mixtral")
    maybe(rng, config, "num_local_experts", rng.randint(1, 5))
    config["num_experts_per_tok"] = 1
    return common_head(rng, config, MIXTRAL)


MISTRAL = Family("mistral", ("MistralForCausalLM", "MistralModel"),
                 _MISTRAL_DEFAULTS, "hidden_size", _mistral)
MIXTRAL = Family("mixtral", ("MixtralForCausalLM", "MixtralModel"),
                 _MIXTRAL_DEFAULTS, "hidden_size", _mixtral)
