"""Falcon and BLOOM as small torch modules, written from transformers
4.51.3's modeling code (modeling_falcon.py, modeling_bloom.py,
loss/loss_utils.py), read with the search tool; not from chunkplan's C++.
decoder_torch.py holds the helpers shared here (dropout as CUDA runs it,
the eager causal mask, RoPE, the loss).

Each forward is the ForCausalLM class's training forward with eager
attention and a 2-D attention_mask of ones; under `checkpointing` each
layer runs in torch.utils.checkpoint (use_reentrant=True) with the
positional arguments the model passes to _gradient_checkpointing_func.

Falcon's variants as FalconConfig selects them (alibi false: rotary
positions): new_decoder_architecture (num_kv_heads key/value heads in the
fused projection, broadcast to every query head; ln_attn and ln_mlp where
num_ln_in_parallel_attn is 2, else one input_layernorm), multi_query (one
key/value head), or neither (three full projections); parallel_attn (the
MLP reads the attention's norm, or ln_mlp) or not (post_attention_layernorm
after the attention's residual). The rotary eager path has no dropout on
the probabilities ("It is unclear why neither dropout nor head_mask is
applied here"); dropout_add after the attention (sequential layers, p =
attention_dropout) and after the MLP (p = hidden_dropout).
"""

import math

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn

import decoder_torch
from decoder_torch import DTYPE, dropout

FAMILIES = ("falcon", "bloom")

ACT = dict(decoder_torch.ACT)
ACT["relu"] = F.relu


def layer_norm(h):
    return nn.LayerNorm(h, eps=1e-5, dtype=DTYPE)


class FalconLinear(nn.Linear):
    """modeling_falcon.py's FalconLinear: input @ weight.T, then + bias."""

    def __init__(self, i, o, bias):
        super().__init__(i, o, bias=bias, dtype=DTYPE)

    def forward(self, x):
        hidden_states = x @ self.weight.T
        if self.bias is None:
            return hidden_states
        return hidden_states + self.bias


def run_layer(layer, args, checkpointing):
    """One layer's forward: in torch.utils.checkpoint (use_reentrant=True,
    the positional arguments the model passes) under checkpointing."""
    if checkpointing:
        return torch.utils.checkpoint.checkpoint(
            layer.__call__, *args, use_reentrant=True,
            preserve_rng_state=decoder_torch.PRESERVE_RNG_STATE)
    return layer(*args)


def dropout_add(x, residual, prob, training):
    """modeling_falcon.py's / modeling_bloom.py's dropout_add."""
    return residual + dropout(x, prob, training)


class FalconAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.num_heads = c["heads"]
        self.head_dim = h // self.num_heads
        self.new_decoder_architecture = c["new_arch"]
        self.multi_query = c["multi_query"]
        if c["new_arch"]:
            qkv = (c["kv_heads"] * 2 + c["heads"]) * self.head_dim
        elif c["multi_query"]:
            qkv = h + 2 * self.head_dim
        else:
            qkv = 3 * h
        self.num_kv_heads = (c["kv_heads"] if (c["new_arch"] or
                                               not c["multi_query"]) else 1)
        self.query_key_value = FalconLinear(h, qkv, c["bias"])
        self.dense = FalconLinear(h, h, c["bias"])

    def _split_heads(self, fused_qkv):
        if self.new_decoder_architecture:
            batch, seq_len, _ = fused_qkv.shape
            qkv = fused_qkv.view(batch, seq_len, -1,
                                 self.num_heads // self.num_kv_heads + 2,
                                 self.head_dim)
            query = qkv[:, :, :, :-2]
            key = qkv[:, :, :, [-2]]
            value = qkv[:, :, :, [-1]]
            key = torch.broadcast_to(key, query.shape)
            value = torch.broadcast_to(value, query.shape)
            query, key, value = [x.flatten(2, 3) for x in (query, key, value)]
            return query, key, value
        if not self.multi_query:
            batch_size, seq_length, _ = fused_qkv.shape
            fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads,
                                       3, self.head_dim)
            return (fused_qkv[..., 0, :], fused_qkv[..., 1, :],
                    fused_qkv[..., 2, :])
        batch_size, seq_length, _ = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads + 2,
                                   self.head_dim)
        return (fused_qkv[..., :-2, :], fused_qkv[..., [-2], :],
                fused_qkv[..., [-1], :])

    def forward(self, hidden_states, attention_mask, position_embeddings):
        fused_qkv = self.query_key_value(hidden_states)
        num_kv_heads = (self.num_heads if self.new_decoder_architecture
                        else self.num_kv_heads)
        query_layer, key_layer, value_layer = self._split_heads(fused_qkv)
        batch_size, query_length, _, _ = query_layer.shape
        query_layer = query_layer.transpose(1, 2).reshape(
            batch_size, self.num_heads, query_length, self.head_dim)
        key_layer = key_layer.transpose(1, 2).reshape(
            batch_size, num_kv_heads, query_length, self.head_dim)
        value_layer = value_layer.transpose(1, 2).reshape(
            batch_size, num_kv_heads, query_length, self.head_dim)
        cos, sin = position_embeddings
        query_layer, key_layer = decoder_torch.apply_rotary_pos_emb(
            query_layer, key_layer, cos, sin)
        attention_mask = attention_mask[:, :, :, :key_layer.shape[-2]]
        # alibi None, eager: a 16-bit softmax, no dropout on it.
        attention_scores = query_layer @ key_layer.transpose(-1, -2)
        attention_scores /= math.sqrt(self.head_dim)
        attention_scores = F.softmax(attention_scores + attention_mask,
                                     dim=-1, dtype=hidden_states.dtype)
        attn_output = attention_scores @ value_layer
        attn_output = attn_output.view(batch_size, self.num_heads,
                                       query_length, self.head_dim)
        attn_output = attn_output.permute(0, 2, 1, 3)
        attn_output = attn_output.reshape(batch_size, query_length,
                                          self.num_heads * self.head_dim)
        return self.dense(attn_output)


class FalconMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense_h_to_4h = FalconLinear(c["hidden"], c["intermediate"],
                                          c["bias"])
        self.act = ACT[c["act"]]
        self.dense_4h_to_h = FalconLinear(c["intermediate"], c["hidden"],
                                          c["bias"])

    def forward(self, x):
        return self.dense_4h_to_h(self.act(self.dense_h_to_4h(x)))


class FalconDecoderLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.c = c
        # ShardFormer's get_tp_falcon_decoder_layer_forward adds the
        # attention's output out of place (transformers: in place).
        self.add_out_of_place = False
        self.self_attention = FalconAttention(c)
        self.mlp = FalconMLP(c)
        if not c["parallel_attn"]:
            self.post_attention_layernorm = layer_norm(h)
            self.input_layernorm = layer_norm(h)
        elif c["num_ln"] == 2:
            self.ln_attn = layer_norm(h)
            self.ln_mlp = layer_norm(h)
        else:
            self.input_layernorm = layer_norm(h)

    def forward(self, hidden_states, alibi, attention_mask, position_ids,
                layer_past, head_mask, use_cache, output_attentions,
                cache_position, position_embeddings):
        c = self.c
        residual = hidden_states
        if c["new_arch"] and c["num_ln"] == 2:
            attention_layernorm_out = self.ln_attn(hidden_states)
            mlp_layernorm_out = self.ln_mlp(hidden_states)
        else:
            attention_layernorm_out = self.input_layernorm(hidden_states)
        attention_output = self.self_attention(
            attention_layernorm_out, attention_mask, position_embeddings)
        if not c["new_arch"]:
            if c["parallel_attn"]:
                mlp_layernorm_out = attention_layernorm_out
            else:
                residual = dropout_add(attention_output, residual,
                                       c["attention_dropout"], self.training)
                mlp_layernorm_out = self.post_attention_layernorm(residual)
        if c["new_arch"] and c["parallel_attn"] and c["num_ln"] == 1:
            mlp_layernorm_out = attention_layernorm_out
        mlp_output = self.mlp(mlp_layernorm_out)
        if (c["new_arch"] or c["parallel_attn"]) and self.add_out_of_place:
            mlp_output = mlp_output + attention_output  # ShardFormer's
        elif c["new_arch"] or c["parallel_attn"]:
            mlp_output += attention_output
        output = dropout_add(mlp_output, residual, c["hidden_dropout"],
                             self.training)
        return (output,)


