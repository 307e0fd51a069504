"""GPT-2 (transformers' GPT2Model and GPT2LMHeadModel)."""

from .family import Family
from .hf_config import divisible
from .layers import conv1d, embedding, layer_norm, repeated, with_head
from .random_config import common_head, maybe

# GPT2Config's defaults (GPT-2 small).
_DEFAULTS = {
    "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
    "n_head": 12, "n_inner": None, "add_cross_attention": False,
    "tie_word_embeddings": True,
}


def _block(d, inner):
    """GPT2Block: ln_1, attn (c_attn: q, k, v; c_proj), ln_2, mlp."""
    return (layer_norm("ln_1", d) + conv1d("attn.c_attn", d, 3 * d)
            + conv1d("attn.c_proj", d, d) + layer_norm("ln_2", d)
            + conv1d("mlp.c_fc", d, inner) + conv1d("mlp.c_proj", inner, d))


def _params(cfg, architecture):
    if cfg.flag("add_cross_attention"):
        raise ValueError("config add_cross_attention: GPT-2 with cross "
                         "attention is not supported")
    d = cfg.size("n_embd")
    divisible(d, cfg.size("n_head"), "n_embd / n_head")
    inner = cfg.optional_size("n_inner") or 4 * d
    vocab = cfg.size("vocab_size")
    # GPT2Model: wte, wpe, h[i], ln_f.
    model = (embedding("wte", vocab, d)
             + embedding("wpe", cfg.size("n_positions"), d)
             + repeated("h", cfg.size("n_layer"), lambda i: _block(d, inner))
             + layer_norm("ln_f", d))
    if architecture == "GPT2Model":
        return model
    return with_head(cfg, model, "transformer", "lm_head", d, vocab)


def random_config(rng):
    """A small GPT-2 config."""
    heads = rng.randint(1, 4)
    d = heads * rng.randint(1, 8)
    config = {"model_type": "gpt2", "n_embd": d, "n_head": heads,
              "n_layer": rng.randint(1, 3), "n_positions": rng.randint(1, 64),
              "vocab_size": rng.randint(1, 300)}
    maybe(rng, config, "n_inner", rng.choice([None, rng.randint(1, 40)]))
    return common_head(rng, config, FAMILY)


FAMILY = Family("gpt2", ("GPT2LMHeadModel", "GPT2Model"), _DEFAULTS,
                "n_embd", _params)
