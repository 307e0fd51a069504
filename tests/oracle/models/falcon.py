"""Falcon (model_type "falcon": transformers' FalconModel and
FalconForCausalLM, modeling_falcon.py at 4.51.3): a fused query_key_value
whose width follows the attention layout (new decoder architecture:
grouped key/value heads; multi-query: one key/value head; else three full
projections), and per layer post_attention_layernorm then input_layernorm
(sequential), ln_attn and ln_mlp (two parallel norms), or input_layernorm
alone."""

from .family import Family
from .hf_config import divisible
from .layers import embedding, layer_norm, linear, repeated, with_head
from .random_config import common_head, maybe

# FalconConfig's defaults (Falcon-7B), tie_word_embeddings PretrainedConfig's.
_DEFAULTS = {
    "vocab_size": 65024, "hidden_size": 4544, "num_hidden_layers": 32,
    "num_attention_heads": 71, "num_ln_in_parallel_attn": None,
    "num_kv_heads": None, "new_decoder_architecture": False,
    "multi_query": True, "parallel_attn": True, "bias": False,
    "ffn_hidden_size": None, "tie_word_embeddings": True,
}


def _params(cfg, architecture):
    if cfg.is_set("n_embed"):
        raise ValueError("config n_embed: not supported")
    h = cfg.size("hidden_size")
    heads = cfg.size("num_attention_heads")
    head_dim = divisible(h, heads, "hidden_size / num_attention_heads")
    new_arch = cfg.flag("new_decoder_architecture")
    if new_arch:
        kv = cfg.optional_size("num_kv_heads") or heads
        qkv = (heads + 2 * kv) * head_dim
    elif cfg.flag("multi_query"):
        qkv = h + 2 * head_dim
    else:
        qkv = 3 * h
    ffn = cfg.optional_size("ffn_hidden_size") or 4 * h
    bias = cfg.flag("bias")
    parallel = cfg.flag("parallel_attn")
    num_ln = cfg.optional_size("num_ln_in_parallel_attn")
    if num_ln is None and new_arch:
        num_ln = 2
    if not parallel:
        layer_norms = (layer_norm("post_attention_layernorm", h)
                       + layer_norm("input_layernorm", h))
    elif num_ln == 2:
        layer_norms = layer_norm("ln_attn", h) + layer_norm("ln_mlp", h)
    else:
        layer_norms = layer_norm("input_layernorm", h)
    layer = (linear("self_attention.query_key_value", h, qkv, bias)
             + linear("self_attention.dense", h, h, bias)
             + linear("mlp.dense_h_to_4h", h, ffn, bias)
             + linear("mlp.dense_4h_to_h", ffn, h, bias) + layer_norms)
    vocab = cfg.size("vocab_size")
    model = (embedding("word_embeddings", vocab, h)
             + repeated("h", cfg.size("num_hidden_layers"), lambda i: layer)
             + layer_norm("ln_f", h))
    if architecture == "FalconModel":
        return model
    return with_head(cfg, model, "transformer", "lm_head", h, vocab)


def random_config(rng):
    """A small Falcon config of any of the three layouts."""
    heads = rng.randint(1, 4)
    config = {"model_type": "falcon",
              "hidden_size": heads * rng.randint(1, 6),
              "num_attention_heads": heads,
              "num_hidden_layers": rng.randint(1, 3),
              "vocab_size": rng.randint(1, 200)}
    maybe(rng, config, "new_decoder_architecture", rng.random() < 0.4)
    maybe(rng, config, "num_kv_heads", rng.randint(1, 4))
    maybe(rng, config, "multi_query", rng.random() < 0.5)
    maybe(rng, config, "parallel_attn", rng.random() < 0.5)
    maybe(rng, config, "num_ln_in_parallel_attn", rng.choice([None, 1, 2]))
    maybe(rng, config, "ffn_hidden_size", rng.randint(1, 30))
    maybe(rng, config, "bias", rng.random() < 0.5)
    maybe(rng, config, "alibi", rng.random() < 0.5)
    return common_head(rng, config, FAMILY)


FAMILY = Family("falcon", ("FalconForCausalLM", "FalconModel"), _DEFAULTS,
                "hidden_size", _params)
