"""Small decoder models as torch modules, written from transformers 4.51.3's
modeling code (modeling_llama.py, modeling_mistral.py, modeling_qwen2.py,
modeling_qwen3.py, modeling_gemma.py, modeling_gpt2.py, modeling_mixtral.py,
modeling_qwen2_moe.py, modeling_qwen3_moe.py, activations.py,
loss/loss_utils.py), read with the search tool; not from chunkplan's C++.

Each forward is the training forward of the ForCausalLM class: the
embedding, the decoder layers (under torch.utils.checkpoint with
use_reentrant=True, as PreTrainedModel.gradient_checkpointing_enable sets by
default, when `checkpointing`), the final norm, lm_head and ForCausalLMLoss.
Attention is the eager path (eager_attention_forward); a 2-D attention_mask
of ones is passed, as a data collator does.

Dropout with p > 0 is written as the path F.dropout takes on a CUDA device
(ATen's dropout() calls native_dropout when is_fused_kernel_acceptable:
CUDA and 0 < p < 1), whose backward keeps the bool mask; on CPU F.dropout
would multiply by a noise tensor of the input's dtype instead.
"""

import math

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn

DTYPE = torch.bfloat16

# Set by the peak measurement: RMS norms take the mean through MeanTorch2,
# which saves what torch >= 2.2's mean.dim saves (sizes only), so that the
# memory measured is torch >= 2.2's (saved_tensors.TORCH_1_13_ONLY).
TORCH_2_MEAN = False


class MeanTorch2(torch.autograd.Function):
    """x.mean(-1, keepdim=True) with torch >= 2.2's backward: it keeps the
    input's sizes, not the input."""

    @staticmethod
    def forward(ctx, x):
        ctx.shape = x.shape
        return x.mean(-1, keepdim=True)

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.shape) / ctx.shape[-1]


# Set by the peak measurement: torch.utils.checkpoint's preserve_rng_state
# keeps torch.get_rng_state() per layer, a host ByteTensor (5056 bytes on
# CPU) that a CUDA run keeps in host memory too: not device memory.
PRESERVE_RNG_STATE = True


def mean_last(x):
    if TORCH_2_MEAN:
        return MeanTorch2.apply(x)
    return x.mean(-1, keepdim=True)


# Set by the peak measurement: dropout allocates as CUDA's fused
# native_dropout kernel does (the bool mask and the output); ATen's CPU
# native_dropout first draws the mask in the input's dtype and multiplies
# through it (a temporary as large as the output), which no CUDA run holds.
CUDA_DROPOUT = False


class CudaDropout(torch.autograd.Function):
    """native_dropout's forward and backward with CUDA's allocations: a
    bool mask and the output; backward the gradient times mask and scale."""

    @staticmethod
    def forward(ctx, x, p):
        keep = torch.empty(x.shape, dtype=torch.bool).bernoulli_(1 - p)
        ctx.save_for_backward(keep)
        ctx.scale = 1.0 / (1 - p)
        return torch.where(keep, x, 0).mul_(ctx.scale)

    @staticmethod
    def backward(ctx, grad):
        keep, = ctx.saved_tensors
        return torch.where(keep, grad, 0).mul_(ctx.scale), None


def dropout(x, p, training=True):
    """F.dropout as CUDA runs it (native_dropout, a bool mask saved)."""
    if p == 0 or not training:
        return x
    if CUDA_DROPOUT:
        return CudaDropout.apply(x, p)
    return torch.native_dropout(x, p, True)[0]


