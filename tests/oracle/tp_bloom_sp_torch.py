"""Tp rank 0 of a small BLOOM as ColossalAI's ShardFormer runs it under
GeminiPlugin(tp_size=t, enable_sequence_parallelism=True), in one
process: tp_opt_bloom_falcon_torch.py's rank with the sequence split,
every collective replaced by tp_gpt2_sp_torch.py's stand-ins (they
allocate what the collective allocates on rank 0; the other ranks' shards
are copies of rank 0's: the values differ, the bytes do not). Written
from ColossalAI 4f9953be (colossalai/shardformer/policies/bloom.py,
modeling/bloom.py, layer/linear.py, layer/_operation.py, read with the
fetch tool), not from chunkplan's C++.

GeminiPlugin passes no mode, so ShardConfig's __post_init__ sets
split_gather; BLOOM's policy keeps it (policies/bloom.py:53-61: it
asserts "all_to_all sequence parallelism is not supported for BLOOM" and
turns "ring" into split_gather with a warning) and, unlike GPT-2's,
splits and gathers over the tp group, whatever the mesh. What changes
against tp_opt_bloom_falcon_torch.py (file:line at 4f9953be):
  * BloomModel.forward is get_bloom_sequence_parallel_forward_fn
    (policies/bloom.py:240-245; modeling/bloom.py:933-1092): the
    embedding, word_embeddings_layernorm (:1003), the ALiBi tensor and the
    causal mask over the whole sequence, then
    split_forward_gather_backward(hidden_states, dim=1, tp group)
    (:1020-1025: _split keeps rank 0's s / t rows as a clone); the blocks
    on (b, s / t, h) with the same positional checkpoint arguments
    (:1031-1042); gather_forward_split_backward over the tp group
    (:1063-1068) before ln_f, over the whole sequence.
  * BloomAttention.forward is get_bloom_sequence_parallel_attention_forward
    (policies/bloom.py:65-72; modeling/bloom.py:848-930): transformers'
    eager path (falcon_bloom_torch.BloomAttention) with q_length read back
    from the query, the whole sequence (:884-885: its sequence_parallel
    flag), and dropout_add on the rank's shard.
  * query_key_value and dense_h_to_4h (Linear1D_Col with
    seq_parallel_mode "split_gather", layer/linear.py:344-354) call
    linear_gather_forward_reducescatter_backward ->
    _LinearWithGatherForwardReduceScatterBackward (_operation.py:527-643,
    ring False): ctx.save_for_backward(input_, weight, bias) (the shard)
    and ctx.gathered_input = _gather(input_, 1, ...) (b, s, h): a ctx
    attribute, alive as long as the autograd node; F.linear(gathered,
    weight, bias). Backward: grad_output.matmul(weight) (b, s, h), its t
    chunks .contiguous(), torch.empty(input_.shape) for the async
    reduce-scatter, grad_output.t().matmul(total_input) (Gemini's
    weight.grad is None), grad_output.sum(0).
  * dense and dense_4h_to_h (Linear1D_Row, layer/linear.py:577-595) call
    linear_reducescatter_forward_gather_backward(input_, weight) without
    the bias -> _LinearWithReduceScatterForwardGatherBackward
    (_operation.py:704-816): ctx.save_for_backward(input_, weight, None);
    F.linear(input_, weight) (b, s, h), its t chunks .contiguous(),
    torch.empty((b, s / t, h)) for the reduce-scatter; then + bias
    (linear.py:590-592). Backward: _gather of the gradient,
    grad_output.matmul(weight), grad_output.t().matmul(input_).
  * BloomBlock, BloomMLP and GeLUFunction (transformers) unchanged: the
    norms and dropout_add over (b, s / t, h), the attention over the
    whole sequence at heads / t, the MLP over (b, s, 4h / t).
"""

import torch
from torch import nn

import decoder_torch
import falcon_bloom_torch
import tp_opt_bloom_falcon_torch
from tp_decoder_torch import split as split_width
from tp_gpt2_sp_torch import (GatherForwardSplitBackward,
                              SplitForwardGatherBackward, gather,
                              reduce_scatter)


