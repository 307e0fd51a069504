"""The dense families beside LLaMA as small torch modules, written from
transformers 4.51.3's modeling code (modeling_phi3.py, modeling_cohere.py,
modeling_gemma2.py; read with the search tool), not from chunkplan's C++.
The stack, the loss, checkpointing and the dropout path are
decoder_torch's (LlamaForCausalLM's loop); each family brings its own
layer, rotary table, final norm and head.

Phi-3 (Phi3DecoderLayer): one qkv_proj whose q, k and v are slices (views)
of one output; RoPE over the first int(head_dim * partial_rotary_factor)
dimensions of q and k (apply_rotary_pos_emb: q_rot, q_pass, then
torch.cat); resid_attn_dropout and resid_mlp_dropout (resid_pdrop) on each
branch before its residual add; Phi3MLP's gate_up_proj, whose chunk(2)
halves are views of one output, up * act(gate), down_proj.

Cohere (CohereDecoderLayer): one CohereLayerNorm (fp32, no bias) whose
output both the attention and the MLP read, their outputs added to the
residual together; q_norm and k_norm (CohereLayerNorm over (heads,
head_dim)) where use_qk_norm; RoPE in fp32 with interleaved frequencies;
the final norm a CohereLayerNorm; the logits times logit_scale.

Gemma-2 (modeling_gemma2.py): GemmaRMSNorm four times a layer (input,
post_attention on o_proj's output, pre_feedforward, post_feedforward on
down_proj's output), scores soft-capped in eager (tanh, attn_logit_softcapping)
and scaled by query_pre_attn_scalar, the embedding's normalizer, the logits
soft-capped (final_logit_softcapping).
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


class CohereLayerNorm(nn.Module):
    """CohereLayerNorm: fp32 mean and variance of x - mean (subtracted
    twice), weight.to(fp32) times the result, back to the input's dtype;
    no bias. `shape` is an int or (heads, head_dim) for q_norm, k_norm."""

    def __init__(self, shape, eps=1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(shape, dtype=dt.DTYPE))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        mean = dt.mean_last(hidden_states)
        variance = dt.mean_last((hidden_states - mean).pow(2))
        hidden_states = (hidden_states - mean) * torch.rsqrt(
            variance + self.variance_epsilon)
        hidden_states = self.weight.to(torch.float32) * hidden_states
        return hidden_states.to(input_dtype)


def cohere_rotate_half(x):
    x1 = x[..., ::2]
    x2 = x[..., 1::2]
    return torch.stack([-x2, x1], dim=-1).flatten(-2)


def cohere_rotary(q, k, cos, sin):
    """Cohere's apply_rotary_pos_emb: in fp32, back to q's dtype."""
    dtype = q.dtype
    q = q.float()
    k = k.float()
    cos = cos.unsqueeze(1)
    sin = sin.unsqueeze(1)
    q_embed = (q * cos) + (cohere_rotate_half(q) * sin)
    k_embed = (k * cos) + (cohere_rotate_half(k) * sin)
    return q_embed.to(dtype=dtype), k_embed.to(dtype=dtype)


class CohereAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.head_dim = d = c["head_dim"]
        a, kv, h = c["heads"], c["kv_heads"], c["hidden"]
        self.num_key_value_groups = a // kv
        self.scaling = d**-0.5
        self.attention_dropout = c["attention_dropout"]
        self.q_proj = dt.linear(h, a * d, c["qkv_bias"])
        self.k_proj = dt.linear(h, kv * d, c["qkv_bias"])
        self.v_proj = dt.linear(h, kv * d, c["qkv_bias"])
        self.o_proj = dt.linear(a * d, h, c["qkv_bias"])
        self.use_qk_norm = c["qk_norm"]
        if self.use_qk_norm:
            self.q_norm = CohereLayerNorm((a, d))
            self.k_norm = CohereLayerNorm((kv, d))

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape)
        key_states = self.k_proj(hidden_states).view(hidden_shape)
        value_states = self.v_proj(hidden_states).view(hidden_shape)
        if self.use_qk_norm:
            query_states = self.q_norm(query_states)
            key_states = self.k_norm(key_states)
        query_states = query_states.transpose(1, 2)
        key_states = key_states.transpose(1, 2)
        value_states = value_states.transpose(1, 2)
        cos, sin = position_embeddings
        query_states, key_states = cohere_rotary(query_states, key_states,
                                                 cos, sin)
        attn_output, _ = dt.eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling,
            0.0 if not self.training else self.attention_dropout)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


class CohereDecoderLayer(nn.Module):
    """One norm, then attention and the MLP side by side on its output,
    both added to the residual."""

    def __init__(self, c):
        super().__init__()
        self.self_attn = CohereAttention(c)
        self.mlp = dt.GatedMlp(c)
        self.input_layernorm = CohereLayerNorm(c["hidden"])

    def forward(self, hidden_states, attention_mask, position_ids,
                past_key_value, output_attentions, use_cache, cache_position,
                position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states_attention = self.self_attn(
            hidden_states, position_embeddings, attention_mask)
        hidden_states_mlp = self.mlp(hidden_states)
        hidden_states = residual + hidden_states_attention + hidden_states_mlp
        return (hidden_states,)


class CohereRotaryEmbedding(dt.RotaryEmbedding):
    """CohereRotaryEmbedding: the frequencies interleaved
    (repeat_interleave), not concatenated."""

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float()
                 @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.repeat_interleave(freqs, 2, dim=-1)
        return emb.cos().to(dtype=x.dtype), emb.sin().to(dtype=x.dtype)


def softcap_eager_attention(module, query, key, value, attention_mask,
                            scaling, dropout_p, softcap):
    """Gemma-2's eager_attention_forward: the scores soft-capped,
    softcap * tanh(scores / softcap), before the mask and the fp32
    softmax."""
    key_states = dt.repeat_kv(key, module.num_key_value_groups)
    value_states = dt.repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if softcap is not None:
        attn_weights = attn_weights / softcap
        attn_weights = torch.tanh(attn_weights)
        attn_weights = attn_weights * softcap
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, :key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = torch.nn.functional.softmax(
        attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = dt.dropout(attn_weights, dropout_p, module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    return attn_output.transpose(1, 2).contiguous()


class Gemma2Attention(dt.LlamaAttention):
    """Gemma2Attention: LLaMA's projections, scaling by
    query_pre_attn_scalar, soft-capped scores (attn_logit_softcapping)."""

    def __init__(self, c):
        super().__init__(dict(c, qk_norm=False))
        self.scaling = c["query_pre_attn_scalar"]**-0.5
        self.softcap = c.get("attn_softcap")

    def qk_norms(self, query_states, key_states):
        """None in Gemma-2 (Gemma-3's q_norm and k_norm go here)."""
        return query_states, key_states

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(
            1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(
            1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(
            1, 2)
        query_states, key_states = self.qk_norms(query_states, key_states)
        cos, sin = position_embeddings
        query_states, key_states = dt.apply_rotary_pos_emb(
            query_states, key_states, cos, sin)
        attn_output = softcap_eager_attention(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling,
            0.0 if not self.training else self.attention_dropout,
            self.softcap)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


class Gemma2DecoderLayer(nn.Module):
    """Four GemmaRMSNorms: input, post_attention (of o_proj's output),
    pre_feedforward and post_feedforward (of down_proj's output). (The
    sliding-window layers change the eager mask's values only.)"""

    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.self_attn = Gemma2Attention(c)
        self.mlp = dt.GatedMlp(c)
        self.input_layernorm = dt.GemmaRMSNorm(h)
        self.post_attention_layernorm = dt.GemmaRMSNorm(h)
        self.pre_feedforward_layernorm = dt.GemmaRMSNorm(h)
        self.post_feedforward_layernorm = dt.GemmaRMSNorm(h)

    def forward(self, hidden_states, attention_mask, position_ids,
                past_key_value, output_attentions, use_cache, cache_position,
                position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings,
                                       attention_mask)
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.pre_feedforward_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = self.post_feedforward_layernorm(hidden_states)
        hidden_states = residual + hidden_states
        return (hidden_states,)


class SoftcappedHead(nn.Module):
    """Gemma2ForCausalLM's head: logits / cap, tanh, * cap
    (final_logit_softcapping), before the loss."""

    def __init__(self, head, cap):
        super().__init__()
        self.head = head
        self.cap = cap

    def forward(self, x):
        logits = self.head(x) / self.cap
        return torch.tanh(logits) * self.cap


LAYERS = {"phi3": Phi3DecoderLayer, "cohere": CohereDecoderLayer,
          "gemma2": Gemma2DecoderLayer}
# The final norm of each family's model (LlamaRMSNorm where not listed).
FINAL_NORMS = {"cohere": CohereLayerNorm}
ROTARY = {"cohere": CohereRotaryEmbedding}


class DenseForCausalLM(dt.LlamaForCausalLM):
    """LlamaForCausalLM's loop (Phi3Model's is the same: embed_tokens, one
    rotary table for every layer, the layers, norm, lm_head, the loss) with
    the family's layer and a rotary table c["rotary_dim"] wide."""

    def __init__(self, c):
        super().__init__(dict(c, layers=0))
        self.c = c
        self.layers = nn.ModuleList(
            [LAYERS[c["family"]](c) for _ in range(c["layers"])])
        self.rotary_emb = ROTARY.get(c["family"], dt.RotaryEmbedding)(
            c.get("rotary_dim") or c["head_dim"])
        if c["family"] in FINAL_NORMS:
            self.norm = FINAL_NORMS[c["family"]](c["hidden"])
        if c.get("logit_scale"):
            self.lm_head = ScaledHead(self.lm_head, c["logit_scale"])
        if c.get("final_softcap"):
            self.lm_head = SoftcappedHead(self.lm_head, c["final_softcap"])


class ScaledHead(nn.Module):
    """CohereForCausalLM's head: logits = lm_head(x) * logit_scale (a
    Python float), before the loss. Wraps lm_head, tied or not."""

    def __init__(self, head, scale):
        super().__init__()
        self.head = head
        self.scale = scale

    def forward(self, x):
        return self.head(x) * self.scale


def build(c):
    return DenseForCausalLM(c)
