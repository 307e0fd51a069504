"""The dense families beside LLaMA as small torch modules, written from
transformers 4.51.3's modeling code (modeling_phi3.py; read with the search
tool), not from chunkplan's C++. The stack, the loss, checkpointing and the
dropout path are decoder_torch's (LlamaForCausalLM's loop); each family
brings its own layer and rotary width.

Phi-3 (Phi3DecoderLayer): one qkv_proj whose q, k and v are slices (views)
of one output; RoPE over the first int(head_dim * partial_rotary_factor)
dimensions of q and k (apply_rotary_pos_emb: q_rot, q_pass, then
torch.cat); resid_attn_dropout and resid_mlp_dropout (resid_pdrop) on each
branch before its residual add; Phi3MLP's gate_up_proj, whose chunk(2)
halves are views of one output, up * act(gate), down_proj.
"""

import torch
from torch import nn

import decoder_torch as dt


def apply_partial_rotary(q, k, cos, sin):
    """Phi-3's apply_rotary_pos_emb: RoPE on the first cos.shape[-1]
    dimensions, the rest passed through, joined by torch.cat."""
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    rotary_dim = cos.shape[-1]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    k_rot, k_pass = k[..., :rotary_dim], k[..., rotary_dim:]
    q_embed = torch.cat([(q_rot * cos) + (dt.rotate_half(q_rot) * sin),
                         q_pass], dim=-1)
    k_embed = torch.cat([(k_rot * cos) + (dt.rotate_half(k_rot) * sin),
                         k_pass], dim=-1)
    return q_embed, k_embed


class Phi3Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.head_dim = d = c["head_dim"]
        self.heads, self.kv_heads = c["heads"], c["kv_heads"]
        self.num_key_value_groups = self.heads // self.kv_heads
        self.scaling = d**-0.5
        self.attention_dropout = c["attention_dropout"]
        op_size = self.heads * d + 2 * self.kv_heads * d
        self.o_proj = dt.linear(self.heads * d, c["hidden"], False)
        self.qkv_proj = dt.linear(c["hidden"], op_size, False)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        qkv = self.qkv_proj(hidden_states)
        query_pos = self.heads * self.head_dim
        kv_width = self.kv_heads * self.head_dim
        query_states = qkv[..., :query_pos]
        key_states = qkv[..., query_pos:query_pos + kv_width]
        value_states = qkv[..., query_pos + kv_width:]
        query_states = query_states.view(hidden_shape).transpose(1, 2)
        key_states = key_states.view(hidden_shape).transpose(1, 2)
        value_states = value_states.view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_partial_rotary(
            query_states, key_states, cos, sin)
        attn_output, _ = dt.eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling,
            0.0 if not self.training else self.attention_dropout)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


class Phi3MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, i = c["hidden"], c["intermediate"]
        self.gate_up_proj = dt.linear(h, 2 * i, False)
        self.down_proj = dt.linear(i, h, False)
        self.activation_fn = dt.ACT[c["act"]]

    def forward(self, hidden_states):
        up_states = self.gate_up_proj(hidden_states)
        gate, up_states = up_states.chunk(2, dim=-1)
        up_states = up_states * self.activation_fn(gate)
        return self.down_proj(up_states)


class Phi3DecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self_attn = Phi3Attention(c)
        self.mlp = Phi3MLP(c)
        self.input_layernorm = dt.LlamaRMSNorm(c["hidden"])
        self.post_attention_layernorm = dt.LlamaRMSNorm(c["hidden"])
        self.resid_pdrop = c["resid_dropout"]

    def forward(self, hidden_states, attention_mask, position_ids,
                past_key_value, output_attentions, use_cache, cache_position,
                position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings,
                                       attention_mask)
        hidden_states = residual + dt.dropout(hidden_states, self.resid_pdrop,
                                              self.training)
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + dt.dropout(hidden_states, self.resid_pdrop,
                                              self.training)
        return (hidden_states,)


LAYERS = {"phi3": Phi3DecoderLayer}


class DenseForCausalLM(dt.LlamaForCausalLM):
    """LlamaForCausalLM's loop (Phi3Model's is the same: embed_tokens, one
    rotary table for every layer, the layers, norm, lm_head, the loss) with
    the family's layer and a rotary table c["rotary_dim"] wide."""

    def __init__(self, c):
        super().__init__(dict(c, layers=0))
        self.c = c
        self.layers = nn.ModuleList(
            [LAYERS[c["family"]](c) for _ in range(c["layers"])])
        self.rotary_emb = dt.RotaryEmbedding(c.get("rotary_dim")
                                             or c["head_dim"])


def build(c):
    return DenseForCausalLM(c)
