"""The parts LLaMA and its descendants share: grouped-query attention, the
gated MLP, and the decoder stack with its optional language-model head."""

from .hf_config import divisible
from .layers import (embedding, linear, repeated, rms_norm, scoped,
                     with_head)


def head_dims(cfg, h):
    """(heads, kv_heads, head_dim): num_key_value_heads defaults to the
    heads and must divide them; head_dim defaults to hidden_size / heads."""
    heads = cfg.size("num_attention_heads")
    kv_heads = cfg.optional_size("num_key_value_heads") or heads
    divisible(heads, kv_heads, "num_attention_heads / num_key_value_heads")
    head_dim = cfg.optional_size("head_dim") or divisible(
        h, heads, "hidden_size / num_attention_heads")
    return heads, kv_heads, head_dim


def attention(cfg, h, qkv_bias=False, o_bias=False):
    """self_attn: q_proj, k_proj, v_proj, o_proj."""
    heads, kv_heads, head_dim = head_dims(cfg, h)
    return scoped("self_attn", linear("q_proj", h, heads * head_dim, qkv_bias)
                  + linear("k_proj", h, kv_heads * head_dim, qkv_bias)
                  + linear("v_proj", h, kv_heads * head_dim, qkv_bias)
                  + linear("o_proj", heads * head_dim, h, o_bias))


def gated_mlp(h, inter, bias=False):
    """An MLP's gate_proj, up_proj, down_proj."""
    return (linear("gate_proj", h, inter, bias)
            + linear("up_proj", h, inter, bias)
            + linear("down_proj", inter, h, bias))


def norms(h, *names):
    """One RMS norm of width h for each name."""
    params = []
    for name in names:
        params += rms_norm(name, h)
    return params


def causal_lm(cfg, architecture, layer):
    """*Model (embed_tokens, layers[i] = layer(i), norm) or *ForCausalLM
    (that as `model`, then lm_head unless tie_word_embeddings ties it to
    embed_tokens)."""
    h = cfg.size("hidden_size")
    vocab = cfg.size("vocab_size")
    model = (embedding("embed_tokens", vocab, h)
             + repeated("layers", cfg.size("num_hidden_layers"), layer)
             + rms_norm("norm", h))
    if not architecture.endswith("ForCausalLM"):
        return model
    return with_head(cfg, model, "model", "lm_head", h, vocab)
