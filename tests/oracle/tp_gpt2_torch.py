"""Tp rank 0 of a small GPT-2 as ColossalAI's ShardFormer runs it under
GeminiPlugin(tp_size=t) without sequence parallelism, in one process: the
GPT-2 of decoder_torch.py with its fused Conv1D layers, its embedding, its
lm_head and its loss replaced by stand-ins that save for backward exactly
what ColossalAI's autograd functions save, every collective an identity.
Written from ColossalAI 4f9953be (colossalai/shardformer/policies/gpt2.py,
layer/qkv_fused_linear.py, layer/_operation.py, layer/dropout.py,
modeling/gpt2.py, read with the fetch tool), not from chunkplan's C++.

What the policy does (policies/gpt2.py:62-136, GPT2LMHeadModelPolicy
:384-418), and what each stand-in saves (file:line at 4f9953be):
  * attn.c_attn and mlp.c_fc become GPT2FusedLinearConv1D_Col: a Conv1D
    weight [in, out / t] (c_attn's q, k and v each split, so a rank's
    columns are its q, then its k, then its v heads); forward
    (qkv_fused_linear.py:368-414) calls matmul_with_async_comm ->
    MatmulWithAsyncCommunication (_operation.py:76-167):
    ctx.save_for_backward(input_, weight, bias) (:83), torch.matmul then
    + bias; backward grad_output @ weight.T, input.t() @ grad_output,
    grad_output.sum(0) (the all-reduce of grad_input an identity here).
  * attn.c_proj and mlp.c_proj become GPT2FusedLinearConv1D_Row: weight
    [in / t, out], the whole bias; forward (:579-634) torch.matmul(input_,
    weight) (autograd's: saves its input), reduce_forward (saves nothing),
    then output + bias.
  * The attention keeps transformers' GPT2Attention (no flash attention):
    attribute_replacement makes embed_dim and split_size h / t and
    num_heads a / t; head_dim stays h / a.
  * Every dropout becomes DropoutForParallelInput (layer/dropout.py:
    nn.Dropout's forward under a forked RNG): the same mask.
  * wte is VocabParallelEmbedding1D and lm_head VocabParallelLMHead1D
    (gather_output False): tp_decoder_torch's stand-ins, the weight tied.
  * With parallel_output (ShardConfig's default) the policy replaces
    GPT2LMHeadModel.forward by gpt2_lmhead_model_forward (modeling/
    gpt2.py:344-431): ColossalAI's gpt2_model_forward (:116-341; without
    sequence parallelism the embedding, positions (1, s), dropout, the
    (b, 1, 1, s) mask of _get_attention_mask (:34-105), the blocks with the
    same checkpoint arguments and ln_f, as decoder_torch's hidden()), then
    lm_head's 16-bit logits and dist_cross_entropy(labels, lm_logits, ...,
    self.transformer.dtype): the model's 16 bits, as LLaMA's.
"""

import torch
from torch import nn

import decoder_torch


class MatmulWithAsyncCommunication(torch.autograd.Function):
    """_operation.py:76-167 (the all-reduce of grad_input an identity)."""

    @staticmethod
    def forward(ctx, input_, weight, bias):
        ctx.save_for_backward(input_, weight, bias)
        ctx.use_bias = bias is not None
        output = torch.matmul(input_, weight)
        if bias is not None:
            output = output + bias
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input_, weight, bias = ctx.saved_tensors
        weight = weight.view(weight.shape)
        total_input = input_
        grad_input = grad_output.matmul(weight.T)
        grad_output = grad_output.contiguous()
        if len(grad_output.shape) > 2:
            grad_output = grad_output.view(-1, grad_output.shape[-1])
            total_input = total_input.view(-1, total_input.shape[-1])
        grad_weight = total_input.t().matmul(grad_output)
        grad_bias = grad_output.sum(dim=0) if ctx.use_bias else None
        return grad_input, grad_weight, grad_bias


class FusedConv1D(nn.Module):
    """A Conv1D-shaped weight [n_in, n_out] and bias [n_out]."""

    def __init__(self, n_in, n_out):
        super().__init__()
        self.weight = nn.Parameter(
            torch.randn(n_in, n_out, dtype=decoder_torch.DTYPE) * 0.02)
        self.bias = nn.Parameter(torch.zeros(n_out,
                                             dtype=decoder_torch.DTYPE))


class FusedConv1DCol(FusedConv1D):
    """GPT2FusedLinearConv1D_Col at rank 0: weight [in, out / t]."""

    def forward(self, x):
        return MatmulWithAsyncCommunication.apply(x, self.weight, self.bias)


class FusedConv1DRow(FusedConv1D):
    """GPT2FusedLinearConv1D_Row at rank 0: weight [in / t, out], the whole
    bias."""

    def forward(self, x):
        out = torch.matmul(x, self.weight)  # reduce_forward: an identity
        return out + self.bias


def shard_blocks(model, c, t):
    """Each block of decoder_torch's GPT-2 (config `c`, whole) as rank 0
    of tp size t keeps it."""
    h, a = c["hidden"], c["heads"]
    inter = c["intermediate"]
    for block in model.h:
        attn, mlp = block.attn, block.mlp
        attn.embed_dim = attn.split_size = h // t
        attn.num_heads = a // t
        attn.c_attn = FusedConv1DCol(h, 3 * h // t)
        attn.c_proj = FusedConv1DRow(h // t, h)
        mlp.c_fc = FusedConv1DCol(h, inter // t)
        mlp.c_proj = FusedConv1DRow(inter // t, h)
