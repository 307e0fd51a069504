"""Tp rank 0 of a small GPT-2 as ColossalAI's ShardFormer runs it under
GeminiPlugin(tp_size=t, enable_sequence_parallelism=True) where the world
is the tp group (zero x extra_dp = 1, the only mesh it runs on: docs/
tensor-parallelism.md), in one process: tp_gpt2_torch.py's rank with the
sequence split, every collective replaced by a stand-in that allocates
what the collective allocates on rank 0 (the other ranks' shards are
copies of rank 0's: the values differ, the bytes do not). Written from
ColossalAI 4f9953be (colossalai/shardformer/modeling/gpt2.py,
layer/qkv_fused_linear.py, layer/_operation.py, policies/gpt2.py, read
with the fetch tool), not from chunkplan's C++.

GeminiPlugin passes no mode, so ShardConfig's __post_init__ sets
split_gather, and no sequence group (None: the world, here the tp group).
What changes against tp_gpt2_torch.py (file:line at 4f9953be):
  * gpt2_model_forward (modeling/gpt2.py:116-341): the embedding, the
    positions and the dropout over the whole sequence, then
    split_forward_gather_backward(hidden_states, dim=1, tp group)
    (:238-244: _SplitForwardGatherBackward, _operation.py:982-1012;
    _split (:1191-1208) keeps rank 0's s / t rows as a clone); the blocks
    on (b, s / t, h); gather_sp_output (:1378-1393, the sequence group,
    None: the world) before ln_f: _GatherForwardSplitBackward (:1058-1079)
    whose _gather (:1211-1226) allocates t empty shards and their cat.
  * attn.c_attn and mlp.c_fc (GPT2FusedLinearConv1D_Col with
    seq_parallel_mode "split_gather", qkv_fused_linear.py:376-387) call
    matmul_gather_forward_reducescatter_backward ->
    _MatmulWithGatherForwardReduceScatterBackward (_operation.py:858-979):
    ctx.save_for_backward(input_, weight, bias) (the rank's shard) and
    ctx.gathered_input = _gather(input_, 1, ...) (b, s, h): a ctx
    attribute, so it lives as long as the autograd node (past its own
    backward, until the graph is freed); torch.matmul(gathered, weight)
    + bias. Backward: grad_output @ weight.T (b, s, h), its t chunks
    .contiguous(), torch.empty(input_.shape) for the reduce-scatter,
    gathered.t() @ grad_output, grad_output.sum(0).
  * attn.c_proj and mlp.c_proj (GPT2FusedLinearConv1D_Row, :617-624):
    torch.matmul(input_, weight) (b, s, h), then
    reducescatter_forward_gather_backward ->
    _ReduceScatterForwardGatherBackward (_operation.py:819-855: the t
    chunks .contiguous(), torch.empty((b, s / t, h)); saves nothing;
    backward _gather of the gradient), then + bias.
  * GPT2Block (transformers) unchanged: ln_1, the residuals, ln_2 and the
    residual dropouts over (b, s / t, h); the attention over the whole
    sequence at a / t heads; the MLP over (b, s, I / t).
"""

import torch

import tp_decoder_torch
import tp_gpt2_torch


def gather(x, t):
    """_gather over t ranks along dim 1 (_operation.py:1211-1226): t
    empty_like shards (all_gather's outputs; rank 0's holds x) and their
    cat, the shards freed on return."""
    x = x.contiguous()
    shards = [torch.empty_like(x) for _ in range(t)]
    for shard in shards:
        shard.copy_(x)
    return torch.cat(shards, dim=1).contiguous()


