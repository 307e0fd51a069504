"""DeepSeek-V2 as a small torch module, written from the model's published
remote code, modeling_deepseek.py of deepseek-ai/DeepSeek-V2 and -V2-Lite
(transformers 4.51.3 has no DeepSeek-V2), read with the search tool in
DeepSeek's own copy (deepseek-ai/ESFT, deepseek/modeling_deepseek.py at
4bfa99486b03a3b646635b32a3aad0552763d925: DeepseekV2RMSNorm,
DeepseekV2RotaryEmbedding, apply_rotary_pos_emb, DeepseekV2MLP, MoEGate,
AddAuxiliaryLoss, DeepseekV2Attention, DeepseekV2DecoderLayer,
DeepseekV2Model, DeepseekV2ForCausalLM), its training branch of
DeepseekV2MoE.forward as InternLM/xtuner's copy has it
(xtuner/model/transformers_models/deepseek_v2/modeling_deepseek.py at
0fe3ea1cc601cac9f35b2e10bfc23b993e43492d; ESFT rewrote that branch for
expert parallelism); not from chunkplan's C++.

Where V2's remote code differs from transformers 4.51.3's DeepSeek-V3
(deepseek_torch.py), modelled here:
  * each attention builds its own RoPE tables (DeepseekV2RotaryEmbedding's
    bf16 cos_cached / sin_cached, built in the first forward at the input's
    dtype), gathered by position_ids in every layer: (1, s, rope) cos and
    sin kept by each layer's RoPE multiplications, no model-level table;
  * q and k assembled by slice assignment into new_empty tensors (the same
    bytes as V3's cat); the same de-interleave of q_pe and k_pe, the same
    fp32 eager softmax, the same yarn softmax_scale (a Python float);
  * MoEGate: fp32 logits, softmax scores (fp32), top-k "greedy" or
    "group_limited_greedy" (the groups' max, top topk_group of them, the
    rest masked), the weights renormalized where top_k > 1 and
    norm_topk_prob, else times routed_scaling_factor; with
    aux_loss_alpha > 0 the auxiliary loss, per sequence (seq_aux) or over
    the batch, fed back by AddAuxiliaryLoss (the remote code calls it in
    every training forward: aux_loss_alpha 0 fails there, loss None);
  * DeepseekV2MoE's training branch: every token repeat_interleave'd k
    times, every expert run on hidden_states[flat_topk_idx == i] (an expert
    no token chose on an empty batch) and its output written into y by a
    bool-mask index_put_, the weighted sum in fp32 cast back, the shared
    experts on every token;
  * the MoE layers every moe_layer_freq-th from first_k_dense_replace (the
    measurement places the kinds as decoder_torch's MoE families do);
  * DeepseekV2ForCausalLM's loss: the logits cast to fp32 (the output
    holds them), shifted by a contiguous copy, CrossEntropyLoss over
    b (s - 1) rows.

repeat_interleave with an int is written as torch >= 2.1 runs it
(aten/src/ATen/native/Repeat.cpp since pytorch/pytorch#102570: unsqueeze,
expand, clone, flatten; clone keeps nothing for backward); torch 1.13
routes it through index_select, whose IndexSelectBackward0 keeps the
int64 index (derivatives.yaml index_select: "self:
index_select_backward_symint(grad, self.sym_sizes(), dim, index)").

Config `c` as deepseek_torch's, plus c["moe"]["v2"]: {"groups": n_group
(0: greedy), "topk_groups": topk_group, "seq_aux": bool,
"routed_scaling_factor"}.
"""

import torch
import torch.nn.functional as F
from torch import nn

import decoder_torch
import deepseek_torch
from decoder_torch import DTYPE


def repeat_interleave(x, repeats):
    """x.repeat_interleave(repeats, dim=0) as torch >= 2.1 computes it."""
    return x.unsqueeze(1).expand(x.shape[0], repeats,
                                 *x.shape[1:]).clone().flatten(0, 1)


