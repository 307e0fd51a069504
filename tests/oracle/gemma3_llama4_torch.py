"""Gemma-3's and Llama 4's text models as small torch modules, written from
transformers 4.51.3's modeling_gemma3.py and modeling_llama4.py (Gemma3ForCausalLM, Gemma3TextModel; read with
the search tool), not from chunkplan's C++. The loss, checkpointing and
the dropout path are decoder_torch's; the norms, the MLP and Gemma-2's
eager attention are dense_torch's / decoder_torch's.

Gemma-3 (Gemma3DecoderLayer): Gemma-2's four GemmaRMSNorms; q_norm and
k_norm (GemmaRMSNorm over head_dim) on the transposed q and k, before
RoPE; scores scaled by query_pre_attn_scalar and *not* soft-capped
(Gemma3Attention passes no softcap to the attention function, whatever
attn_logit_softcapping says); layer i slides where (i + 1) %
sliding_window_pattern != 0: it builds its own mask (torch.tril of a bool
ones_like, torch.where) and takes the local rotary table
(rope_local_base_freq), the others the global one; Gemma3TextModel
computes both tables and passes both to every layer (under checkpointing,
both are arguments of every layer); Gemma3TextScaledWordEmbedding
multiplies by its embed_scale buffer; the logits soft-capped where
final_logit_softcapping is not null.
"""

import torch
import torch.utils.checkpoint
from torch import nn

import decoder_torch as dt
import dense_torch


class Gemma3Attention(dense_torch.Gemma2Attention):
    """Gemma3Attention: Gemma-2's projections, query_pre_attn_scalar and
    RoPE, with q_norm(q) and k_norm(k) on the (b, heads, s, d) views before
    RoPE and no soft-capping (the eager call takes no softcap). (Its
    `attention_mask.to(query_states)` is a no-op in the model's dtype.)"""

    def __init__(self, c):
        super().__init__(dict(c, attn_softcap=None))
        self.q_norm = dt.GemmaRMSNorm(c["head_dim"])
        self.k_norm = dt.GemmaRMSNorm(c["head_dim"])

    def qk_norms(self, query_states, key_states):
        return self.q_norm(query_states), self.k_norm(key_states)


def run_layers(model, hidden_states, rest):
    """The model's layer loop: each layer on (hidden_states, *rest), under
    torch.utils.checkpoint (reentrant, as transformers 4.51.3's
    _gradient_checkpointing_func) where the model checkpoints."""
    for layer in model.layers:
        args = (hidden_states, *rest)
        if model.gradient_checkpointing:
            out = torch.utils.checkpoint.checkpoint(
                layer.__call__, *args, use_reentrant=True,
                preserve_rng_state=dt.PRESERVE_RNG_STATE)
        else:
            out = layer(*args)
        hidden_states = out[0]
    return hidden_states


class Gemma3DecoderLayer(dense_torch.Gemma2DecoderLayer):
    """Gemma-2's four norms around Gemma3Attention; a sliding layer's own
    mask and the local rotary table."""

    def __init__(self, c, layer_idx):
        super().__init__(c)
        self.self_attn = Gemma3Attention(c)
        self.is_sliding = bool((layer_idx + 1) % c["sliding_window_pattern"])
        self.sliding_window = c["sliding_window"]

    def forward(self, hidden_states, position_embeddings_global,
                position_embeddings_local, attention_mask, position_ids,
                past_key_value, output_attentions, use_cache, cache_position,
                last_cache_position):
        if self.is_sliding and attention_mask is not None:
            effective_seq_len = max(cache_position.shape[0],
                                    self.sliding_window)
            min_dtype = torch.finfo(attention_mask.dtype).min
            sliding_window_mask = torch.tril(
                torch.ones_like(attention_mask, dtype=torch.bool),
                diagonal=-self.sliding_window)
            attention_mask = torch.where(
                sliding_window_mask,
                torch.tensor(min_dtype, dtype=attention_mask.dtype),
                attention_mask)
            offset = max(0, last_cache_position - effective_seq_len)
            attention_mask = attention_mask[:, :, :,
                                            offset:offset + effective_seq_len]
        position_embeddings = (position_embeddings_local if self.is_sliding
                               else position_embeddings_global)
        # (Gemma-2's norms, attention and MLP)
        return super().forward(hidden_states, attention_mask, position_ids,
                               past_key_value, output_attentions, use_cache,
                               cache_position, position_embeddings)