class LlamaRMSNorm(nn.Module):
    """LlamaRMSNorm (also Mistral's, Qwen2's, Qwen3's)."""

    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden, dtype=DTYPE))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = mean_last(hidden_states.pow(2))
        hidden_states = hidden_states * torch.rsqrt(variance +
                                                    self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class GemmaRMSNorm(nn.Module):
    """GemmaRMSNorm: x * rsqrt(mean(x^2) + eps) * (1 + w), in fp32."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.zeros(dim, dtype=DTYPE))

    def _norm(self, x):
        return x * torch.rsqrt(mean_last(x.pow(2)) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        output = output * (1.0 + self.weight.float())
        return output.type_as(x)


def rotate_half(x):
    x1 = x[..., :x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class RotaryEmbedding(nn.Module):
    """LlamaRotaryEmbedding, default rope type."""

    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base**(torch.arange(0, head_dim, 2,
                                              dtype=torch.int64).float() /
                                  head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(
            position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded.float()
                 @ position_ids_expanded.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos()
        sin = emb.sin()
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


def repeat_kv(hidden_states, n_rep):
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    if n_rep == 1:
        return hidden_states
    hidden_states = hidden_states[:, :, None, :, :].expand(
        batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen,
                                 head_dim)


def eager_attention_forward(module, query, key, value, attention_mask,
                            scaling, dropout_p=0.0):
    key_states = repeat_kv(key, module.num_key_value_groups)
    value_states = repeat_kv(value, module.num_key_value_groups)
    attn_weights = torch.matmul(query, key_states.transpose(2, 3)) * scaling
    if attention_mask is not None:
        causal_mask = attention_mask[:, :, :, :key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask
    attn_weights = F.softmax(attn_weights, dim=-1,
                             dtype=torch.float32).to(query.dtype)
    attn_weights = dropout(attn_weights, dropout_p, module.training)
    attn_output = torch.matmul(attn_weights, value_states)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


def linear(i, o, bias):
    return nn.Linear(i, o, bias=bias, dtype=DTYPE)


class LlamaAttention(nn.Module):
    """LlamaAttention; Qwen2 (q/k/v bias), Qwen3 (q_norm, k_norm per head),
    Mistral and Gemma share its forward."""

    def __init__(self, c):
        super().__init__()
        self.head_dim = c["head_dim"]
        self.num_key_value_groups = c["heads"] // c["kv_heads"]
        self.scaling = self.head_dim**-0.5
        self.attention_dropout = c["attention_dropout"]
        h, d = c["hidden"], self.head_dim
        self.q_proj = linear(h, c["heads"] * d, c["qkv_bias"])
        self.k_proj = linear(h, c["kv_heads"] * d, c["qkv_bias"])
        self.v_proj = linear(h, c["kv_heads"] * d, c["qkv_bias"])
        self.o_proj = linear(c["heads"] * d, h, c["o_bias"])
        self.qk_norm = c["qk_norm"]
        if self.qk_norm:  # Qwen3Attention
            self.q_norm = LlamaRMSNorm(d)
            self.k_norm = LlamaRMSNorm(d)

    def forward(self, hidden_states, position_embeddings, attention_mask):
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        q = self.q_proj(hidden_states).view(hidden_shape)
        k = self.k_proj(hidden_states).view(hidden_shape)
        if self.qk_norm:
            q, k = self.q_norm(q), self.k_norm(k)
        query_states = q.transpose(1, 2)
        key_states = k.transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(
            1, 2)
        cos, sin = position_embeddings
        query_states, key_states = apply_rotary_pos_emb(
            query_states, key_states, cos, sin)
        attn_output, _ = eager_attention_forward(
            self, query_states, key_states, value_states, attention_mask,
            self.scaling,
            0.0 if not self.training else self.attention_dropout)
        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        return self.o_proj(attn_output)


ACT = {
    "silu": F.silu,
    # GELUTanh / PytorchGELUTanh: F.gelu(x, approximate="tanh")
    "gelu_pytorch_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "gelu": F.gelu,
    # NewGELUActivation (activations.py)
    "gelu_new": lambda x: 0.5 * x * (1.0 + torch.tanh(
        math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0)))),
}


class GatedMlp(nn.Module):
    """LlamaMLP / GemmaMLP: down(act(gate(x)) * up(x))."""

    def __init__(self, c):
        super().__init__()
        h, i = c["hidden"], c["intermediate"]
        self.gate_proj = linear(h, i, c["mlp_bias"])
        self.up_proj = linear(h, i, c["mlp_bias"])
        self.down_proj = linear(i, h, c["mlp_bias"])
        self.act_fn = ACT[c["act"]]

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))

# Set by the peak measurement of the MoE families: every token's router
# logits favour the last top_k experts (a constant added, which autograd
# keeps nothing of), so that the expert whose backward runs first takes all
# b x s tokens: the routing at the activation estimate's bound.
ROUTE_ALL_TO_LAST = False


class SparseMoeBlock(nn.Module):
    """MixtralSparseMoeBlock, Qwen2MoeSparseMoeBlock and
    Qwen3MoeSparseMoeBlock (4.51.3): the router `gate` (a linear, softmax in
    fp32, top-k, the weights renormalized where norm_topk_prob: Mixtral
    always), then every expert in turn (4.51.3 loops over
    range(num_experts): an expert no token chose runs on an empty batch;
    the skip of unchosen experts, transformers PR #32429, came after) on
    the tokens that chose it (torch.where on the one-hot mask, an index
    select), its output times the token's routing weight, index_add_ into
    the output; Qwen2-MoE adds its shared expert on every token, scaled by
    sigmoid(shared_expert_gate(x)). Returns (output, router_logits); the
    router's aux loss is computed only with output_router_logits (default
    False: not run)."""

    def __init__(self, c):
        super().__init__()
        m = c["moe"]
        self.num_experts, self.top_k = m["experts"], m["top_k"]
        self.norm_topk_prob = m["norm_topk_prob"]
        self.gate = linear(c["hidden"], self.num_experts, False)
        expert = dict(c, intermediate=m["inter"], mlp_bias=False)
        self.experts = nn.ModuleList(
            [GatedMlp(expert) for _ in range(self.num_experts)])
        self.shared_expert = None
        if m["shared_inter"]:
            self.shared_expert = GatedMlp(
                dict(c, intermediate=m["shared_inter"], mlp_bias=False))
            self.shared_expert_gate = linear(c["hidden"], 1, False)

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        if ROUTE_ALL_TO_LAST:
            favour = torch.zeros(self.num_experts, dtype=router_logits.dtype)
            favour[self.num_experts - self.top_k:] = 1e4
            router_logits = router_logits + favour
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights,
                                                       self.top_k, dim=-1)
        if self.norm_topk_prob:
            routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final_hidden_states = torch.zeros(
            (batch_size * sequence_length, hidden_dim),
            dtype=hidden_states.dtype)
        expert_mask = F.one_hot(selected_experts,
                                num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden_states = (expert_layer(current_state) *
                                     routing_weights[top_x, idx, None])
            final_hidden_states.index_add_(
                0, top_x, current_hidden_states.to(hidden_states.dtype))
        if self.shared_expert is not None:
            shared_expert_output = self.shared_expert(hidden_states)
            # The modeling code's F.sigmoid (a deprecated alias of this).
            shared_expert_output = torch.sigmoid(
                self.shared_expert_gate(hidden_states)) * shared_expert_output
            final_hidden_states = final_hidden_states + shared_expert_output
        final_hidden_states = final_hidden_states.reshape(
            batch_size, sequence_length, hidden_dim)
        return final_hidden_states, router_logits


class LlamaDecoderLayer(nn.Module):
    """LlamaDecoderLayer; with `sparse`, MixtralDecoderLayer /
    Qwen2MoeDecoderLayer / Qwen3MoeDecoderLayer, whose MLP is the sparse
    block (its router logits dropped, as the layer returns them only with
    output_router_logits)."""

    def __init__(self, c, sparse=False):
        super().__init__()
        norm = GemmaRMSNorm if c["norm"] == "gemma_rms" else LlamaRMSNorm
        self.self_attn = LlamaAttention(c)
        self.sparse = sparse
        self.mlp = SparseMoeBlock(c) if sparse else GatedMlp(c)
        self.input_layernorm = norm(c["hidden"])
        self.post_attention_layernorm = norm(c["hidden"])

    def forward(self, hidden_states, attention_mask, position_ids,
                past_key_value, output_attentions, use_cache, cache_position,
                position_embeddings):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states, position_embeddings,
                                       attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        if self.sparse:
            hidden_states, _ = hidden_states
        hidden_states = residual + hidden_states
        return (hidden_states,)


def for_causal_lm_loss(logits, labels, vocab_size, ignore_index=-100):
    """ForCausalLMLoss with fixed_cross_entropy, reduction "mean"."""
    logits = logits.float()
    labels = F.pad(labels, (0, 1), value=ignore_index)
    shift_labels = labels[..., 1:].contiguous()
    logits = logits.view(-1, vocab_size)
    shift_labels = shift_labels.view(-1)
    return F.cross_entropy(logits, shift_labels, ignore_index=ignore_index,
                           reduction="mean")


class LlamaForCausalLM(nn.Module):
    """LlamaForCausalLM and the families that share its model loop."""

    def __init__(self, c):
        super().__init__()
        self.c = c
        self.embed_tokens = nn.Embedding(c["vocab"], c["hidden"], dtype=DTYPE)
        # MoE families: the last moe["layers"] layers are sparse, or with
        # moe["dense_on_top"] the first (which ones does not change what
        # they save; the peak measurement puts on top the kind whose
        # backward the estimate finds larger, as its bound takes it).
        sparse = c["moe"]["layers"] if c.get("moe") else 0
        top = c["moe"].get("dense_on_top") if c.get("moe") else False
        self.layers = nn.ModuleList(
            [LlamaDecoderLayer(c, i < sparse if top else
                               i >= c["layers"] - sparse)
             for i in range(c["layers"])])
        norm = GemmaRMSNorm if c["norm"] == "gemma_rms" else LlamaRMSNorm
        self.norm = norm(c["hidden"])
        self.rotary_emb = RotaryEmbedding(c["head_dim"])
        self.lm_head = linear(c["hidden"], c["vocab"], False)
        if c["tied"]:  # tie_word_embeddings
            self.lm_head.weight = self.embed_tokens.weight
        self.gradient_checkpointing = c["checkpointing"]

    def causal_mask(self, attention_mask, inputs_embeds, cache_position):
        """_update_causal_mask for eager with a 2-D mask:
        _prepare_4d_causal_attention_mask_with_cache_position."""
        dtype = inputs_embeds.dtype
        sequence_length = inputs_embeds.shape[1]
        target_length = attention_mask.shape[-1]
        batch_size = inputs_embeds.shape[0]
        min_dtype = torch.finfo(dtype).min
        causal_mask = torch.full((sequence_length, target_length),
                                 fill_value=min_dtype, dtype=dtype)
        if sequence_length != 1:
            causal_mask = torch.triu(causal_mask, diagonal=1)
        causal_mask *= torch.arange(target_length) > cache_position.reshape(
            -1, 1)
        causal_mask = causal_mask[None, None, :, :].expand(
            batch_size, 1, -1, -1)
        causal_mask = causal_mask.clone()
        mask_length = attention_mask.shape[-1]
        padding_mask = causal_mask[:, :, :, :mask_length] + attention_mask[
            :, None, None, :].to(causal_mask.dtype)
        padding_mask = padding_mask == 0
        causal_mask[:, :, :, :mask_length] = causal_mask[
            :, :, :, :mask_length].masked_fill(padding_mask, min_dtype)
        return causal_mask

    def forward(self, input_ids, attention_mask, labels):
        hidden_states = self.hidden(input_ids, attention_mask)
        logits = self.lm_head(hidden_states[:, slice(0, None), :])
        loss = for_causal_lm_loss(logits, labels, self.c["vocab"])
        return loss, logits

    def hidden(self, input_ids, attention_mask):
        """LlamaModel.forward: the final norm's output."""
        inputs_embeds = self.embed_tokens(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        position_ids = cache_position.unsqueeze(0)
        with torch.no_grad():
            causal_mask = self.causal_mask(attention_mask, inputs_embeds,
                                           cache_position)
        hidden_states = inputs_embeds
        if self.c["embed_scale"]:  # GemmaModel's normalizer
            normalizer = torch.tensor(self.c["hidden"]**0.5,
                                      dtype=hidden_states.dtype)
            hidden_states = hidden_states * normalizer
        position_embeddings = self.rotary_emb(hidden_states, position_ids)
        for layer in self.layers:
            if self.gradient_checkpointing:
                out = torch.utils.checkpoint.checkpoint(
                    layer.__call__, hidden_states, causal_mask, position_ids,
                    None, False, False, cache_position, position_embeddings,
                    use_reentrant=True,
                    preserve_rng_state=PRESERVE_RNG_STATE)
            else:
                out = layer(hidden_states, causal_mask, position_ids, None,
                            False, False, cache_position, position_embeddings)
            hidden_states = out[0]
        return self.norm(hidden_states)


class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: addmm(bias, x, weight)."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf, dtype=DTYPE) * 0.02)
        self.bias = nn.Parameter(torch.zeros(nf, dtype=DTYPE))

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class GPT2Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        max_positions = c["n_positions"]
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions),
                                  dtype=torch.bool)).view(
                                      1, 1, max_positions, max_positions),
            persistent=False)
        self.embed_dim = c["hidden"]
        self.num_heads = c["heads"]
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_pdrop = c["attention_dropout"]
        self.resid_pdrop = c["resid_dropout"]

    def eager(self, query, key, value, attention_mask):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        # scale_attn_weights (default True)
        attn_weights = attn_weights / torch.full(
            [], value.size(-1)**0.5, dtype=attn_weights.dtype)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length:key_length,
                                :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype)
        attn_weights = torch.where(causal_mask,
                                   attn_weights.to(attn_weights.dtype),
                                   mask_value)
        if attention_mask is not None:
            causal_mask = attention_mask[:, :, :, :key.shape[-2]]
            attn_weights = attn_weights + causal_mask
        attn_weights = F.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = dropout(attn_weights, self.attn_pdrop, self.training)
        attn_output = torch.matmul(attn_weights, value)
        attn_output = attn_output.transpose(1, 2)
        return attn_output

    def forward(self, hidden_states, attention_mask):
        query_states, key_states, value_states = self.c_attn(
            hidden_states).split(self.split_size, dim=2)
        shape_q = (*query_states.shape[:-1], -1, self.head_dim)
        shape_kv = (*key_states.shape[:-1], -1, self.head_dim)
        query_states = query_states.view(shape_q).transpose(1, 2)
        key_states = key_states.view(shape_kv).transpose(1, 2)
        value_states = value_states.view(shape_kv).transpose(1, 2)
        attn_output = self.eager(query_states, key_states, value_states,
                                 attention_mask)
        attn_output = attn_output.reshape(*attn_output.shape[:-2],
                                          -1).contiguous()
        attn_output = self.c_proj(attn_output)
        return dropout(attn_output, self.resid_pdrop, self.training)