class LinearWithGatherForwardReduceScatterBackward(torch.autograd.Function):
    """_operation.py:527-643 (ring False, async reduce-scatter, Gemini's
    weight.grad None). The gathered input is also passed to
    save_for_backward so that the saved-bytes count sees it (the same
    storage; ctx.gathered_input keeps ColossalAI's lifetime)."""

    @staticmethod
    def forward(ctx, input_, weight, bias, t):
        gathered = gather(input_, t)
        ctx.save_for_backward(input_, weight, bias, gathered)
        ctx.gathered_input = gathered
        ctx.t = t
        return torch.nn.functional.linear(gathered, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input_, weight, bias, _ = ctx.saved_tensors
        bias = bias.view(bias.shape)
        total_input = ctx.gathered_input
        grad_input = grad_output.matmul(weight)
        grad_output = grad_output.contiguous()
        grad_output = grad_output.view(-1, grad_output.shape[-1])
        total_input = total_input.view(-1, total_input.shape[-1])
        output = reduce_scatter(grad_input, ctx.t)
        grad_weight = grad_output.t().matmul(total_input)
        grad_bias = grad_output.sum(dim=0)
        return output, grad_weight, grad_bias, None


class LinearWithReduceScatterForwardGatherBackward(torch.autograd.Function):
    """_operation.py:704-816 (ring False, no bias: Linear1D_Row adds it
    after)."""

    @staticmethod
    def forward(ctx, input_, weight, t):
        ctx.save_for_backward(input_, weight)
        ctx.t = t
        partial_output = torch.nn.functional.linear(input_, weight)
        return reduce_scatter(partial_output, t)

    @staticmethod
    def backward(ctx, grad_output):
        input_, weight = ctx.saved_tensors
        grad_output = gather(grad_output, ctx.t)
        total_input = input_
        grad_input = grad_output.matmul(weight)
        grad_output = grad_output.contiguous()
        grad_output = grad_output.view(-1, grad_output.shape[-1])
        total_input = total_input.reshape(-1, total_input.shape[-1])
        grad_weight = grad_output.t().matmul(total_input)
        return grad_input, grad_weight, None


class LinearSp(nn.Module):
    """A rank's (o, i) weight and (o,) bias, t the tp size."""

    def __init__(self, i, o, t):
        super().__init__()
        self.t = t
        self.weight = nn.Parameter(torch.randn(o, i, dtype=decoder_torch.DTYPE))
        self.bias = nn.Parameter(torch.randn(o, dtype=decoder_torch.DTYPE))


class ColumnSp(LinearSp):
    """Linear1D_Col under split_gather at rank 0: o / t output rows."""

    def __init__(self, i, o, t):
        super().__init__(i, split_width(o, t), t)

    def forward(self, x):
        return LinearWithGatherForwardReduceScatterBackward.apply(
            x, self.weight, self.bias, self.t)


class RowSp(LinearSp):
    """Linear1D_Row under split_gather at rank 0: i / t input columns, the
    whole bias added after the reduce-scatter."""

    def __init__(self, i, o, t):
        super().__init__(split_width(i, t), o, t)

    def forward(self, x):
        out = LinearWithReduceScatterForwardGatherBackward.apply(
            x, self.weight, self.t)
        return out + self.bias


def sequence_parallel_hidden(model, t):
    """get_bloom_sequence_parallel_forward_fn's BloomModel.forward
    (modeling/bloom.py:975-1071) for a 2-D mask of ones, no cache, no head
    mask: lm_head's input."""
    c = model.c

    def hidden(input_ids, attention_mask):
        inputs_embeds = model.word_embeddings(input_ids)
        cache_position = torch.arange(0, inputs_embeds.shape[1])
        hidden_states = model.word_embeddings_layernorm(inputs_embeds)
        alibi = model.build_alibi_tensor(attention_mask, c["heads"],
                                         dtype=hidden_states.dtype)
        with torch.no_grad():
            causal_mask = decoder_torch.LlamaForCausalLM.causal_mask(
                model, attention_mask, inputs_embeds, cache_position)
        hidden_states = SplitForwardGatherBackward.apply(hidden_states, t)
        for block in model.h:
            args = (hidden_states, alibi, causal_mask, None, None, False,
                    False, cache_position)
            hidden_states = falcon_bloom_torch.run_layer(
                block, args, model.gradient_checkpointing)[0]
        hidden_states = GatherForwardSplitBackward.apply(hidden_states, t)
        return model.ln_f(hidden_states)

    return hidden


def build(c, t):
    """(model, forward) of tp rank 0 of BLOOM at tp size t with sequence
    parallelism, for falcon_bloom_torch's config `c` (s divisible by t:
    _split asserts it)."""
    model, forward = tp_opt_bloom_falcon_torch.build(c, t, "bloom")
    h = c["hidden"]
    for block in model.h:
        attn, mlp = block.self_attention, block.mlp
        attn.query_key_value = ColumnSp(h, 3 * h, t)
        attn.dense = RowSp(h, h, t)
        mlp.dense_h_to_4h = ColumnSp(h, 4 * h, t)
        mlp.dense_4h_to_h = RowSp(4 * h, h, t)
        attn.sequence_parallel = True
    model.hidden = sequence_parallel_hidden(model, t)
    return model, forward