class DeepseekV2RotaryEmbedding(nn.Module):
    """The tables built at the first forward's length and dtype (the
    remote code's __init__ leaves max_seq_len_cached None)."""

    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.dim = dim
        inv_freq = 1.0 / (base**(torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self.max_seq_len_cached = None

    def _set_cos_sin_cache(self, seq_len, dtype):
        self.max_seq_len_cached = seq_len
        t = torch.arange(seq_len, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos().to(dtype),
                             persistent=False)
        self.register_buffer("sin_cached", emb.sin().to(dtype),
                             persistent=False)

    def forward(self, x, seq_len):
        if self.max_seq_len_cached is None or seq_len > self.max_seq_len_cached:
            self._set_cos_sin_cache(seq_len, x.dtype)
        return (self.cos_cached[:seq_len].to(dtype=x.dtype),
                self.sin_cached[:seq_len].to(dtype=x.dtype))


class DeepseekV2Attention(deepseek_torch.DeepseekV3Attention):
    """The latent attention's projections and norms as V3's; the forward
    the remote code's (eager)."""

    def __init__(self, c):
        super().__init__(c)
        self.rotary_emb = DeepseekV2RotaryEmbedding(self.qk_rope_head_dim)

    def forward(self, hidden_states, attention_mask, position_ids):
        bsz, q_len, _ = hidden_states.size()
        a, nope, rope = (self.num_heads, self.qk_nope_head_dim,
                         self.qk_rope_head_dim)
        if self.q_lora_rank is None:
            q = self.q_proj(hidden_states)
        else:
            q = self.q_b_proj(self.q_a_layernorm(self.q_a_proj(hidden_states)))
        q = q.view(bsz, q_len, a, self.qk_head_dim).transpose(1, 2)
        q_nope, q_pe = torch.split(q, [nope, rope], dim=-1)
        compressed_kv = self.kv_a_proj_with_mqa(hidden_states)
        compressed_kv, k_pe = torch.split(
            compressed_kv, [self.kv_lora_rank, rope], dim=-1)
        k_pe = k_pe.view(bsz, q_len, 1, rope).transpose(1, 2)
        kv = (self.kv_b_proj(self.kv_a_layernorm(compressed_kv))
              .view(bsz, q_len, a, nope + self.v_head_dim).transpose(1, 2))
        k_nope, value_states = torch.split(kv, [nope, self.v_head_dim],
                                           dim=-1)
        cos, sin = self.rotary_emb(value_states, seq_len=q_len)
        # apply_rotary_pos_emb: cos[position_ids], then V3's de-interleave
        q_pe, k_pe = deepseek_torch.apply_rotary_pos_emb_interleave(
            q_pe, k_pe, cos[position_ids], sin[position_ids])
        query_states = k_pe.new_empty(bsz, a, q_len, self.qk_head_dim)
        query_states[:, :, :, :nope] = q_nope
        query_states[:, :, :, nope:] = q_pe
        key_states = k_pe.new_empty(bsz, a, q_len, self.qk_head_dim)
        key_states[:, :, :, :nope] = k_nope
        key_states[:, :, :, nope:] = k_pe
        attn_weights = (torch.matmul(query_states, key_states.transpose(2, 3))
                        * self.scaling)
        attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1,
                                 dtype=torch.float32).to(query_states.dtype)
        attn_weights = decoder_torch.dropout(attn_weights,
                                             self.attention_dropout,
                                             self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, q_len, a * self.v_head_dim)
        return self.o_proj(attn_output)


class MoEGate(nn.Module):
    """The router (scoring_func "softmax", the only one the remote code
    runs)."""

    def __init__(self, c):
        super().__init__()
        m = c["moe"]
        v2 = m["v2"]
        self.top_k, self.n_routed_experts = m["top_k"], m["experts"]
        self.routed_scaling_factor = v2.get("routed_scaling_factor", 1.0)
        self.alpha = 0.001
        self.seq_aux = v2["seq_aux"]
        self.n_group, self.topk_group = v2["groups"], v2["topk_groups"]
        self.norm_topk_prob = m["norm_topk_prob"]
        self.weight = nn.Parameter(
            torch.randn(self.n_routed_experts, c["hidden"], dtype=DTYPE) *
            0.02)

    def forward(self, hidden_states):
        bsz, seq_len, h = hidden_states.shape
        hidden_states = hidden_states.view(-1, h)
        logits = F.linear(hidden_states.type(torch.float32),
                          self.weight.type(torch.float32), None)
        if decoder_torch.ROUTE_ALL_TO_LAST:  # the estimate's bound
            favour = torch.zeros(self.n_routed_experts)
            favour[self.n_routed_experts - self.top_k:] = 1e4
            logits = logits + favour
        scores = logits.softmax(dim=-1, dtype=torch.float32)
        if not self.n_group:  # topk_method "greedy"
            topk_weight, topk_idx = torch.topk(scores, k=self.top_k, dim=-1,
                                               sorted=False)
        else:  # "group_limited_greedy"
            group_scores = scores.view(bsz * seq_len, self.n_group,
                                       -1).max(dim=-1).values
            group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1,
                                   sorted=False)[1]
            group_mask = torch.zeros_like(group_scores)
            group_mask.scatter_(1, group_idx, 1)
            score_mask = (group_mask.unsqueeze(-1).expand(
                bsz * seq_len, self.n_group,
                self.n_routed_experts // self.n_group)
                .reshape(bsz * seq_len, -1))
            tmp_scores = scores.masked_fill(~score_mask.bool(), 0.0)
            topk_weight, topk_idx = torch.topk(tmp_scores, k=self.top_k,
                                               dim=-1, sorted=False)
        if self.top_k > 1 and self.norm_topk_prob:
            denominator = topk_weight.sum(dim=-1, keepdim=True) + 1e-20
            topk_weight = topk_weight / denominator
        else:
            topk_weight = topk_weight * self.routed_scaling_factor
        topk_idx_for_aux_loss = topk_idx.view(bsz, -1)
        if self.seq_aux:
            scores_for_seq_aux = scores.view(bsz, seq_len, -1)
            ce = torch.zeros(bsz, self.n_routed_experts)
            ce.scatter_add_(1, topk_idx_for_aux_loss,
                            torch.ones(bsz, seq_len * self.top_k)).div_(
                                seq_len * self.top_k / self.n_routed_experts)
            aux_loss = (ce * scores_for_seq_aux.mean(dim=1)).sum(
                dim=1).mean() * self.alpha
        else:
            mask_ce = F.one_hot(topk_idx_for_aux_loss.view(-1),
                                num_classes=self.n_routed_experts)
            ce = mask_ce.float().mean(0)
            Pi = scores.mean(0)
            fi = ce * self.n_routed_experts
            aux_loss = (Pi * fi).sum() * self.alpha
        return topk_idx, topk_weight, aux_loss


class AddAuxiliaryLoss(torch.autograd.Function):
    """The remote code's: returns x, and in backward a gradient of ones
    for the auxiliary loss; keeps no tensor."""

    @staticmethod
    def forward(ctx, x, loss):
        assert loss.numel() == 1
        ctx.dtype = loss.dtype
        ctx.required_aux_loss = loss.requires_grad
        return x

    @staticmethod
    def backward(ctx, grad_output):
        grad_loss = None
        if ctx.required_aux_loss:
            grad_loss = torch.ones(1, dtype=ctx.dtype)
        return grad_output, grad_loss


class DeepseekV2MoE(nn.Module):
    """The training branch (ep_size 1)."""

    def __init__(self, c):
        super().__init__()
        m = c["moe"]
        self.num_experts_per_tok = m["top_k"]
        expert = dict(c, intermediate=m["inter"], mlp_bias=False)
        self.experts = nn.ModuleList(
            [decoder_torch.GatedMlp(expert) for _ in range(m["experts"])])
        self.gate = MoEGate(c)
        self.shared_experts = (decoder_torch.GatedMlp(
            dict(c, intermediate=m["shared_inter"], mlp_bias=False))
            if m["shared_inter"] else None)

    def forward(self, hidden_states):
        identity = hidden_states
        orig_shape = hidden_states.shape
        topk_idx, topk_weight, aux_loss = self.gate(hidden_states)
        hidden_states = hidden_states.view(-1, hidden_states.shape[-1])
        flat_topk_idx = topk_idx.view(-1)
        hidden_states = repeat_interleave(hidden_states,
                                          self.num_experts_per_tok)
        y = torch.empty_like(hidden_states)
        for i, expert in enumerate(self.experts):
            y[flat_topk_idx == i] = expert(hidden_states[flat_topk_idx == i])
        y = (y.view(*topk_weight.shape, -1) *
             topk_weight.unsqueeze(-1)).sum(dim=1)
        y = y.to(hidden_states.dtype).view(*orig_shape)
        y = AddAuxiliaryLoss.apply(y, aux_loss)
        if self.shared_experts is not None:
            y = y + self.shared_experts(identity)
        return y


class DeepseekV2DecoderLayer(nn.Module):
    """LLaMA's layer order over the remote code's attention and MLP."""

    def __init__(self, c, sparse):
        super().__init__()
        self.self_attn = DeepseekV2Attention(c)
        self.mlp = DeepseekV2MoE(c) if sparse else decoder_torch.GatedMlp(c)
        self.input_layernorm = decoder_torch.LlamaRMSNorm(c["hidden"])
        self.post_attention_layernorm = decoder_torch.LlamaRMSNorm(
            c["hidden"])

    def forward(self, hidden_states, attention_mask, position_ids,
                past_key_value, output_attentions, use_cache):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, attention_mask,
                                       position_ids)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return (hidden_states,)