class FalconForCausalLM(nn.Module):
    """FalconForCausalLM -> FalconModel: word_embeddings (no dropout, no
    norm), the rotary embedding (LlamaRotaryEmbedding's default), the
    layers, ln_f, lm_head (word_embeddings' weight where tied), the loss."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        h = c["hidden"]
        self.word_embeddings = nn.Embedding(c["vocab"], h, dtype=DTYPE)
        self.h = nn.ModuleList(
            [FalconDecoderLayer(c) for _ in range(c["layers"])])
        self.ln_f = layer_norm(h)
        self.rotary_emb = decoder_torch.RotaryEmbedding(h // c["heads"])
        self.lm_head = nn.Linear(h, c["vocab"], bias=False, dtype=DTYPE)
        if c["tied"]:
            self.lm_head.weight = self.word_embeddings.weight
        self.gradient_checkpointing = c["checkpointing"]

    def forward(self, input_ids, attention_mask, labels):
        hidden_states = self.hidden(input_ids, attention_mask)
        lm_logits = self.lm_head(hidden_states[:, slice(0, None), :])
        loss = decoder_torch.for_causal_lm_loss(lm_logits, labels,
                                                self.c["vocab"])
        return loss, lm_logits

    def hidden(self, input_ids, attention_mask):
        """FalconModel's output: lm_head's input."""
        inputs_embeds = self.word_embeddings(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        with torch.no_grad():
            causal_mask = decoder_torch.LlamaForCausalLM.causal_mask(
                self, attention_mask, inputs_embeds, cache_position)
        hidden_states = inputs_embeds
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for block in self.h:
            # 4.51.3's _gradient_checkpointing_func(block.__call__, ...)
            args = (hidden_states, None, causal_mask, position_ids, None,
                    None, False, False, cache_position, position_embeddings)
            hidden_states = run_layer(block, args,
                                      self.gradient_checkpointing)[0]
        return self.ln_f(hidden_states)


def build_alibi_tensor(attention_mask, num_heads, dtype):
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2**math.floor(math.log2(num_heads))
    base = torch.tensor(2**(-(2**-(math.log2(closest_power_of_2) - 3))),
                        dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(
            2**(-(2**-(math.log2(2 * closest_power_of_2) - 3))),
            dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2,
                                  num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2,
                                    dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)],
                           dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) *
                     attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


def bloom_gelu_forward(x):
    return x * 0.5 * (1.0 + torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x)))


def bloom_gelu_back(g, x):
    x = x[0]
    tanh_out = torch.tanh(0.79788456 * x * (1 + 0.044715 * x * x))
    ff = 0.5 * x * ((1 - tanh_out * tanh_out) *
                    (0.79788456 + 0.1070322243 * x * x)) + 0.5 * (1 + tanh_out)
    return ff * g


class GeLUFunction(torch.autograd.Function):
    """modeling_bloom.py's GeLUFunction (BloomGelu in training)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return bloom_gelu_forward(input)

    @staticmethod
    def backward(ctx, grad_output):
        input = ctx.saved_tensors
        return bloom_gelu_back(grad_output, input)


class BloomAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.hidden_size = h
        self.num_heads = c["heads"]
        self.head_dim = h // self.num_heads
        self.hidden_dropout = c["hidden_dropout"]
        self.attention_dropout = c["attention_dropout"]
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.beta = 1.0
        self.query_key_value = nn.Linear(h, 3 * h, bias=True, dtype=DTYPE)
        self.dense = nn.Linear(h, h, dtype=DTYPE)
        # ShardFormer's forward under sequence parallelism (tp_bloom_sp_torch)
        self.sequence_parallel = False

    def _reshape(self, fused_qkv):
        batch_size, seq_length, _ = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3,
                                   self.head_dim)
        query_layer = fused_qkv[..., 0, :].transpose(1, 2)
        key_layer = fused_qkv[..., 1, :].transpose(1, 2)
        value_layer = fused_qkv[..., 2, :].transpose(1, 2)
        return query_layer, key_layer, value_layer

    def _merge_heads(self, x):
        batch_size_and_num_heads, seq_length, _ = x.shape
        batch_size = batch_size_and_num_heads // self.num_heads
        x = x.view(batch_size, self.num_heads, seq_length, self.head_dim)
        x = x.permute(0, 2, 1, 3)
        return x.reshape(batch_size, seq_length,
                         self.num_heads * self.head_dim)

    def forward(self, hidden_states, residual, alibi, attention_mask):
        batch_size, q_length, _ = hidden_states.shape
        fused_qkv = self.query_key_value(hidden_states)
        query_layer, key_layer, value_layer = self._reshape(fused_qkv)
        query_layer = query_layer.reshape(batch_size * self.num_heads, -1,
                                          self.head_dim)
        key_layer = key_layer.reshape(batch_size * self.num_heads, -1,
                                      self.head_dim).transpose(-1, -2)
        value_layer = value_layer.reshape(batch_size * self.num_heads, -1,
                                          self.head_dim)
        attention_scores = alibi.baddbmm(batch1=query_layer, batch2=key_layer,
                                         beta=self.beta,
                                         alpha=self.inv_norm_factor)
        if self.sequence_parallel:  # the whole sequence's queries
            _, q_length, _ = query_layer.shape
        attn_weights = attention_scores.view(batch_size, self.num_heads,
                                             q_length, -1)
        causal_mask = attention_mask[:, :, :, :key_layer.shape[-1]]
        attn_weights = attn_weights + causal_mask
        attention_probs = F.softmax(attn_weights, dim=-1,
                                    dtype=torch.float32).to(query_layer.dtype)
        attention_probs = dropout(attention_probs, self.attention_dropout,
                                  self.training)
        attention_probs_reshaped = attention_probs.view(
            batch_size * self.num_heads, q_length, -1)
        context_layer = torch.bmm(attention_probs_reshaped, value_layer)
        context_layer = self._merge_heads(context_layer)
        output_tensor = self.dense(context_layer)
        return dropout_add(output_tensor, residual, self.hidden_dropout,
                           self.training)


class BloomMLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.dense_h_to_4h = nn.Linear(h, 4 * h, dtype=DTYPE)
        self.dense_4h_to_h = nn.Linear(4 * h, h, dtype=DTYPE)
        self.hidden_dropout = c["hidden_dropout"]

    def forward(self, hidden_states, residual):
        hidden_states = GeLUFunction.apply(self.dense_h_to_4h(hidden_states))
        intermediate_output = self.dense_4h_to_h(hidden_states)
        return dropout_add(intermediate_output, residual, self.hidden_dropout,
                           self.training)


class BloomBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.input_layernorm = layer_norm(h)
        self.self_attention = BloomAttention(c)
        self.post_attention_layernorm = layer_norm(h)
        self.mlp = BloomMLP(c)
        self.post_ln_residual = c["post_ln_residual"]

    def forward(self, hidden_states, alibi, attention_mask, layer_past,
                head_mask, use_cache, output_attentions, cache_position):
        layernorm_output = self.input_layernorm(hidden_states)
        residual = (layernorm_output if self.post_ln_residual
                    else hidden_states)
        attention_output = self.self_attention(layernorm_output, residual,
                                                alibi, attention_mask)
        layernorm_output = self.post_attention_layernorm(attention_output)
        residual = (layernorm_output if self.post_ln_residual
                    else attention_output)
        return (self.mlp(layernorm_output, residual),)


