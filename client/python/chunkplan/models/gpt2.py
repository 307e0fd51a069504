"""GPT-2 (transformers' GPT2Model and GPT2LMHeadModel)."""

from chunkplan.models.family import Family
from chunkplan.models.hf_config import divisible
from chunkplan.models.layers import conv1d, embedding, layer_norm

# GPT2Config's defaults (GPT-2 small).
_DEFAULTS = {
    "vocab_size": 50257, "n_positions": 1024, "n_embd": 768, "n_layer": 12,
    "n_head": 12, "n_inner": None, "add_cross_attention": False,
    "tie_word_embeddings": True,
}


def _numels(cfg, architecture):
    if cfg.flag("add_cross_attention"):
        raise ValueError("config add_cross_attention: GPT-2 with cross "
                         "attention is not supported")
    d = cfg.size("n_embd")
    divisible(d, cfg.size("n_head"), "n_embd / n_head")
    inner = cfg.optional_size("n_inner") or 4 * d
    vocab = cfg.size("vocab_size")
    # GPT2Model: wte, wpe, h[i], ln_f.
    numels = embedding(vocab, d) + embedding(cfg.size("n_positions"), d)
    for _ in range(cfg.size("n_layer")):
        numels += layer_norm(d)         # ln_1
        numels += conv1d(d, 3 * d)      # attn.c_attn (q, k, v)
        numels += conv1d(d, d)          # attn.c_proj
        numels += layer_norm(d)         # ln_2
        numels += conv1d(d, inner)      # mlp.c_fc
        numels += conv1d(inner, d)      # mlp.c_proj
    numels += layer_norm(d)             # ln_f
    if architecture == "GPT2LMHeadModel" and not cfg.flag(
            "tie_word_embeddings"):
        numels += [vocab * d]           # lm_head, no bias
    return numels


FAMILY = Family("gpt2", ("GPT2LMHeadModel", "GPT2Model"), _DEFAULTS,
                "n_embd", _numels)
