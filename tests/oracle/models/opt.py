"""OPT (transformers' OPTModel and OPTForCausalLM)."""

from .family import Family
from .hf_config import divisible
from .layers import (embedding, layer_norm, linear, repeated, scoped,
                     with_head)
from .random_config import common_head, maybe

# OPTConfig's defaults (OPT-125m).
_DEFAULTS = {
    "vocab_size": 50272, "hidden_size": 768, "num_hidden_layers": 12,
    "ffn_dim": 3072, "max_position_embeddings": 2048,
    "num_attention_heads": 12, "do_layer_norm_before": True,
    "_remove_final_layer_norm": False, "word_embed_proj_dim": None,
    "enable_bias": True, "layer_norm_elementwise_affine": True,
    "tie_word_embeddings": True,
}
# OPTLearnedPositionalEmbedding keeps 2 rows more than the positions.
_POSITION_OFFSET = 2


def _layer(h, ffn, bias, affine):
    """OPTDecoderLayer: self_attn (k, v, q, out_proj), self_attn_layer_norm,
    fc1, fc2, final_layer_norm."""
    return (linear("self_attn.k_proj", h, h, bias)
            + linear("self_attn.v_proj", h, h, bias)
            + linear("self_attn.q_proj", h, h, bias)
            + linear("self_attn.out_proj", h, h, bias)
            + layer_norm("self_attn_layer_norm", h, affine)
            + linear("fc1", h, ffn, bias) + linear("fc2", ffn, h, bias)
            + layer_norm("final_layer_norm", h, affine))


def _decoder(cfg):
    """OPTDecoder, in the order it defines its parts: embed_tokens,
    embed_positions, project_out, project_in, final_layer_norm, layers."""
    h = cfg.size("hidden_size")
    divisible(h, cfg.size("num_attention_heads"),
              "hidden_size / num_attention_heads")
    ffn = cfg.size("ffn_dim")
    proj = cfg.optional_size("word_embed_proj_dim") or h
    bias = cfg.flag("enable_bias")
    affine = cfg.flag("layer_norm_elementwise_affine")
    params = (embedding("embed_tokens", cfg.size("vocab_size"), proj)
              + embedding("embed_positions",
                          cfg.size("max_position_embeddings")
                          + _POSITION_OFFSET, h))
    if proj != h:
        params += linear("project_out", h, proj, bias=False)
        params += linear("project_in", proj, h, bias=False)
    if cfg.flag("do_layer_norm_before") and not cfg.flag(
            "_remove_final_layer_norm"):
        params += layer_norm("final_layer_norm", h, affine)
    return params + repeated("layers", cfg.size("num_hidden_layers"),
                             lambda i: _layer(h, ffn, bias, affine))


def _params(cfg, architecture):
    model = scoped("decoder", _decoder(cfg))
    if architecture == "OPTModel":
        return model
    proj = cfg.optional_size("word_embed_proj_dim") or cfg.size("hidden_size")
    return with_head(cfg, model, "model", "lm_head", proj,
                     cfg.size("vocab_size"))


def random_config(rng):
    """A small OPT config."""
    heads = rng.randint(1, 4)
    h = heads * rng.randint(1, 8)
    config = {"model_type": "opt", "hidden_size": h,
              "num_attention_heads": heads,
              "num_hidden_layers": rng.randint(1, 3),
              "ffn_dim": rng.randint(1, 40),
              "max_position_embeddings": rng.randint(1, 64),
              "vocab_size": rng.randint(1, 300)}
    maybe(rng, config, "word_embed_proj_dim",
          rng.choice([None, h, rng.randint(1, 16)]))
    for key in ("do_layer_norm_before", "_remove_final_layer_norm",
                "enable_bias", "layer_norm_elementwise_affine"):
        maybe(rng, config, key, rng.random() < 0.5)
    return common_head(rng, config, FAMILY)


FAMILY = Family("opt", ("OPTForCausalLM", "OPTModel"), _DEFAULTS,
                "hidden_size", _params)
