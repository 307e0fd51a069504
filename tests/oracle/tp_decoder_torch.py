"""One tensor-parallel rank of a small decoder model as ColossalAI's
ShardFormer runs it under GeminiPlugin(tp_size=t) without sequence
parallelism, in one process: the model of decoder_torch.py built at the
rank's local shapes (heads / t, key/value heads / t, MLP width / t, the
vocabulary padded to a multiple of 64 t and split), its linear layers, its
embedding, its lm_head and its loss replaced by stand-ins that save for
backward exactly what ColossalAI's autograd functions save, with every
collective (all-reduce, whose world here is one process) an identity.
Written from ColossalAI 4f9953be (../shared/reference/colossalai/ and
colossalai/shardformer/layer/{_operation,loss}.py, colossalai/shardformer/
modeling/{llama,mistral,qwen2,qwen3}.py, read with the fetch tool), not
from chunkplan's C++.

Rank 0 is built: it keeps the most valid vocabulary rows (the padding sits
on the last ranks) and every rank keeps the same shapes otherwise.

What each stand-in saves (file:line at 4f9953be):
  * ColumnLinear: Linear1D_Col.forward (layer/linear.py:331-377) calls
    linear_with_async_comm -> LinearWithAsyncCommunication.forward
    (layer/_operation.py:257-258): ctx.save_for_backward(input_, weight,
    bias); its backward (:271-338): input.contiguous(), grad_output @
    weight, grad_output.t() @ input (the all-reduce of grad_input an
    identity here).
  * RowLinear: Linear1D_Row.forward (layer/linear.py:542-595):
    F.linear(input_, weight) (saves its input), reduce_forward
    (_ReduceForward, _operation.py:1015-1034: saves nothing), then
    output + bias.
  * VocabParallelEmbedding: layer/embedding.py:386-400: the mask
    (input < start) | (input >= end), input.clone() - start with the
    masked ids set to 0 (F.embedding saves these indices), the output's
    clone with the masked rows set to 0 (index_put_ saves the bool mask),
    reduce_forward.
  * VocabParallelLMHead: layer/linear.py:788-800: Linear1D_Col's forward
    on the padded local rows, then output[..., :num_valid_embeddings_local]
    (layer/linear.py:751-759: rank 0 keeps min(partition, vocab)).
    Qwen3's policy makes lm_head a plain Linear1D_Col (no padding, no
    slice: policies/qwen3.py:407-418).
  * dist_cross_entropy (layer/loss.py:263-340, no sequence parallelism):
    labels[..., 1:] and logits[..., :-1, :], each .contiguous(), the
    count of labels != -100, DistCrossEntropy.apply(..., mode="sum")
    (loss.py:24-141: saves exp_logits .to(dtype), the bool mask and the
    int64 masked_target_1d), then (loss / num_nonzero).squeeze().
  * The causal-LM forward: LLaMA's llama_for_causal_lm_forward
    (modeling/llama.py:348-355): the 16-bit logits, dtype the model's;
    Mistral's get_lm_forward_with_dist_cross_entropy
    (modeling/mistral.py:618-623): logits.float(), dtype the model's;
    Qwen2's and Qwen3's (modeling/qwen2.py:822-826,
    modeling/qwen3.py:814-818): logits.float(), dtype logits.dtype (fp32).
    LLaMA's llama_model_forward (modeling/llama.py:43-262) runs, without
    sequence parallelism or flash attention, the same embedding, mask,
    rotary, layer loop (the same checkpoint arguments) and final norm as
    transformers' LlamaModel.forward, which decoder_torch.py holds.
"""

import torch
import torch.nn.functional as F
from torch import nn

import decoder_torch
import tp_gpt2_torch

IGNORE_INDEX = -100

# Set by the peak measurement. DistCrossEntropy's backward multiplies its
# 16-bit exp_logits in place by a 1-element fp32 tensor: the common dtype
# is fp32, and on CPU TensorIterator (aten/src/ATen/TensorIterator.cpp,
# compute_types: "if (common_device == kCPU)" it casts inputs and outputs
# through temporaries of the common dtype) allocates two fp32 copies of
# exp_logits; on CUDA the kernel casts per element and allocates none. The
# peak is measured with the factor cast first, as CUDA's memory goes.
CUDA_MUL = False
VOCAB_MULTIPLE = 64  # ShardConfig.make_vocab_size_divisible_by

