"""The LayerNorm decoder families as small torch modules, written from
transformers 4.51.3's modeling code (modeling_gpt_neox.py, modeling_opt.py, modeling_gptj.py,
activations.py,
loss/loss_utils.py), read with the search tool; not from chunkplan's C++.
decoder_torch.py holds the RMSNorm families and GPT-2, and the helpers
shared here (dropout as CUDA runs it, the eager causal mask, the loss).

Each forward is the ForCausalLM class's training forward with eager
attention and a 2-D attention_mask of ones; under `checkpointing` each
layer runs in torch.utils.checkpoint (use_reentrant=True) with the
arguments the model passes to _gradient_checkpointing_func.
"""

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn

import decoder_torch
from decoder_torch import DTYPE, dropout, linear

FAMILIES = ("gpt_neox", "opt", "gptj")

ACT = dict(decoder_torch.ACT)
# FastGELUActivation (activations.py): the tanh approximation written out.
ACT["gelu_fast"] = lambda x: 0.5 * x * (1.0 + torch.tanh(
    x * 0.7978845608 * (1.0 + 0.044715 * x * x)))
ACT["relu"] = F.relu


def layer_norm(h):
    return nn.LayerNorm(h, eps=1e-5, dtype=DTYPE)


def apply_partial_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    """modeling_gpt_neox.py's apply_rotary_pos_emb: RoPE on the first
    cos.shape[-1] dimensions, the rest passed through and concatenated."""
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    rotary_dim = cos.shape[-1]
    q_rot, q_pass = q[..., :rotary_dim], q[..., rotary_dim:]
    k_rot, k_pass = k[..., :rotary_dim], k[..., rotary_dim:]
    q_embed = (q_rot * cos) + (decoder_torch.rotate_half(q_rot) * sin)
    k_embed = (k_rot * cos) + (decoder_torch.rotate_half(k_rot) * sin)
    q_embed = torch.cat([q_embed, q_pass], dim=-1)
    k_embed = torch.cat([k_embed, k_pass], dim=-1)
    return q_embed, k_embed


class GPTNeoXAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.head_size = h // c["heads"]
        self.attention_dropout = c["attention_dropout"]
        self.scaling = self.head_size**-0.5
        # modeling_gpt_neox.py's eager attention is decoder_torch's with as
        # many key/value heads as query heads (repeat_kv returns its input).
        self.num_key_value_groups = 1
        self.query_key_value = linear(h, 3 * h, c["qkv_bias"])
        self.dense = linear(h, h, c["qkv_bias"])

    def forward(self, hidden_states, attention_mask, position_embeddings):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, 3 * self.head_size)
        qkv = self.query_key_value(hidden_states).view(
            hidden_shape).transpose(1, 2)
        query_states, key_states, value_states = qkv.chunk(3, dim=-1)
        cos, sin = position_embeddings
        query_states, key_states = apply_partial_rotary_pos_emb(
            query_states, key_states, cos, sin)
        attn_output, _ = decoder_torch.eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling,
            0.0 if not self.training else self.attention_dropout)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.dense(attn_output)


class GPTNeoXMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_h_to_4h = linear(c["hidden"], c["intermediate"], True)
        self.dense_4h_to_h = linear(c["intermediate"], c["hidden"], True)
        self.act = ACT[c["act"]]

    def forward(self, hidden_states):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(hidden_states)))


class GPTNeoXLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.use_parallel_residual = c["parallel_residual"]
        self.input_layernorm = layer_norm(c["hidden"])
        self.post_attention_layernorm = layer_norm(c["hidden"])
        self.hidden_dropout = c["resid_dropout"]
        self.attention = GPTNeoXAttention(c)
        self.mlp = GPTNeoXMLP(c)

    def forward(self, hidden_states, attention_mask, position_ids, head_mask,
                use_cache, layer_past, output_attentions, cache_position,
                position_embeddings):
        attn_output = self.attention(self.input_layernorm(hidden_states),
                                     attention_mask, position_embeddings)
        attn_output = dropout(attn_output, self.hidden_dropout, self.training)
        if self.use_parallel_residual:
            mlp_output = self.mlp(self.post_attention_layernorm(hidden_states))
            mlp_output = dropout(mlp_output, self.hidden_dropout,
                                 self.training)
            hidden_states = mlp_output + attn_output + hidden_states
        else:
            attn_output = attn_output + hidden_states
            mlp_output = self.mlp(self.post_attention_layernorm(attn_output))
            mlp_output = dropout(mlp_output, self.hidden_dropout,
                                 self.training)
            hidden_states = mlp_output + attn_output
        return (hidden_states,)


class GPTNeoXForCausalLM(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        h = c["hidden"]
        self.embed_in = nn.Embedding(c["vocab"], h, dtype=DTYPE)
        self.layers = nn.ModuleList(
            [GPTNeoXLayer(c) for _ in range(c["layers"])])
        self.final_layer_norm = layer_norm(h)
        # GPTNeoXRotaryEmbedding: the default rope over
        # int(head_size * rotary_pct) dimensions.
        self.rotary_emb = decoder_torch.RotaryEmbedding(c["rotary_ndims"])
        self.embed_out = linear(h, c["vocab"], False)
        if c["tied"]:
            self.embed_out.weight = self.embed_in.weight
        self.gradient_checkpointing = c["checkpointing"]

    def forward(self, input_ids, attention_mask, labels):
        inputs_embeds = self.embed_in(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        with torch.no_grad():
            causal_mask = decoder_torch.LlamaForCausalLM.causal_mask(
                self, attention_mask, inputs_embeds, cache_position)
        hidden_states = dropout(inputs_embeds, self.c["resid_dropout"],
                                self.training)
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for layer in self.layers:
            args = (hidden_states, causal_mask, position_ids, None, False,
                    None, False, cache_position, position_embeddings)
            if self.gradient_checkpointing:
                out = torch.utils.checkpoint.checkpoint(
                    layer.__call__, *args, use_reentrant=True,
                    preserve_rng_state=decoder_torch.PRESERVE_RNG_STATE)
            else:
                out = layer(*args)
            hidden_states = out[0]
        hidden_states = self.final_layer_norm(hidden_states)
        logits = self.embed_out(hidden_states[:, slice(0, None), :])
        loss = decoder_torch.for_causal_lm_loss(logits, labels,
                                                self.c["vocab"])
        return loss, logits


class OPTAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.num_heads = c["heads"]
        self.head_dim = h // self.num_heads
        self.scaling = self.head_dim**-0.5
        self.dropout = c["attention_dropout"]
        self.k_proj = linear(h, h, c["qkv_bias"])
        self.v_proj = linear(h, h, c["qkv_bias"])
        self.q_proj = linear(h, h, c["qkv_bias"])
        self.out_proj = linear(h, h, c["qkv_bias"])

    def forward(self, hidden_states, attention_mask):
        bsz, tgt_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states) * self.scaling
        query_states = query_states.view(bsz, -1, self.num_heads,
                                         self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states)
        value_states = self.v_proj(hidden_states)
        key_states = key_states.view(bsz, -1, self.num_heads,
                                     self.head_dim).transpose(1, 2)
        value_states = value_states.view(bsz, -1, self.num_heads,
                                         self.head_dim).transpose(1, 2)
        # modeling_opt.py's eager_attention_forward (siglip's): the mask
        # added unsliced, scaling 1.0 (q scaled above).
        attn_weights = torch.matmul(query_states,
                                    key_states.transpose(-1, -2)) * 1.0
        attn_weights = attn_weights + attention_mask
        attn_weights = F.softmax(attn_weights, dim=-1,
                                 dtype=torch.float32).to(query_states.dtype)
        attn_weights = dropout(attn_weights, self.dropout, self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()
        attn_output = attn_output.reshape(bsz, tgt_len, -1).contiguous()
        return self.out_proj(attn_output)


class OPTDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.self_attn = OPTAttention(c)
        self.do_layer_norm_before = c["norm_before"]
        self.dropout = c["resid_dropout"]
        self.activation_fn = ACT[c["act"]]
        self.self_attn_layer_norm = nn.LayerNorm(
            h, elementwise_affine=c["affine"], dtype=DTYPE)
        self.fc1 = linear(h, c["intermediate"], c["qkv_bias"])
        self.fc2 = linear(c["intermediate"], h, c["qkv_bias"])
        self.final_layer_norm = nn.LayerNorm(
            h, elementwise_affine=c["affine"], dtype=DTYPE)

    def forward(self, hidden_states, attention_mask, layer_head_mask,
                past_key_value, output_attentions, use_cache, position_ids,
                cache_position):
        residual = hidden_states
        if self.do_layer_norm_before:
            hidden_states = self.self_attn_layer_norm(hidden_states)
        hidden_states = self.self_attn(hidden_states, attention_mask)
        hidden_states = dropout(hidden_states, self.dropout, self.training)
        hidden_states = residual + hidden_states
        if not self.do_layer_norm_before:
            hidden_states = self.self_attn_layer_norm(hidden_states)
        hidden_states_shape = hidden_states.shape
        hidden_states = hidden_states.reshape(-1, hidden_states.size(-1))
        residual = hidden_states
        if self.do_layer_norm_before:
            hidden_states = self.final_layer_norm(hidden_states)
        hidden_states = self.fc1(hidden_states)
        hidden_states = self.activation_fn(hidden_states)
        hidden_states = self.fc2(hidden_states)
        hidden_states = dropout(hidden_states, self.dropout, self.training)
        hidden_states = (residual + hidden_states).view(hidden_states_shape)
        if not self.do_layer_norm_before:
            hidden_states = self.final_layer_norm(hidden_states)
        return (hidden_states,)


class OPTForCausalLM(nn.Module):
    """OPTForCausalLM -> OPTDecoder: embed_tokens (word_embed_proj_dim
    wide), OPTLearnedPositionalEmbedding (offset 2) over position_ids from
    the attention mask's cumsum, project_in / project_out where
    word_embed_proj_dim differs, final_layer_norm only with
    do_layer_norm_before (and not _remove_final_layer_norm)."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        h, p = c["hidden"], c["proj"]
        self.embed_tokens = nn.Embedding(c["vocab"], p, dtype=DTYPE)
        self.embed_positions = nn.Embedding(c["n_positions"] + 2, h,
                                            dtype=DTYPE)
        self.project_out = linear(h, p, False) if p != h else None
        self.project_in = linear(p, h, False) if p != h else None
        self.final_layer_norm = (nn.LayerNorm(
            h, elementwise_affine=c["affine"], dtype=DTYPE)
                                 if c["final_norm"] else None)
        self.layers = nn.ModuleList(
            [OPTDecoderLayer(c) for _ in range(c["layers"])])
        self.lm_head = linear(p, c["vocab"], False)
        if c["tied"]:
            self.lm_head.weight = self.embed_tokens.weight
        self.gradient_checkpointing = c["checkpointing"]

    def forward(self, input_ids, attention_mask, labels):
        hidden_states = self.hidden(input_ids, attention_mask)
        logits = self.lm_head(hidden_states).contiguous()
        loss = decoder_torch.for_causal_lm_loss(logits, labels,
                                                self.c["vocab"])
        return loss, logits

    def hidden(self, input_ids, attention_mask):
        """OPTDecoder's output: lm_head's input."""
        inputs_embeds = self.embed_tokens(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        with torch.no_grad():
            causal_mask = decoder_torch.LlamaForCausalLM.causal_mask(
                self, attention_mask, inputs_embeds, cache_position)
        position_ids = torch.cumsum(attention_mask, dim=1)
        position_ids = (position_ids * attention_mask - 1).long()
        position_ids = position_ids[:, 0:]
        pos_embeds = self.embed_positions(position_ids + 2)
        if self.project_in is not None:
            inputs_embeds = self.project_in(inputs_embeds)
        hidden_states = inputs_embeds + pos_embeds
        for layer in self.layers:
            args = (hidden_states, causal_mask, None, None, False, False,
                    position_ids, cache_position)
            if self.gradient_checkpointing:
                out = torch.utils.checkpoint.checkpoint(
                    layer.__call__, *args, use_reentrant=True,
                    preserve_rng_state=decoder_torch.PRESERVE_RNG_STATE)
            else:
                out = layer(*args)
            hidden_states = out[0]
        if self.final_layer_norm is not None:
            hidden_states = self.final_layer_norm(hidden_states)
        if self.project_out is not None:
            hidden_states = self.project_out(hidden_states)
        return hidden_states


def create_sinusoidal_positions(num_pos, dim):
    inv_freq = 1.0 / (10000**(torch.arange(0, dim, 2, dtype=torch.int64) /
                               dim))
    sinusoid_inp = torch.einsum("i , j -> i j",
                                torch.arange(num_pos, dtype=torch.int64)
                                .float(), inv_freq).float()
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)),
                     dim=1)


def rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)


def gptj_apply_rotary_pos_emb(tensor, sin, cos):
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (rotate_every_two(tensor) * sin)


class GPTJAttention(nn.Module):
    """GPTJAttention (eager): fp32 sin/cos tables gathered per layer, RoPE
    on the first rotary_dim dimensions (q and k become fp32), q and k
    upcast for the scores, divided by scale_attn."""

    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.num_attention_heads = c["heads"]
        self.head_dim = h // c["heads"]
        self.rotary_dim = c["rotary_ndims"]
        self.attn_pdrop = c["attention_dropout"]
        self.resid_pdrop = c["resid_dropout"]
        pos_embd_dim = self.rotary_dim or h
        self.embed_positions = create_sinusoidal_positions(
            c["n_positions"], pos_embd_dim)
        # torch.sqrt(torch.tensor(head_dim, dtype=float32)).to(default
        # dtype): a plain attribute, not a buffer, so model.to(cuda) leaves
        # it on the host: a host scalar in a CUDA run (float64 here, which
        # saved_tensors.host_scalar takes out; the quotient stays fp32).
        self.scale_attn = torch.sqrt(torch.tensor(self.head_dim,
                                                  dtype=torch.float64))
        self.k_proj = linear(h, h, False)
        self.v_proj = linear(h, h, False)
        self.q_proj = linear(h, h, False)
        self.out_proj = linear(h, h, False)

    def _split_heads(self, tensor, rotary):
        new_shape = tensor.size()[:-1] + (self.num_attention_heads,
                                          self.head_dim)
        tensor = tensor.view(new_shape)
        if rotary:
            return tensor
        return tensor.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask, position_ids):
        query = self._split_heads(self.q_proj(hidden_states), True)
        key = self._split_heads(self.k_proj(hidden_states), True)
        value = self._split_heads(self.v_proj(hidden_states), False)
        embed_positions = self.embed_positions.repeat(
            position_ids.shape[0], 1, 1)
        repeated_position_ids = position_ids.unsqueeze(-1).repeat(
            1, 1, embed_positions.shape[-1])
        sincos = torch.gather(embed_positions, 1, repeated_position_ids)
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        if self.rotary_dim is not None:
            k_rot = key[:, :, :, :self.rotary_dim]
            k_pass = key[:, :, :, self.rotary_dim:]
            q_rot = query[:, :, :, :self.rotary_dim]
            q_pass = query[:, :, :, self.rotary_dim:]
            k_rot = gptj_apply_rotary_pos_emb(k_rot, sin, cos)
            q_rot = gptj_apply_rotary_pos_emb(q_rot, sin, cos)
            key = torch.cat([k_rot, k_pass], dim=-1)
            query = torch.cat([q_rot, q_pass], dim=-1)
        else:
            key = gptj_apply_rotary_pos_emb(key, sin, cos)
            query = gptj_apply_rotary_pos_emb(query, sin, cos)
        key = key.permute(0, 2, 1, 3)
        query = query.permute(0, 2, 1, 3)
        # _attn
        query = query.to(torch.float32)
        key = key.to(torch.float32)
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        attn_weights = attn_weights / self.scale_attn
        causal_mask = attention_mask[:, :, :, :key.shape[-2]]
        attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        attn_weights = dropout(attn_weights, self.attn_pdrop, self.training)
        attn_output = torch.matmul(attn_weights, value)
        # _merge_heads
        attn_output = attn_output.permute(0, 2, 1, 3).contiguous()
        attn_output = attn_output.view(attn_output.size()[:-2] + (
            self.num_attention_heads * self.head_dim,))
        attn_output = self.out_proj(attn_output)
        return dropout(attn_output, self.resid_pdrop, self.training)


class GPTJMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc_in = linear(c["hidden"], c["intermediate"], True)
        self.fc_out = linear(c["intermediate"], c["hidden"], True)
        self.act = ACT[c["act"]]
        self.resid_pdrop = c["resid_dropout"]

    def forward(self, hidden_states):
        hidden_states = self.fc_out(self.act(self.fc_in(hidden_states)))
        return dropout(hidden_states, self.resid_pdrop, self.training)


class GPTJBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = layer_norm(c["hidden"])
        self.attn = GPTJAttention(c)
        self.mlp = GPTJMLP(c)

    def forward(self, hidden_states, layer_past, attention_mask,
                position_ids, head_mask, use_cache, output_attentions,
                cache_position):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states, attention_mask, position_ids)
        feed_forward_hidden_states = self.mlp(hidden_states)
        hidden_states = attn_output + feed_forward_hidden_states + residual
        return (hidden_states,)


class GPTJForCausalLM(nn.Module):
    """GPTJForCausalLM: wte, drop (embd_pdrop), the blocks, ln_f, a biased
    lm_head whose logits are cast to fp32 before the loss."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        h = c["hidden"]
        self.wte = nn.Embedding(c["vocab"], h, dtype=DTYPE)
        self.h = nn.ModuleList([GPTJBlock(c) for _ in range(c["layers"])])
        self.ln_f = layer_norm(h)
        self.lm_head = linear(h, c["vocab"], True)
        if c["tied"]:
            self.lm_head.weight = self.wte.weight
        self.gradient_checkpointing = c["checkpointing"]

    def forward(self, input_ids, attention_mask, labels):
        inputs_embeds = self.wte(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        with torch.no_grad():
            causal_mask = decoder_torch.LlamaForCausalLM.causal_mask(
                self, attention_mask, inputs_embeds, cache_position)
        hidden_states = dropout(inputs_embeds, self.c["embedding_dropout"],
                                self.training)
        for block in self.h:
            args = (hidden_states, None, causal_mask, position_ids, None,
                    False, False, cache_position)
            if self.gradient_checkpointing:
                out = torch.utils.checkpoint.checkpoint(
                    block.__call__, *args, use_reentrant=True,
                    preserve_rng_state=decoder_torch.PRESERVE_RNG_STATE)
            else:
                out = block(*args)
            hidden_states = out[0]
        hidden_states = self.ln_f(hidden_states)
        lm_logits = self.lm_head(hidden_states).to(torch.float32)
        loss = decoder_torch.for_causal_lm_loss(lm_logits, labels,
                                                self.c["vocab"])
        return loss.to(hidden_states.dtype), lm_logits


def build(c):
    """The model for config `c` (one of FAMILIES)."""
    return {"gpt_neox": GPTNeoXForCausalLM, "opt": OPTForCausalLM,
            "gptj": GPTJForCausalLM}[c["family"]](c)

