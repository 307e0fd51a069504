"""GPT-J (model_type "gptj": transformers' GPTJModel and GPTJForCausalLM,
modeling_gptj.py at 4.51.3): one LayerNorm per block before attention and
MLP side by side; k_proj, v_proj, q_proj, out_proj without biases; lm_head
with a bias, which stays where tie_word_embeddings ties its weight to
wte."""

from .family import Family
from .hf_config import divisible
from .layers import embedding, layer_norm, linear, repeated, scoped
from .random_config import common_head, maybe

# GPTJConfig's defaults (GPT-J 6B).
_DEFAULTS = {
    "vocab_size": 50400, "n_embd": 4096, "n_layer": 28, "n_head": 16,
    "n_inner": None, "tie_word_embeddings": False,
}


def _params(cfg, architecture):
    d = cfg.size("n_embd")
    divisible(d, cfg.size("n_head"), "n_embd / n_head")
    inner = cfg.optional_size("n_inner") or 4 * d
    vocab = cfg.size("vocab_size")
    # GPTJBlock: ln_1, attn, mlp.
    block = (layer_norm("ln_1", d)
             + scoped("attn", linear("k_proj", d, d, False)
                      + linear("v_proj", d, d, False)
                      + linear("q_proj", d, d, False)
                      + linear("out_proj", d, d, False))
             + scoped("mlp", linear("fc_in", d, inner)
                      + linear("fc_out", inner, d)))
    model = (embedding("wte", vocab, d)
             + repeated("h", cfg.size("n_layer"), lambda i: block)
             + layer_norm("ln_f", d))
    if architecture == "GPTJModel":
        return model
    head = [("lm_head.bias", vocab)]
    if not cfg.flag("tie_word_embeddings"):
        head = [("lm_head.weight", vocab * d)] + head
    return scoped("transformer", model) + head


def random_config(rng):
    """A small GPT-J config."""
    heads = rng.randint(1, 4)
    config = {"model_type": "gptj", "n_embd": heads * rng.randint(1, 6),
              "n_head": heads, "n_layer": rng.randint(1, 3),
              "vocab_size": rng.randint(1, 200), "rotary_dim": 2}
    maybe(rng, config, "n_inner", rng.choice([None, rng.randint(1, 30)]))
    return common_head(rng, config, FAMILY)


FAMILY = Family("gptj", ("GPTJForCausalLM", "GPTJModel"), _DEFAULTS,
                "n_embd", _params)
