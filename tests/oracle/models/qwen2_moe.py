"""Qwen2-MoE and Qwen1.5-MoE (model_type "qwen2_moe": transformers'
Qwen2MoeModel and Qwen2MoeForCausalLM as transformers 4.x defines them, one
module per expert): routed experts beside a shared expert and its gate, in
the layers that mlp_only_layers and decoder_sparse_step make sparse."""

from .decoder import attention, causal_lm, gated_mlp, norms
from .family import Family
from .layers import linear, repeated, scoped
from .random_config import common_head, decoder_shape, maybe

# Qwen2MoeConfig's defaults (Qwen1.5-MoE-A2.7B's shape).
_DEFAULTS = {
    "vocab_size": 151936, "hidden_size": 2048, "intermediate_size": 5632,
    "num_hidden_layers": 24, "num_attention_heads": 16,
    "num_key_value_heads": 16, "head_dim": None, "qkv_bias": True,
    "decoder_sparse_step": 1, "moe_intermediate_size": 1408,
    "shared_expert_intermediate_size": 5632, "num_experts": 60,
    "mlp_only_layers": None, "tie_word_embeddings": False,
}


def _sparse(cfg, h):
    """Qwen2MoeSparseMoeBlock: gate, experts[e], shared_expert,
    shared_expert_gate."""
    experts = cfg.count("num_experts")
    inter = cfg.size("moe_intermediate_size")
    return (linear("gate", h, experts, False)
            + repeated("experts", experts, lambda e: gated_mlp(h, inter))
            + scoped("shared_expert", gated_mlp(
                h, cfg.size("shared_expert_intermediate_size")))
            + linear("shared_expert_gate", h, 1, False))


def _params(cfg, architecture):
    h = cfg.size("hidden_size")
    attn = attention(cfg, h, qkv_bias=cfg.flag("qkv_bias"))
    dense_only = cfg.int_list("mlp_only_layers")
    experts = cfg.count("num_experts")
    # Sizes read only where a layer needs them, as the modules do.
    step = cfg.size("decoder_sparse_step") if experts > 0 else None

    def layer(i):
        # Qwen2MoeDecoderLayer: self_attn, mlp (sparse where layer i is
        # not in mlp_only_layers, there are experts, and (i + 1) is a
        # multiple of decoder_sparse_step; else a dense MLP of
        # intermediate_size), input_layernorm, post_attention_layernorm.
        if i not in dense_only and experts > 0 and (i + 1) % step == 0:
            mlp = _sparse(cfg, h)
        else:
            mlp = gated_mlp(h, cfg.size("intermediate_size"))
        return (attn + scoped("mlp", mlp)
                + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, layer)


def random_config(rng):
    """A small Qwen2-MoE config: experts (or none), a sparse step, dense
    layers listed."""
    config = decoder_shape(rng, "qwen2_moe")
    layers = config["num_hidden_layers"] = rng.randint(1, 4)
    config.update(moe_intermediate_size=rng.randint(1, 20),
                  shared_expert_intermediate_size=rng.randint(1, 40),
                  num_experts=rng.choice([0, 1, 2, 4, 6]),
                  num_experts_per_tok=1,
                  decoder_sparse_step=rng.randint(1, 3))
    maybe(rng, config, "mlp_only_layers",
          rng.sample(range(layers), rng.randint(0, layers)))
    maybe(rng, config, "qkv_bias", rng.random() < 0.5)
    return common_head(rng, config, FAMILY)


FAMILY = Family("qwen2_moe", ("Qwen2MoeForCausalLM", "Qwen2MoeModel"),
                _DEFAULTS, "hidden_size", _params)