# model_type: (logits upcast to fp32 before the loss, the loss's dtype fp32)
LOSS = {"llama": (False, False), "mistral": (True, False),
        "qwen2": (True, True), "qwen3": (True, True),
        # gpt2_lmhead_model_forward (tp_gpt2_torch.py): as LLaMA's
        "gpt2": (False, False)}


def padded_vocab(v, t):
    m = VOCAB_MULTIPLE * t
    return (v + m - 1) // m * m


def split(n, t):
    """What a rank keeps of n features split by Linear1D_Col/Row: n / t,
    or n whole where n < t (from_native_module returns the module)."""
    return n if n < t else n // t


class LinearWithAsyncCommunication(torch.autograd.Function):
    """_operation.py:251-338 (the all-reduce of grad_input an identity)."""

    @staticmethod
    def forward(ctx, input_, weight, bias):
        ctx.save_for_backward(input_, weight, bias)
        ctx.use_bias = bias is not None
        return F.linear(input_, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input_, weight, bias = ctx.saved_tensors
        total_input = input_.contiguous()
        grad_input = grad_output.matmul(weight)
        grad_output = grad_output.contiguous()
        if len(grad_output.shape) > 2:
            grad_output = grad_output.view(-1, grad_output.shape[-1])
            total_input = total_input.view(-1, total_input.shape[-1])
        grad_weight = grad_output.t().matmul(total_input)
        grad_bias = grad_output.sum(dim=0) if ctx.use_bias else None
        return grad_input, grad_weight, grad_bias


class ColumnLinear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x):
        return LinearWithAsyncCommunication.apply(x, self.weight, self.bias)


class RowLinear(nn.Module):
    def __init__(self, linear):
        super().__init__()
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x):
        out = F.linear(x, self.weight)  # reduce_forward: an identity here
        return out + self.bias if self.bias is not None else out


class VocabParallelEmbedding(nn.Module):
    """Rank 0 of VocabParallelEmbedding1D (embedding.py:386-400)."""

    def __init__(self, rows, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(rows, hidden,
                                               dtype=decoder_torch.DTYPE))
        self.start, self.end = 0, rows

    def forward(self, input_):
        input_mask = (input_ < self.start) | (input_ >= self.end)
        masked_input = input_.clone() - self.start
        masked_input[input_mask] = 0
        output_parallel = F.embedding(masked_input, self.weight)
        embedding_output = output_parallel.clone()
        embedding_output[input_mask, :] = 0.0
        return embedding_output  # reduce_forward: an identity here


class DistCrossEntropy(torch.autograd.Function):
    """loss.py:24-141 at rank 0 of `world` (the all-reduces identities)."""

    @staticmethod
    def forward(ctx, vocab_logits, target, vocab_size, world, dtype):
        logits_max = torch.max(vocab_logits, dim=-1)[0]
        delta = (vocab_size + world - 1) // world
        down_threshold, up_threshold = 0, min(delta, vocab_size)
        mask = (target < down_threshold) | (target >= up_threshold)
        masked_target = target.clone() - down_threshold
        masked_target[mask] = 0
        masked_target_1d = masked_target.view(-1).contiguous()
        vocab_logits = vocab_logits - logits_max.unsqueeze(dim=-1)
        logits_2d = vocab_logits.view(-1, vocab_logits.size()[-1])
        idx = torch.arange(start=0, end=logits_2d.shape[0])
        pred_logits_1d = logits_2d[idx, masked_target_1d].contiguous()
        pred_logits = pred_logits_1d.view_as(target)
        pred_logits[mask] = 0.0
        exp_logits = vocab_logits
        torch.exp(vocab_logits, out=exp_logits)
        sum_exp_logits = torch.sum(exp_logits, dim=-1, dtype=torch.float32)
        loss = torch.where(target == IGNORE_INDEX, 0.0,
                           torch.log(sum_exp_logits) - pred_logits)
        loss = torch.sum(loss)  # mode "sum"
        exp_logits = exp_logits.div(sum_exp_logits.unsqueeze(dim=-1)).to(dtype)
        exp_logits[target == IGNORE_INDEX] = 0.0
        ctx.save_for_backward(exp_logits, mask, masked_target_1d)
        ctx.dtype = dtype
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        exp_logits, mask, masked_target_1d = ctx.saved_tensors
        grad_logits = exp_logits
        grad_logits_2d = grad_logits.view(-1, grad_logits.shape[-1])
        update = 1.0 - mask.view(-1).float().to(ctx.dtype)
        grad_logits_2d[torch.arange(0, grad_logits_2d.shape[0]),
                       masked_target_1d] -= update
        scale = grad_output.unsqueeze(dim=-1)
        if CUDA_MUL:
            scale = scale.to(grad_logits.dtype)
        grad_logits.mul_(scale)
        return grad_logits, None, None, None, None