class Gemma3TextScaledWordEmbedding(nn.Embedding):
    """The embedding times its embed_scale buffer (hidden_size**0.5, in the
    model's dtype: .to(weight.dtype) returns the buffer itself)."""

    def __init__(self, vocab, hidden, embed_scale):
        super().__init__(vocab, hidden, dtype=dt.DTYPE)
        self.register_buffer("embed_scale",
                             torch.tensor(embed_scale, dtype=dt.DTYPE),
                             persistent=False)

    def forward(self, input_ids):
        return super().forward(input_ids) * self.embed_scale.to(
            self.weight.dtype)


class Gemma3ForCausalLM(dense_torch.DenseForCausalLM):
    """Gemma3TextModel's loop under Gemma3ForCausalLM's head and loss."""

    def __init__(self, c):
        super().__init__(dict(c, family="gemma2", layers=0,
                              embed_scale=False))
        self.c = c
        h = c["hidden"]
        self.embed_tokens = Gemma3TextScaledWordEmbedding(c["vocab"], h,
                                                          h**0.5)
        if c["tied"]:
            head = self.lm_head.head if c.get("final_softcap") else \
                self.lm_head
            head.weight = self.embed_tokens.weight
        self.layers = nn.ModuleList(
            [Gemma3DecoderLayer(c, i) for i in range(c["layers"])])
        self.rotary_emb = dt.RotaryEmbedding(c["head_dim"], base=1e6)
        self.rotary_emb_local = dt.RotaryEmbedding(c["head_dim"],
                                                   base=10000.0)

    def hidden(self, input_ids, attention_mask):
        inputs_embeds = self.embed_tokens(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        last_cache_position = attention_mask.shape[-1]
        with torch.no_grad():
            causal_mask = self.causal_mask(attention_mask, inputs_embeds,
                                           cache_position)
        hidden_states = inputs_embeds
        position_embeddings_global = self.rotary_emb(hidden_states,
                                                     position_ids)
        position_embeddings_local = self.rotary_emb_local(hidden_states,
                                                          position_ids)
        hidden_states = run_layers(
            self, hidden_states,
            (position_embeddings_global, position_embeddings_local,
             causal_mask, position_ids, None, False, False, cache_position,
             last_cache_position))
        return self.norm(hidden_states)


# Llama 4 (Llama4ForCausalLM, Llama4TextModel; modeling_llama4.py as of
# 4.51.x, the copy with `use_rope = int((layer_idx + 1) % 4 != 0)`,
# `add_start_docstrings` and `_update_causal_mask` returning a chunked mask:
# later copies read `config.no_rope_layers` and drop the eager softmax's
# fp32 cast; this module follows the 4.51-era copy, whose eager softmax runs
# on `attn_weights.float()` and casts back to the query's dtype).


class Llama4TextL2Norm(nn.Module):
    """Llama4TextL2Norm: x * rsqrt(mean(x^2) + eps) in fp32, no weight."""

    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        return (x32 * torch.rsqrt(dt.mean_last(x32.pow(2)) +
                                  self.eps)).type_as(x)


class Llama4TextRMSNorm(dt.LlamaRMSNorm):
    """Llama4TextRMSNorm: `_norm(x.float()).type_as(x) * weight` (the same
    operations, and saves, as LlamaRMSNorm's)."""

    def forward(self, x):
        x32 = x.float()
        out = x32 * torch.rsqrt(dt.mean_last(x32.pow(2)) +
                                self.variance_epsilon)
        return out.type_as(x) * self.weight


def llama4_apply_rotary_emb(xq, xk, freqs_cis):
    """apply_rotary_emb: q and k upcast, viewed as complex pairs, times the
    complex fp32 table (its product saves the table only: q and k do not
    need it back), viewed as real, cast back."""
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    xq_out = torch.view_as_real(xq_ * freqs_cis[:, :, None, :]).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis[:, :, None, :]).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Llama4TextAttention(nn.Module):
    """Llama4TextAttention: q/k/v/o projections (attention_bias), complex
    RoPE on layers where (i + 1) % 4 != 0, the L2 qk_norm after RoPE on
    those layers where use_qk_norm, temperature tuning (an fp32 (1, s, 1, 1)
    scale from cache_position, expanded over the batch) on the others where
    attn_temperature_tuning, then the eager attention (`/ sqrt(head_dim)`
    and `softmax(x.float()).to(dtype)`: the same saves as
    decoder_torch.eager_attention_forward's `* scaling` and fp32 softmax)."""

    def __init__(self, c, layer_idx):
        super().__init__()
        m = c["llama4"]
        self.head_dim = c["head_dim"]
        self.num_key_value_groups = c["heads"] // c["kv_heads"]
        self.scaling = self.head_dim**-0.5
        self.attn_scale = m["attn_scale"]
        self.floor_scale = m["floor_scale"]
        self.attn_temperature_tuning = m["attn_temperature_tuning"]
        self.attention_dropout = c["attention_dropout"]
        self.use_rope = int((layer_idx + 1) % 4 != 0)
        h, d, bias = c["hidden"], self.head_dim, c["qkv_bias"]
        self.q_proj = dt.linear(h, c["heads"] * d, bias)
        self.k_proj = dt.linear(h, c["kv_heads"] * d, bias)
        self.v_proj = dt.linear(h, c["kv_heads"] * d, bias)
        self.o_proj = dt.linear(c["heads"] * d, h, bias)
        self.qk_norm = (Llama4TextL2Norm(1e-5)
                        if m["use_qk_norm"] and self.use_rope else None)

    def forward(self, hidden_states, position_embeddings, attention_mask,
                cache_position):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        query_states = self.q_proj(hidden_states).view(hidden_shape)
        key_states = self.k_proj(hidden_states).view(*input_shape, -1,
                                                     self.head_dim)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(
            1, 2)
        if self.use_rope:
            query_states, key_states = llama4_apply_rotary_emb(
                query_states, key_states, position_embeddings)
        if self.qk_norm is not None:
            query_states = self.qk_norm(query_states)
            key_states = self.qk_norm(key_states)
        if self.attn_temperature_tuning and not self.use_rope:
            attn_scales = (torch.log(
                torch.floor((cache_position.float() + 1.0) /
                            self.floor_scale) + 1.0) * self.attn_scale + 1.0)
            attn_scales = attn_scales.view((1, input_shape[-1], 1, 1)).expand(
                (*input_shape, 1, 1))
            query_states = (query_states * attn_scales).to(query_states.dtype)
        query_states = query_states.transpose(1, 2)
        key_states = key_states.transpose(1, 2)
        attn_output, _ = dt.eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling,
            0.0 if not self.training else self.attention_dropout)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


