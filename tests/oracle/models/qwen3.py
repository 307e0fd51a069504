"""Qwen3 and Qwen3-MoE (model_type "qwen3", "qwen3_moe": transformers'
Qwen3Model / Qwen3ForCausalLM and Qwen3MoeModel / Qwen3MoeForCausalLM,
modeling_qwen3.py and modeling_qwen3_moe.py at 4.51.3): LLaMA's attention
with every projection biased where attention_bias, then q_norm and k_norm
over head_dim; Qwen3-MoE's sparse block is a router `gate` and one module
per expert (no shared expert)."""

from .decoder import causal_lm, gated_mlp, head_dims, norms
from .family import Family
from .layers import linear, repeated, rms_norm, scoped
from .random_config import common_head, decoder_shape, maybe

# Qwen3Config's defaults.
_DEFAULTS = {
    "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
    "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 32, "head_dim": 128, "attention_bias": False,
    "tie_word_embeddings": False,
}
# Qwen3MoeConfig's defaults: it has no head_dim (hidden / heads unless the
# config.json gives one).
_MOE_DEFAULTS = {
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 6144,
    "num_hidden_layers": 24, "num_attention_heads": 32,
    "num_key_value_heads": 4, "attention_bias": False,
    "decoder_sparse_step": 1, "moe_intermediate_size": 768,
    "num_experts": 128, "mlp_only_layers": None,
    "tie_word_embeddings": False,
}


def _attention(cfg, h):
    """Qwen3Attention: q_proj, k_proj, v_proj, o_proj (attention_bias on
    all four), q_norm, k_norm (RMS norms of head_dim)."""
    heads, kv_heads, head_dim = head_dims(cfg, h)
    bias = cfg.flag("attention_bias")
    return scoped("self_attn",
                  linear("q_proj", h, heads * head_dim, bias)
                  + linear("k_proj", h, kv_heads * head_dim, bias)
                  + linear("v_proj", h, kv_heads * head_dim, bias)
                  + linear("o_proj", heads * head_dim, h, bias)
                  + rms_norm("q_norm", head_dim) + rms_norm("k_norm", head_dim))


def _qwen3(cfg, architecture):
    # Qwen3Config always sets head_dim; a null one reaches the attention as
    # None, which it cannot size.
    cfg.size("head_dim")
    h = cfg.size("hidden_size")
    layer = (_attention(cfg, h)
             + scoped("mlp", gated_mlp(h, cfg.size("intermediate_size")))
             + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, lambda i: layer)


def _qwen3_moe(cfg, architecture):
    h = cfg.size("hidden_size")
    attn = _attention(cfg, h)
    dense_only = cfg.int_list("mlp_only_layers")
    experts = cfg.count("num_experts")
    step = cfg.size("decoder_sparse_step") if experts > 0 else None

    def layer(i):
        # Qwen3MoeDecoderLayer: sparse where i is not in mlp_only_layers,
        # there are experts and (i + 1) is a multiple of the step.
        if i not in dense_only and experts > 0 and (i + 1) % step == 0:
            inter = cfg.size("moe_intermediate_size")
            mlp = (linear("gate", h, experts, False)
                   + repeated("experts", experts,
                              lambda e: gated_mlp(h, inter)))
        else:
            mlp = gated_mlp(h, cfg.size("intermediate_size"))
        return (attn + scoped("mlp", mlp)
                + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, layer)


def random_config(rng):
    """A small Qwen3 config (head_dim apart from the width, as Qwen3
    publishes it)."""
    config = decoder_shape(rng, "qwen3", head_dim="explicit")
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    return common_head(rng, config, QWEN3)


def random_moe_config(rng):
    """A small Qwen3-MoE config: experts (or none), a sparse step, dense
    layers listed, head_dim given or derived."""
    config = decoder_shape(rng, "qwen3_moe")
    layers = config["num_hidden_layers"] = rng.randint(1, 4)
    config.update(moe_intermediate_size=rng.randint(1, 20),
                  num_experts=rng.choice([0, 1, 2, 4, 6]),
                  num_experts_per_tok=1,
                  decoder_sparse_step=rng.randint(1, 3))
    maybe(rng, config, "mlp_only_layers",
          rng.sample(range(layers), rng.randint(0, layers)))
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    return common_head(rng, config, QWEN3_MOE)


QWEN3 = Family("qwen3", ("Qwen3ForCausalLM", "Qwen3Model"), _DEFAULTS,
               "hidden_size", _qwen3)
QWEN3_MOE = Family("qwen3_moe", ("Qwen3MoeForCausalLM", "Qwen3MoeModel"),
                   _MOE_DEFAULTS, "hidden_size", _qwen3_moe)
