"""Llama 4's text model (model_type "llama4_text": transformers'
Llama4TextModel and Llama4ForCausalLM over a Llama4TextConfig,
modeling_llama4.py at 4.51.3). A layer in moe_layers (by default every
interleave_moe_layer_step-th, from step - 1) has a feed_forward of fused
experts (two 3-D parameters: gate_up_proj [E, hidden, 2 * inter] and
down_proj [E, inter, hidden]), a router and a shared expert; the others a
dense MLP of intermediate_size_mlp. The L2 qk norm has no weight."""

from .decoder import attention, causal_lm, gated_mlp, norms
from .family import Family
from .layers import linear, scoped
from .random_config import common_head, decoder_shape, maybe

# Llama4TextConfig's defaults (Llama 4 Scout's text shape).
_DEFAULTS = {
    "vocab_size": 202048, "hidden_size": 5120, "intermediate_size": 8192,
    "intermediate_size_mlp": 16384, "num_hidden_layers": 48,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
    "attention_bias": False, "num_local_experts": 16, "moe_layers": None,
    "interleave_moe_layer_step": 1, "tie_word_embeddings": False,
}


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    bias = cfg.flag("attention_bias")
    attn = attention(cfg, h, bias, bias)
    layers = cfg.size("num_hidden_layers")
    if not cfg.is_set("moe_layers"):
        step = cfg.size("interleave_moe_layer_step")
        moe_layers = set(range(step - 1, layers, step))
    else:
        moe_layers = set(cfg.int_list("moe_layers"))

    def layer(i):
        if i in moe_layers:
            experts = cfg.size("num_local_experts")
            inter = cfg.size("intermediate_size")
            ff = ([("experts.gate_up_proj", experts * h * 2 * inter),
                   ("experts.down_proj", experts * inter * h)]
                  + linear("router", h, experts, False)
                  + scoped("shared_expert", gated_mlp(h, inter)))
        else:
            ff = gated_mlp(h, cfg.size("intermediate_size_mlp"))
        return (attn + scoped("feed_forward", ff)
                + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, layer)


def random_config(rng):
    """A small Llama 4 text config: MoE layers listed, interleaved, or
    every layer."""
    # head_dim given: Llama4TextConfig defaults it to 128, not hidden / heads.
    config = decoder_shape(rng, "llama4_text", head_dim="explicit")
    layers = config["num_hidden_layers"] = rng.randint(1, 4)
    config.update(num_local_experts=rng.randint(1, 4),
                  intermediate_size_mlp=rng.randint(1, 40))
    choice = rng.random()
    if choice < 0.3:
        config["moe_layers"] = rng.sample(range(layers),
                                          rng.randint(0, layers))
    elif choice < 0.6:
        config["interleave_moe_layer_step"] = rng.randint(1, 3)
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    return common_head(rng, config, FAMILY)


FAMILY = Family("llama4_text", ("Llama4ForCausalLM", "Llama4TextModel"),
                _DEFAULTS, "hidden_size", _params)