class BloomForCausalLM(nn.Module):
    """BloomForCausalLM -> BloomModel: word_embeddings,
    word_embeddings_layernorm, the ALiBi tensor (b * heads, 1, s) from the
    2-D mask, the eager (b, 1, s, s) causal mask, the blocks, ln_f, lm_head
    (word_embeddings' weight where tied), ForCausalLMLoss."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        h = c["hidden"]
        self.word_embeddings = nn.Embedding(c["vocab"], h, dtype=DTYPE)
        self.word_embeddings_layernorm = layer_norm(h)
        self.h = nn.ModuleList([BloomBlock(c) for _ in range(c["layers"])])
        self.ln_f = layer_norm(h)
        self.lm_head = nn.Linear(h, c["vocab"], bias=False, dtype=DTYPE)
        if c["tied"]:
            self.lm_head.weight = self.word_embeddings.weight
        self.gradient_checkpointing = c["checkpointing"]
        # BloomModel.build_alibi_tensor (ShardFormer's policy replaces it)
        self.build_alibi_tensor = build_alibi_tensor

    def forward(self, input_ids, attention_mask, labels):
        hidden_states = self.hidden(input_ids, attention_mask)
        lm_logits = self.lm_head(hidden_states)
        loss = decoder_torch.for_causal_lm_loss(lm_logits, labels,
                                                self.c["vocab"])
        return loss, lm_logits

    def hidden(self, input_ids, attention_mask):
        """BloomModel's output: lm_head's input."""
        inputs_embeds = self.word_embeddings(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        hidden_states = self.word_embeddings_layernorm(inputs_embeds)
        alibi = self.build_alibi_tensor(attention_mask, self.c["heads"],
                                        dtype=hidden_states.dtype)
        with torch.no_grad():
            causal_mask = decoder_torch.LlamaForCausalLM.causal_mask(
                self, attention_mask, inputs_embeds, cache_position)
        for block in self.h:
            args = (hidden_states, alibi, causal_mask, None, None, False,
                    False, cache_position)
            hidden_states = run_layer(block, args,
                                      self.gradient_checkpointing)[0]
        return self.ln_f(hidden_states)


def config(shape, work, family, probability):
    """The torch model's config for the oracle's traits of `family`."""
    h, a = shape["hidden_size"], shape["num_attention_heads"]
    masks = 1 if shape["one_residual_mask"] else 2
    hidden = probability if shape["hidden_dropout"] else 0.0
    c = {"family": family, "layers": shape["num_layers"], "hidden": h,
         "heads": a, "vocab": shape["vocab_size"],
         "tied": shape["tied_embeddings"],
         "checkpointing": work["activation_checkpointing"],
         "hidden_dropout": hidden,
         "attention_dropout": (probability if shape["attention_dropout"]
                               else 0.0)}
    if family == "bloom":
        c["post_ln_residual"] = False
        return c
    # Falcon: the layout from the traits the family sets.
    c.update(new_arch=shape["kv_broadcast"],
             multi_query=shape["indexed_kv"] and not shape["kv_broadcast"],
             kv_heads=shape["num_key_value_heads"] or a,
             parallel_attn=shape["single_norm"] or shape["parallel_residual"],
             num_ln=2 if shape["parallel_residual"] else 1,
             intermediate=shape["intermediate_size"] or 4 * h,
             act=shape["activation"] if shape["activation"] in (
                 "gelu_new", "relu") else "gelu",
             bias=True,
             # the sequential layer's first dropout_add takes
             # attention_dropout (a residual mask, not the probabilities')
             attention_dropout=(probability if shape["hidden_dropout"] and
                                masks == 2 else 0.0))
    return c


def build(c):
    """The model for config `c` (one of FAMILIES)."""
    return {"falcon": FalconForCausalLM, "bloom": BloomForCausalLM}[
        c["family"]](c)