def prepare_4d_causal_attention_mask(attention_mask, inputs_embeds):
    """_prepare_4d_causal_attention_mask (transformers'
    modeling_attn_mask_utils) for a 2-D mask of ones and no past: the
    causal (b, 1, s, s) mask in the embeddings' dtype, made without grad."""
    b, s = attention_mask.shape
    dtype = inputs_embeds.dtype
    causal = torch.full((s, s), torch.finfo(dtype).min, dtype=dtype)
    causal = torch.triu(causal, diagonal=1)
    expanded = causal[None, None, :, :].expand(b, 1, s, s)
    inverted = 1.0 - attention_mask[:, None, None, :].expand(
        b, 1, s, s).to(dtype)
    padding = inverted.masked_fill(inverted.to(torch.bool),
                                   torch.finfo(dtype).min)
    return expanded.masked_fill(padding.bool(), torch.finfo(dtype).min)


class DeepseekV2ForCausalLM(nn.Module):
    """DeepseekV2Model's loop (the 4-D mask and position_ids the
    checkpointed layers take) and DeepseekV2ForCausalLM's loss."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"], dtype=DTYPE)
        sparse = c["moe"]["layers"]
        top = c["moe"].get("dense_on_top")
        self.layers = nn.ModuleList(
            [DeepseekV2DecoderLayer(c, i < sparse if top else
                                    i >= c["layers"] - sparse)
             for i in range(c["layers"])])
        self.norm = decoder_torch.LlamaRMSNorm(c["hidden"])
        self.lm_head = decoder_torch.linear(c["hidden"], c["vocab"], False)
        if c["tied"]:
            self.lm_head.weight = self.embed_tokens.weight
        self.gradient_checkpointing = c["checkpointing"]

    def hidden(self, input_ids, attention_mask):
        seq_length = input_ids.shape[1]
        position_ids = torch.arange(0, seq_length,
                                    dtype=torch.long).unsqueeze(0)
        inputs_embeds = self.embed_tokens(input_ids)
        with torch.no_grad():
            mask = prepare_4d_causal_attention_mask(attention_mask,
                                                    inputs_embeds)
        hidden_states = inputs_embeds
        for layer in self.layers:
            if self.gradient_checkpointing:
                out = torch.utils.checkpoint.checkpoint(
                    layer.__call__, hidden_states, mask, position_ids, None,
                    False, False, use_reentrant=True,
                    preserve_rng_state=decoder_torch.PRESERVE_RNG_STATE)
            else:
                out = layer(hidden_states, mask, position_ids, None, False,
                            False)
            hidden_states = out[0]
        return self.norm(hidden_states)

    def forward(self, input_ids, attention_mask, labels):
        # (a data collator's labels are a tensor of their own, not the
        # input_ids the measurement passes twice)
        labels = labels.clone()
        logits = self.lm_head(self.hidden(input_ids, attention_mask))
        logits = logits.float()
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        shift_logits = shift_logits.view(-1, self.c["vocab"])
        shift_labels = shift_labels.view(-1)
        loss = F.cross_entropy(shift_logits, shift_labels)
        return loss, logits


FAMILIES = ("deepseek_v2",)


def build(c):
    return DeepseekV2ForCausalLM(c)
