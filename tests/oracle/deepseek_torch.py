"""DeepSeek-V3 as a small torch module, written from transformers 4.51.3's
modeling_deepseek_v3.py (DeepseekV3Attention, DeepseekV3TopkRouter,
DeepseekV3MoE, DeepseekV3MLP, DeepseekV3DecoderLayer, DeepseekV3Model,
DeepseekV3ForCausalLM), read with the search tool; not from chunkplan's
C++. decoder_torch.py holds the pieces DeepSeek-V3 shares with LLaMA (its
RMSNorm is LlamaRMSNorm, its rotary embedding LlamaRotaryEmbedding over
qk_rope_head_dim, the eager causal mask, the loss).

The training forward of DeepseekV3ForCausalLM with eager attention and a
2-D attention_mask of ones; under `checkpointing` each layer runs in
torch.utils.checkpoint (use_reentrant=True) with LLaMA's arguments.
Config `c` as decoder_torch's, plus c["mla"] (q_lora, kv_lora, rope, nope,
v: q_lora_rank (0: a plain q_proj), kv_lora_rank, qk_rope_head_dim,
qk_nope_head_dim, v_head_dim) and c["moe"] (layers: how many are sparse,
experts, top_k, inter, shared_inter (moe_intermediate_size x
n_shared_experts), norm_topk_prob, n_group, topk_group, dense_on_top).
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

import decoder_torch
from decoder_torch import DTYPE, linear, rotate_half


def apply_rotary_pos_emb_interleave(q, k, cos, sin, unsqueeze_dim=1):
    """modeling_deepseek_v3.py's: the rope dimensions de-interleaved (view
    as pairs, transpose, reshape: a copy), then LLaMA's RoPE. The stored
    revision of the file read (not the v4.51.3 tag: the repository was too
    large to fetch) chooses it by config.rope_interleave, copies of the
    4.51-era file call it always; either way RoPE's multiplications keep
    only cos and sin, so the saves are the same."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    b, h, s, d = q.shape
    q = q.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    b, h, s, d = k.shape
    k = k.view(b, h, s, d // 2, 2).transpose(4, 3).reshape(b, h, s, d)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


def yarn_get_mscale(scale=1, mscale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


class DeepseekV3Attention(nn.Module):
    """Multi-head latent attention: q through q_a_proj, q_a_layernorm,
    q_b_proj (or q_proj); k's and v's latent through kv_a_proj_with_mqa,
    kv_a_layernorm, kv_b_proj, beside one shared RoPE key head."""

    def __init__(self, c):
        super().__init__()
        m = c["mla"]
        h, a = c["hidden"], c["heads"]
        self.num_heads = a
        self.num_key_value_groups = 1  # num_key_value_heads = heads
        self.q_lora_rank = m["q_lora"] or None
        self.qk_rope_head_dim, self.kv_lora_rank = m["rope"], m["kv_lora"]
        self.v_head_dim, self.qk_nope_head_dim = m["v"], m["nope"]
        self.qk_head_dim = m["nope"] + m["rope"]
        self.attention_dropout = c["attention_dropout"]
        bias = c.get("attention_bias", False)
        if self.q_lora_rank is None:
            self.q_proj = linear(h, a * self.qk_head_dim, False)
        else:
            self.q_a_proj = linear(h, self.q_lora_rank, bias)
            self.q_a_layernorm = decoder_torch.LlamaRMSNorm(self.q_lora_rank)
            self.q_b_proj = linear(self.q_lora_rank, a * self.qk_head_dim,
                                   False)
        self.kv_a_proj_with_mqa = linear(h, self.kv_lora_rank +
                                         self.qk_rope_head_dim, bias)
        self.kv_a_layernorm = decoder_torch.LlamaRMSNorm(self.kv_lora_rank)
        self.kv_b_proj = linear(self.kv_lora_rank,
                                a * (self.qk_nope_head_dim + self.v_head_dim),
                                False)
        self.o_proj = linear(a * self.v_head_dim, h, bias)
        self.scaling = self.qk_head_dim**(-0.5)
        rope_scaling = c.get("rope_scaling")
        if rope_scaling is not None:  # a Python float: nothing saved
            mscale_all_dim = rope_scaling.get("mscale_all_dim", 0)
            if mscale_all_dim:
                mscale = yarn_get_mscale(rope_scaling["factor"],
                                         mscale_all_dim)
                self.scaling = self.scaling * mscale * mscale

    def forward(self, hidden_states, position_embeddings, attention_mask):
        batch_size, seq_length = hidden_states.shape[:-1]
        query_shape = (batch_size, seq_length, -1, self.qk_head_dim)
        key_shape = (batch_size, seq_length, -1,
                     self.qk_nope_head_dim + self.v_head_dim)
        if self.q_lora_rank is None:
            q_states = self.q_proj(hidden_states)
        else:
            q_states = self.q_b_proj(self.q_a_layernorm(
                self.q_a_proj(hidden_states)))
        q_states = q_states.view(query_shape).transpose(1, 2)
        q_pass, q_rot = torch.split(
            q_states, [self.qk_nope_head_dim, self.qk_rope_head_dim], dim=-1)
        compressed_kv = self.kv_a_proj_with_mqa(hidden_states)
        k_pass, k_rot = torch.split(
            compressed_kv, [self.kv_lora_rank, self.qk_rope_head_dim], dim=-1)
        k_pass = self.kv_b_proj(self.kv_a_layernorm(k_pass)).view(
            key_shape).transpose(1, 2)
        k_pass, value_states = torch.split(
            k_pass, [self.qk_nope_head_dim, self.v_head_dim], dim=-1)
        k_rot = k_rot.view(batch_size, 1, seq_length, self.qk_rope_head_dim)
        cos, sin = position_embeddings
        q_rot, k_rot = apply_rotary_pos_emb_interleave(q_rot, k_rot, cos,
                                                       sin)
        k_rot = k_rot.expand(*k_pass.shape[:-1], -1)
        query_states = torch.cat((q_pass, q_rot), dim=-1)
        key_states = torch.cat((k_pass, k_rot), dim=-1)
        attn_output, _ = decoder_torch.eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling,
            0.0 if not self.training else self.attention_dropout)
        attn_output = attn_output.reshape(batch_size, seq_length,
                                          -1).contiguous()
        return self.o_proj(attn_output)


class DeepseekV3TopkRouter(nn.Module):
    """The router: fp32 logits from the fp32 input and weight, sigmoid
    scores, the group-limited top-k chosen without grad (the
    e_score_correction_bias buffer added for the choice only), the chosen
    scores gathered, renormalized where norm_topk_prob, times
    routed_scaling_factor."""

    def __init__(self, c):
        super().__init__()
        m = c["moe"]
        self.top_k, self.n_routed_experts = m["top_k"], m["experts"]
        self.routed_scaling_factor = m.get("routed_scaling_factor", 2.5)
        self.n_group, self.topk_group = m["n_group"], m["topk_group"]
        self.norm_topk_prob = m["norm_topk_prob"]
        self.hidden = c["hidden"]
        self.weight = nn.Parameter(
            torch.randn(self.n_routed_experts, c["hidden"], dtype=DTYPE) *
            0.02)
        self.register_buffer("e_score_correction_bias",
                             torch.zeros(self.n_routed_experts))

    @torch.no_grad()
    def get_topk_indices(self, scores):
        scores_for_choice = scores.view(
            -1, self.n_routed_experts) + self.e_score_correction_bias.unsqueeze(0)
        group_scores = (scores_for_choice.view(
            -1, self.n_group, self.n_routed_experts // self.n_group)
            .topk(2, dim=-1)[0].sum(dim=-1))
        group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1,
                               sorted=False)[1]
        group_mask = torch.zeros_like(group_scores)
        group_mask.scatter_(1, group_idx, 1)
        score_mask = (group_mask.unsqueeze(-1).expand(
            -1, self.n_group, self.n_routed_experts // self.n_group)
            .reshape(-1, self.n_routed_experts))
        scores_for_choice = scores_for_choice.masked_fill(
            ~score_mask.bool(), 0.0)
        return torch.topk(scores_for_choice, k=self.top_k, dim=-1,
                          sorted=False)[1]

    def forward(self, hidden_states):
        hidden_states = hidden_states.view(-1, self.hidden)
        router_logits = F.linear(hidden_states.type(torch.float32),
                                 self.weight.type(torch.float32))
        if decoder_torch.ROUTE_ALL_TO_LAST:  # the estimate's bound
            favour = torch.zeros(self.n_routed_experts)
            favour[self.n_routed_experts - self.top_k:] = 1e4
            router_logits = router_logits + favour
        scores = router_logits.sigmoid()
        topk_indices = self.get_topk_indices(scores)
        topk_weights = scores.gather(1, topk_indices)
        if self.norm_topk_prob:
            denominator = topk_weights.sum(dim=-1, keepdim=True) + 1e-20
            topk_weights /= denominator
        topk_weights = topk_weights * self.routed_scaling_factor
        return topk_indices, topk_weights


class DeepseekV3MoE(nn.Module):
    """The routed experts (each run only on the tokens that chose it: one
    no token chose is skipped), their fp32 weighted outputs index_add'ed
    into an fp32 sum, then the shared experts on every token."""

    def __init__(self, c):
        super().__init__()
        m = c["moe"]
        expert = dict(c, intermediate=m["inter"], mlp_bias=False)
        self.experts = nn.ModuleList(
            [decoder_torch.GatedMlp(expert) for _ in range(m["experts"])])
        self.gate = DeepseekV3TopkRouter(c)
        self.shared_experts = decoder_torch.GatedMlp(
            dict(c, intermediate=m["shared_inter"], mlp_bias=False))

    def moe(self, hidden_states, topk_indices, topk_weights):
        final_hidden_states = torch.zeros_like(hidden_states,
                                               dtype=topk_weights.dtype)
        expert_mask = F.one_hot(topk_indices, num_classes=len(self.experts))
        expert_mask = expert_mask.permute(2, 0, 1)
        for expert_idx in range(len(self.experts)):
            expert = self.experts[expert_idx]
            mask = expert_mask[expert_idx]
            token_indices, weight_indices = torch.where(mask)
            if token_indices.numel() > 0:
                expert_weights = topk_weights[token_indices, weight_indices]
                expert_input = hidden_states[token_indices]
                expert_output = expert(expert_input)
                weighted_output = expert_output * expert_weights.unsqueeze(-1)
                final_hidden_states.index_add_(0, token_indices,
                                               weighted_output)
        return final_hidden_states.type(hidden_states.dtype)

    def forward(self, hidden_states):
        residuals = hidden_states
        orig_shape = hidden_states.shape
        topk_indices, topk_weights = self.gate(hidden_states)
        hidden_states = hidden_states.view(-1, hidden_states.shape[-1])
        hidden_states = self.moe(hidden_states, topk_indices,
                                 topk_weights).view(*orig_shape)
        return hidden_states + self.shared_experts(residuals)


class DeepseekV3DecoderLayer(decoder_torch.LlamaDecoderLayer):
    """LlamaDecoderLayer's forward (DeepseekV3DecoderLayer's is the same)
    over the latent attention and a dense MLP or DeepseekV3MoE (which
    returns its output alone)."""

    def __init__(self, c, sparse):
        nn.Module.__init__(self)
        self.self_attn = DeepseekV3Attention(c)
        self.sparse = False  # no router logits to drop
        self.mlp = DeepseekV3MoE(c) if sparse else decoder_torch.GatedMlp(c)
        self.input_layernorm = decoder_torch.LlamaRMSNorm(c["hidden"])
        self.post_attention_layernorm = decoder_torch.LlamaRMSNorm(
            c["hidden"])


class DeepseekV3ForCausalLM(decoder_torch.LlamaForCausalLM):
    """LLaMA's model loop (embedding, layers, norm, lm_head, loss) over
    DeepSeek-V3's layers: the first first_k_dense_replace dense, the rest
    sparse (the measurement puts the kind whose backward the estimate
    finds larger on top, as decoder_torch's MoE families do); RoPE over
    qk_rope_head_dim."""

    def __init__(self, c):
        nn.Module.__init__(self)
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"], dtype=DTYPE)
        sparse = c["moe"]["layers"]
        top = c["moe"].get("dense_on_top")
        self.layers = nn.ModuleList(
            [DeepseekV3DecoderLayer(c, i < sparse if top else
                                    i >= c["layers"] - sparse)
             for i in range(c["layers"])])
        self.norm = decoder_torch.LlamaRMSNorm(c["hidden"])
        self.rotary_emb = decoder_torch.RotaryEmbedding(c["mla"]["rope"])
        self.lm_head = linear(c["hidden"], c["vocab"], False)
        if c["tied"]:
            self.lm_head.weight = self.embed_tokens.weight
        self.gradient_checkpointing = c["checkpointing"]


FAMILIES = ("deepseek_v3",)


def build(c):
    return DeepseekV3ForCausalLM(c)
