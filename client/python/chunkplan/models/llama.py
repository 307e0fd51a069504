"""LLaMA, Mistral (grouped-query attention) and Mixtral (mixture of
experts): transformers' *Model and *ForCausalLM classes as transformers 4.x
defines them (Mixtral's experts as one module per expert with w1, w2, w3)."""

from chunkplan.models.family import Family
from chunkplan.models.hf_config import divisible
from chunkplan.models.layers import embedding, linear, rms_norm

# The config classes' defaults (LLaMA-7B, Mistral-7B, Mixtral-8x7B).
_LLAMA_DEFAULTS = {
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 11008,
    "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": None, "head_dim": None, "attention_bias": False,
    "mlp_bias": False, "tie_word_embeddings": False,
}
_MISTRAL_DEFAULTS = {
    "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32,
    "num_key_value_heads": 8, "head_dim": None, "tie_word_embeddings": False,
}
_MIXTRAL_DEFAULTS = dict(_MISTRAL_DEFAULTS, num_local_experts=8)


def _attention(cfg, h, bias):
    """self_attn: q_proj, k_proj, v_proj, o_proj; key/value heads may be
    fewer than query heads (grouped-query attention)."""
    heads = cfg.size("num_attention_heads")
    kv_heads = cfg.optional_size("num_key_value_heads") or heads
    divisible(heads, kv_heads, "num_attention_heads / num_key_value_heads")
    head_dim = cfg.optional_size("head_dim") or divisible(
        h, heads, "hidden_size / num_attention_heads")
    return (linear(h, heads * head_dim, bias)
            + linear(h, kv_heads * head_dim, bias) * 2
            + linear(heads * head_dim, h, bias))


def _gated_mlp(h, inter, bias=False):
    """mlp: gate_proj, up_proj, down_proj."""
    return linear(h, inter, bias) * 2 + linear(inter, h, bias)


def _experts(cfg, h, inter):
    """block_sparse_moe: the router `gate`, then each expert's w1, w2, w3."""
    experts = cfg.size("num_local_experts")
    expert = (linear(h, inter, False) + linear(inter, h, False)
              + linear(h, inter, False))
    return linear(h, experts, bias=False) + expert * experts


def _decoder(cfg, architecture, feed_forward):
    """embed_tokens, layers[i] (self_attn, feed-forward, input_layernorm,
    post_attention_layernorm), norm, and lm_head unless tied."""
    h = cfg.size("hidden_size")
    vocab = cfg.size("vocab_size")
    layer = feed_forward(h, cfg.size("intermediate_size"))
    numels = embedding(vocab, h)
    for _ in range(cfg.size("num_hidden_layers")):
        numels += layer + rms_norm(h) + rms_norm(h)
    numels += rms_norm(h)
    if architecture.endswith("ForCausalLM") and not cfg.flag(
            "tie_word_embeddings"):
        numels += [vocab * h]
    return numels


def _llama(cfg, architecture):
    h = cfg.size("hidden_size")
    attention = _attention(cfg, h, cfg.flag("attention_bias"))
    mlp_bias = cfg.flag("mlp_bias")
    return _decoder(cfg, architecture,
                    lambda h, inter: attention + _gated_mlp(h, inter,
                                                            mlp_bias))


def _mistral(cfg, architecture):
    attention = _attention(cfg, cfg.size("hidden_size"), False)
    return _decoder(cfg, architecture,
                    lambda h, inter: attention + _gated_mlp(h, inter))


def _mixtral(cfg, architecture):
    attention = _attention(cfg, cfg.size("hidden_size"), False)
    return _decoder(cfg, architecture,
                    lambda h, inter: attention + _experts(cfg, h, inter))


LLAMA = Family("llama", ("LlamaForCausalLM", "LlamaModel"), _LLAMA_DEFAULTS,
               "hidden_size", _llama)
MISTRAL = Family("mistral", ("MistralForCausalLM", "MistralModel"),
                 _MISTRAL_DEFAULTS, "hidden_size", _mistral)
MIXTRAL = Family("mixtral", ("MixtralForCausalLM", "MixtralModel"),
                 _MIXTRAL_DEFAULTS, "hidden_size", _mixtral)