class Llama4TextExperts(nn.Module):
    """Llama4TextExperts: two fused 3-D weights; every expert's bmm over
    all E x T gathered rows."""

    def __init__(self, c):
        super().__init__()
        m = c["llama4"]
        self.num_experts, self.hidden_size = m["experts"], c["hidden"]
        self.gate_up_proj = nn.Parameter(
            0.02 * torch.randn(m["experts"], c["hidden"], 2 * m["inter"],
                               dtype=dt.DTYPE))
        self.down_proj = nn.Parameter(
            0.02 * torch.randn(m["experts"], m["inter"], c["hidden"],
                               dtype=dt.DTYPE))
        self.act_fn = dt.ACT[c["act"]]

    def forward(self, hidden_states):
        hidden_states = hidden_states.view(self.num_experts, -1,
                                           self.hidden_size)
        gate_up = torch.bmm(hidden_states, self.gate_up_proj)
        gate, up = gate_up.chunk(2, dim=-1)
        next_states = torch.bmm((up * self.act_fn(gate)), self.down_proj)
        return next_states.view(-1, self.hidden_size)


class Llama4TextMoe(nn.Module):
    """Llama4TextMoe (4.51.x): the router's logits, top-k, the others
    -inf (scatter_), a sigmoid in fp32 cast back; every token gathered for
    every expert (an (E*T, h) int64 index), scaled by its score, the
    experts on all E*T rows, the shared expert on every token and the
    experts' rows scatter_add_'ed into its output. Routing changes values
    only: every expert takes every token."""

    def __init__(self, c):
        super().__init__()
        m = c["llama4"]
        self.top_k, self.hidden_dim = m["top_k"], c["hidden"]
        self.num_experts = m["experts"]
        self.experts = Llama4TextExperts(c)
        self.router = dt.linear(c["hidden"], m["experts"], False)
        self.shared_expert = dt.GatedMlp(
            dict(c, intermediate=m["inter"], mlp_bias=False))

    def forward(self, hidden_states):
        batch, seq_len, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, self.hidden_dim)
        router_logits = self.router(hidden_states).transpose(0, 1)
        tokens_per_expert = batch * seq_len
        router_top_value, router_indices = torch.topk(
            router_logits.transpose(0, 1), self.top_k, dim=1)
        router_scores = (torch.full_like(
            router_logits.transpose(0, 1), float("-inf")).scatter_(
                1, router_indices, router_top_value).transpose(0, 1))
        router_indices = torch.arange(tokens_per_expert).view(1, -1).expand(
            router_scores.size(0), -1)
        router_scores = torch.sigmoid(router_scores.float()).to(
            hidden_states.dtype)
        router_indices = router_indices.reshape(-1, 1).expand(-1, hidden_dim)
        routed_in = torch.gather(input=hidden_states, dim=0,
                                 index=router_indices)
        routed_in = routed_in * router_scores.reshape(-1, 1)
        routed_out = self.experts(routed_in)
        out = self.shared_expert(hidden_states)
        out.scatter_add_(dim=0, index=router_indices,
                         src=routed_out.view(-1, hidden_dim))
        return out, router_scores