def dist_cross_entropy(labels, logits, vocab_size, world, dtype):
    """loss.py:263-340 without sequence parallelism, labels (b, s)."""
    labels = labels[..., 1:]
    logits = logits[..., :-1, :]
    labels = labels.contiguous()
    logits = logits.contiguous()
    num_nonzero = (labels != IGNORE_INDEX).sum()
    labels = labels.view(-1)
    logits = logits.view(-1, logits.shape[-1])
    loss = DistCrossEntropy.apply(logits, labels, vocab_size, world, dtype)
    return (loss / num_nonzero).squeeze()


def local_config(c, t):
    """decoder_torch's config at one rank's shapes (the policy's
    attribute_replacement: heads and kv heads / t)."""
    out = dict(c)
    out["heads"] = c["heads"] // t
    out["kv_heads"] = c["kv_heads"] // t
    out["intermediate"] = split(c["intermediate"], t)
    return out


def build(c, t, family):
    """(model, forward) of tp rank 0 of `family` (llama, mistral, qwen2,
    qwen3, gpt2; gptj and mixtral: tp_gptj_mixtral_torch.py) at tp size t
    for decoder_torch config `c`."""
    import tp_gptj_mixtral_torch  # its stand-ins build on these
    if family in tp_gptj_mixtral_torch.FAMILIES:
        return tp_gptj_mixtral_torch.build(c, t, family)
    if family not in LOSS:
        raise ValueError(f"no tp stand-in for {family}")
    gpt2 = family == "gpt2"
    if gpt2:  # the whole GPT-2, its blocks then sharded
        model = decoder_torch.build(c)
        tp_gpt2_torch.shard_blocks(model, c, t)
    else:
        model = decoder_torch.build(local_config(c, t))
    h, v = c["hidden"], c["vocab"]
    for layer in [] if gpt2 else model.layers:
        attn, mlp = layer.self_attn, layer.mlp
        for name in ("q_proj", "k_proj", "v_proj"):
            setattr(attn, name, ColumnLinear(getattr(attn, name)))
        attn.o_proj = RowLinear(attn.o_proj)
        for name in ("gate_proj", "up_proj"):
            setattr(mlp, name, ColumnLinear(getattr(mlp, name)))
        mlp.down_proj = RowLinear(mlp.down_proj)
    if family == "qwen3":  # plain Linear1D_Col (v % t refused, v < t whole)
        head_rows, valid, vocab_size, sliced = split(v, t), split(v, t), v, False
    else:
        vocab_size = padded_vocab(v, t)
        head_rows = vocab_size // t
        valid, sliced = min(head_rows, v), True
    embedding = VocabParallelEmbedding(padded_vocab(v, t) // t, h)
    if gpt2:
        model.wte = embedding
    else:
        model.embed_tokens = embedding
    head_weight = nn.Parameter(torch.randn(head_rows, h,
                                           dtype=decoder_torch.DTYPE))
    if c["tied"]:
        head_weight = embedding.weight
    upcast, fp32_loss = LOSS[family]

    def forward(input_ids, attention_mask, labels):
        # The model's forward without its head and loss, then ColossalAI's.
        hidden = model.hidden(input_ids, attention_mask)
        logits = LinearWithAsyncCommunication.apply(hidden, head_weight,
                                                    None)
        if sliced:
            logits = logits[..., :valid]
        if upcast:
            logits = logits.float()
        dtype = torch.float32 if fp32_loss else decoder_torch.DTYPE
        loss = dist_cross_entropy(labels, logits, vocab_size, t, dtype)
        return loss, logits

    model.lm_head = None  # replaced by the head above
    model.tp_head_weight = head_weight  # model state, as the head's weight
    return model, forward
