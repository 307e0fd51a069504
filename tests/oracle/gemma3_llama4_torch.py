"""Gemma-3's text model as a small torch module, written from transformers
4.51.3's modeling_gemma3.py (Gemma3ForCausalLM, Gemma3TextModel; read with
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
        for layer in self.layers:
            args = (hidden_states, position_embeddings_global,
                    position_embeddings_local, causal_mask, position_ids,
                    None, False, False, cache_position, last_cache_position)
            if self.gradient_checkpointing:
                out = torch.utils.checkpoint.checkpoint(
                    layer.__call__, *args, use_reentrant=True,
                    preserve_rng_state=dt.PRESERVE_RNG_STATE)
            else:
                out = layer(*args)
            hidden_states = out[0]
        return self.norm(hidden_states)


FAMILIES = {"gemma3_text": Gemma3ForCausalLM}


def build(c):
    return FAMILIES[c["family"]](c)