class Llama4TextDecoderLayer(nn.Module):
    """Llama4TextDecoderLayer: input_layernorm, the attention, the residual;
    post_attention_layernorm, the MoE block on the layers in moe_layers
    (else Llama4TextMLP of intermediate_size_mlp), the residual."""

    def __init__(self, c, layer_idx):
        super().__init__()
        m = c["llama4"]
        self.self_attn = Llama4TextAttention(c, layer_idx)
        self.is_moe_layer = layer_idx in m["moe_layers"]
        self.feed_forward = (Llama4TextMoe(c) if self.is_moe_layer else
                             dt.GatedMlp(dict(c, intermediate=m["inter_mlp"],
                                              mlp_bias=False)))
        self.input_layernorm = Llama4TextRMSNorm(c["hidden"], eps=1e-5)
        self.post_attention_layernorm = Llama4TextRMSNorm(c["hidden"],
                                                          eps=1e-5)

    def forward(self, hidden_states, attention_mask, chunk_causal_mask,
                position_ids, past_key_value, output_attentions,
                output_router_logits, use_cache, cache_position,
                position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        if self.self_attn.use_rope and chunk_causal_mask is not None:
            attention_mask = chunk_causal_mask
        attention_states = self.self_attn(hidden_states, position_embeddings,
                                          attention_mask, cache_position)
        hidden_states = residual + attention_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.feed_forward(hidden_states)
        if self.is_moe_layer:
            hidden_states, _ = hidden_states
        hidden_states = residual + hidden_states.view(residual.shape)
        return (hidden_states,)


class Llama4TextRotaryEmbedding(nn.Module):
    """Llama4TextRotaryEmbedding (rope_scaling null: attention_scaling 1):
    the (b, s, d/2) complex64 table, computed without grad."""

    def __init__(self, dim, base=500000.0):
        super().__init__()
        inv_freq = 1.0 / (base**(torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        freqs_cis = torch.polar(torch.ones_like(freqs), freqs)
        return freqs_cis * 1.0


class Llama4ForCausalLM(dt.LlamaForCausalLM):
    """Llama4TextModel's loop under Llama4ForCausalLM's head and loss. The
    chunked mask (attention_chunk_size) is taken as None: at a sequence
    within the chunk it masks what the causal mask does."""

    def __init__(self, c):
        super().__init__(dict(c, family="llama", layers=0, moe=None,
                              embed_scale=False, norm="rms"))
        self.c = c
        self.layers = nn.ModuleList(
            [Llama4TextDecoderLayer(c, i) for i in range(c["layers"])])
        self.norm = Llama4TextRMSNorm(c["hidden"], eps=1e-5)
        self.rotary_emb = Llama4TextRotaryEmbedding(c["head_dim"])

    def hidden(self, input_ids, attention_mask):
        inputs_embeds = self.embed_tokens(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        with torch.no_grad():
            causal_mask = self.causal_mask(attention_mask, inputs_embeds,
                                           cache_position)
        hidden_states = inputs_embeds
        freq_cis = self.rotary_emb(hidden_states, position_ids)
        hidden_states = run_layers(
            self, hidden_states,
            (causal_mask, None, position_ids, None, False, False, False,
             cache_position, freq_cis))
        return self.norm(hidden_states)


FAMILIES = {"gemma3_text": Gemma3ForCausalLM,
            "llama4_text": Llama4ForCausalLM}


def build(c):
    return FAMILIES[c["family"]](c)