class GPT2MLP(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c_fc = Conv1D(c["intermediate"], c["hidden"])
        self.c_proj = Conv1D(c["hidden"], c["intermediate"])
        self.act = ACT[c["act"]]
        self.resid_pdrop = c["resid_dropout"]

    def forward(self, hidden_states):
        hidden_states = self.c_fc(hidden_states)
        hidden_states = self.act(hidden_states)
        hidden_states = self.c_proj(hidden_states)
        return dropout(hidden_states, self.resid_pdrop, self.training)


class GPT2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        h = c["hidden"]
        self.ln_1 = nn.LayerNorm(h, eps=1e-5, dtype=DTYPE)
        self.attn = GPT2Attention(c)
        self.ln_2 = nn.LayerNorm(h, eps=1e-5, dtype=DTYPE)
        self.mlp = GPT2MLP(c)

    def forward(self, hidden_states, layer_past, attention_mask, *unused):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states, attention_mask)
        hidden_states = attn_output + residual
        residual = hidden_states
        hidden_states = self.ln_2(hidden_states)
        feed_forward_hidden_states = self.mlp(hidden_states)
        hidden_states = residual + feed_forward_hidden_states
        return (hidden_states,)


class GPT2LMHeadModel(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c = c
        h = c["hidden"]
        self.wte = nn.Embedding(c["vocab"], h, dtype=DTYPE)
        self.wpe = nn.Embedding(c["n_positions"], h, dtype=DTYPE)
        self.h = nn.ModuleList([GPT2Block(c) for _ in range(c["layers"])])
        self.ln_f = nn.LayerNorm(h, eps=1e-5, dtype=DTYPE)
        self.lm_head = linear(h, c["vocab"], False)
        if c["tied"]:  # tie_word_embeddings
            self.lm_head.weight = self.wte.weight
        self.gradient_checkpointing = c["checkpointing"]
        # Sequence parallelism's split before the blocks and gather before
        # ln_f (tp_gpt2_sp_torch.py sets them; identities otherwise).
        self.split_sequence = self.gather_sequence = lambda x: x

    def forward(self, input_ids, attention_mask, labels):
        hidden_states = self.hidden(input_ids, attention_mask)
        lm_logits = self.lm_head(hidden_states)
        loss = for_causal_lm_loss(lm_logits, labels, self.c["vocab"])
        return loss, lm_logits

    def hidden(self, input_ids, attention_mask):
        """GPT2Model.forward: ln_f's output."""
        batch_size, seq = input_ids.shape
        inputs_embeds = self.wte(input_ids)
        cache_position = torch.arange(0, seq)
        position_ids = cache_position.unsqueeze(0)
        position_embeds = self.wpe(position_ids)
        hidden_states = inputs_embeds + position_embeds
        # eager: the 2-D mask as (b, 1, 1, s), (1 - mask) * finfo.min
        attention_mask = attention_mask.view(batch_size, -1)
        attention_mask = attention_mask[:, None, None, :]
        attention_mask = attention_mask.to(dtype=DTYPE)
        attention_mask = (1.0 - attention_mask) * torch.finfo(DTYPE).min
        hidden_states = dropout(hidden_states, self.c["embedding_dropout"],
                                self.training)
        hidden_states = self.split_sequence(hidden_states)
        for block in self.h:
            if self.gradient_checkpointing:
                out = torch.utils.checkpoint.checkpoint(
                    block.__call__, hidden_states, None, attention_mask, None,
                    None, None, False, False, use_reentrant=True,
                    preserve_rng_state=PRESERVE_RNG_STATE)
            else:
                out = block(hidden_states, None, attention_mask)
            hidden_states = out[0]
        return self.ln_f(self.gather_sequence(hidden_states))


def build(c):
    """The model for config `c` (the oracle's traits, one family)."""
    if c["family"] == "gpt2":
        return GPT2LMHeadModel(c)
    import gemma3_llama4_torch  # gemma3_text
    if c["family"] in gemma3_llama4_torch.FAMILIES:
        return gemma3_llama4_torch.build(c)
    import dense_torch  # phi3, cohere, gemma2
    if c["family"] in dense_torch.LAYERS:
        return dense_torch.build(c)
    return LlamaForCausalLM(c)