def split(x, t):
    """_split over t ranks along dim 1 (_operation.py:1191-1208): rank 0's
    rows as a clone."""
    return torch.split(x, x.size(1) // t, dim=1)[0].clone().contiguous()


def reduce_scatter(x, t):
    """The reduce-scatter of _ReduceScatterForwardGatherBackward and of the
    Col's backward: the t chunks .contiguous() (copies unless b is 1) and
    torch.empty of one chunk's shape, which receives the sum (rank 0's
    chunk stands in for it)."""
    chunks = [c.contiguous() for c in torch.chunk(x, t, dim=1)]
    out = torch.empty(chunks[0].shape, dtype=x.dtype)
    out.copy_(chunks[0])
    return out


class SplitForwardGatherBackward(torch.autograd.Function):
    """_operation.py:982-1012."""

    @staticmethod
    def forward(ctx, x, t):
        ctx.t = t
        return split(x, t)

    @staticmethod
    def backward(ctx, grad):
        return gather(grad, ctx.t), None


class GatherForwardSplitBackward(torch.autograd.Function):
    """_operation.py:1058-1079 (grad_scale None under split_gather)."""

    @staticmethod
    def forward(ctx, x, t):
        ctx.t = t
        return gather(x, t)

    @staticmethod
    def backward(ctx, grad):
        return split(grad, ctx.t), None


class ReduceScatterForwardGatherBackward(torch.autograd.Function):
    """_operation.py:819-855."""

    @staticmethod
    def forward(ctx, x, t):
        ctx.t = t
        return reduce_scatter(x, t)

    @staticmethod
    def backward(ctx, grad):
        return gather(grad, ctx.t), None


class MatmulWithGatherForwardReduceScatterBackward(torch.autograd.Function):
    """_operation.py:858-979 (ring False, async reduce-scatter, Gemini's
    weight.grad None: the plain weight gradient). The gathered input is
    also passed to save_for_backward so that the saved-bytes count sees it
    (the same storage; ctx.gathered_input keeps ColossalAI's lifetime)."""

    @staticmethod
    def forward(ctx, input_, weight, bias, t):
        gathered = gather(input_, t)
        ctx.save_for_backward(input_, weight, bias, gathered)
        ctx.gathered_input = gathered
        ctx.t = t
        output = torch.matmul(gathered, weight)
        return output + bias

    @staticmethod
    def backward(ctx, grad_output):
        input_, weight, _, _ = ctx.saved_tensors
        weight = weight.view(weight.shape)
        total_input = ctx.gathered_input
        grad_input = grad_output.matmul(weight.T)
        grad_output = grad_output.contiguous()
        grad_output = grad_output.view(-1, grad_output.shape[-1])
        total_input = total_input.view(-1, total_input.shape[-1])
        output = reduce_scatter(grad_input, ctx.t)
        grad_weight = total_input.t().matmul(grad_output)
        grad_bias = grad_output.sum(dim=0)
        return output, grad_weight, grad_bias, None


class FusedConv1DColSp(tp_gpt2_torch.FusedConv1D):
    """GPT2FusedLinearConv1D_Col under split_gather at rank 0."""

    def __init__(self, n_in, n_out, t):
        super().__init__(n_in, n_out)
        self.t = t

    def forward(self, x):
        return MatmulWithGatherForwardReduceScatterBackward.apply(
            x, self.weight, self.bias, self.t)


class FusedConv1DRowSp(tp_gpt2_torch.FusedConv1D):
    """GPT2FusedLinearConv1D_Row under split_gather at rank 0."""

    def __init__(self, n_in, n_out, t):
        super().__init__(n_in, n_out)
        self.t = t

    def forward(self, x):
        out = torch.matmul(x, self.weight)
        out = ReduceScatterForwardGatherBackward.apply(out, self.t)
        return out + self.bias


def build(c, t):
    """(model, forward) of tp rank 0 of GPT-2 at tp size t with sequence
    parallelism, for decoder_torch config `c` (s divisible by t: _split
    asserts it)."""
    model, forward = tp_decoder_torch.build(c, t, "gpt2")
    h, inter = c["hidden"], c["intermediate"]
    for block in model.h:
        attn, mlp = block.attn, block.mlp
        attn.c_attn = FusedConv1DColSp(h, 3 * h // t, t)
        attn.c_proj = FusedConv1DRowSp(h // t, h, t)
        mlp.c_fc = FusedConv1DColSp(h, inter // t, t)
        mlp.c_proj = FusedConv1DRowSp(inter // t, h, t)
    model.split_sequence = lambda x: SplitForwardGatherBackward.apply(x, t)
    model.gather_sequence = lambda x: GatherForwardSplitBackward.apply(x, t)
    return model, forward
