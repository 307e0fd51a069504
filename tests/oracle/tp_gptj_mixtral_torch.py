"""Tp rank 0 of a small GPT-J and a small Mixtral as ColossalAI's
ShardFormer runs them under GeminiPlugin(tp_size=t) without sequence
parallelism, in one process: layer_norm_torch's GPT-J and decoder_torch's
Mixtral with their linear layers, embedding and lm_head replaced by
stand-ins that save for backward exactly what ColossalAI's autograd
functions save, every collective an identity (a gather copies rank 0's
columns into the other ranks' places). Written from ColossalAI 4f9953be
(colossalai/shardformer/policies/{gptj,mixtral}.py, layer/{linear,
embedding,_operation,dropout}.py, modeling/{gptj,mixtral}.py, read with the
fetch tool), not from chunkplan's C++.

Neither policy replaces the causal-LM forward under tensor parallelism
without pipeline, flash attention or sequence parallelism (GPT-J ignores
sequence parallelism with a warning; Mixtral's forwards are swapped only
with it or a pipeline): transformers' own GPTJForCausalLM.forward and
MixtralForCausalLM.forward run, with transformers' own loss, on the logits
lm_head gathers (gather_output=True).

GPT-J (policies/gptj.py:36-258, GPTJForCausalLMPolicy :347-395):
  * attn.q_proj, k_proj, v_proj and mlp.fc_in are Linear1D_Col, attn.
    out_proj and mlp.fc_out Linear1D_Row (tp_decoder_torch's ColumnLinear
    and RowLinear); attribute_replacement makes attn.embed_dim h / t and
    attn.num_attention_heads a / t; head_dim (h / a, set at init) and the
    rotary table (embed_positions, rotary_dim wide) stay, so RoPE runs on
    the rank's heads.
  * drop, attn.attn_dropout, attn.resid_dropout and mlp.dropout become
    DropoutForParallelInput (nn.Dropout's mask under a forked RNG).
  * wte is VocabParallelEmbedding1D; lm_head is VocabParallelLMHead1D with
    gather_output=True (policies/gptj.py:356-369): Linear1D_Col's forward
    on the padded / t rows and their padded bias (linear_with_async_comm
    saves input, weight, bias), gather_forward_split_backward (:365-369 of
    layer/linear.py), then output[..., :vocab] (linear.py:796-797).
    GPTJForCausalLM then casts to fp32 and runs ForCausalLMLoss.
Mixtral (policies/mixtral.py:41-282, MixtralForCausalLMPolicy :373-395),
without an ep_group (GeminiPlugin makes none: ShardConfig.ep_group is
None, so :229-246's EPMixtralSparseMoeBlock is not swapped in):
  * self_attn.q_proj, k_proj, v_proj Linear1D_Col, o_proj Linear1D_Row;
    attribute_replacement num_heads a / t, num_key_value_heads kv / t.
  * block_sparse_moe.gate is Linear1D_Col with gather_output=True
    (:154-161): the router's logits are gathered (num_experts / t columns
    each; kept a plain nn.Linear where num_experts < t); the experts stay
    transformers' MixtralBlockSparseTop2MLPs, whole on every rank.
  * embed_tokens is VocabParallelEmbedding1D; lm_head Linear1D_Col with
    gather_output=True (vocab / t rows, no padding, no slice).
"""

import torch
from torch import nn

import decoder_torch
import layer_norm_torch
import tp_decoder_torch
from tp_decoder_torch import (ColumnLinear, LinearWithAsyncCommunication,
                              RowLinear, VocabParallelEmbedding, padded_vocab,
                              split)

FAMILIES = ("gptj", "mixtral")


class GatherForwardSplitBackward(torch.autograd.Function):
    """_GatherForwardSplitBackward (_operation.py:1058-1079) over the last
    dim at rank 0 of t: _gather (:1211-1226) fills t empty_like buffers
    (here each with rank 0's columns) and concatenates them; the backward's
    _split (:1191-1208) clones rank 0's columns of the gradient. Saves
    nothing."""

    @staticmethod
    def forward(ctx, input_, t):
        ctx.t = t
        input_ = input_.contiguous()
        tensor_list = [torch.empty_like(input_) for _ in range(t)]
        for part in tensor_list:
            part.copy_(input_)  # dist.all_gather
        return torch.cat(tensor_list, dim=-1).contiguous()

    @staticmethod
    def backward(ctx, grad_output):
        size = grad_output.size(-1) // ctx.t
        parts = torch.split(grad_output, size, dim=-1)
        return parts[0].clone().contiguous(), None


class GatheredColumnLinear(nn.Module):
    """Linear1D_Col with gather_output=True at rank 0 (linear.py:331-377):
    linear_with_async_comm on the rank's rows, then the gather; where
    `keep` (VocabParallelLMHead1D, linear.py:788-800), the gathered columns
    sliced to the first `keep`."""

    def __init__(self, weight, bias, t, keep=None):
        super().__init__()
        self.weight, self.bias, self.t, self.keep = weight, bias, t, keep

    def forward(self, x):
        out = LinearWithAsyncCommunication.apply(x, self.weight, self.bias)
        out = GatherForwardSplitBackward.apply(out, self.t)
        return out if self.keep is None else out[..., :self.keep]


def parameter(*shape):
    return nn.Parameter(torch.randn(*shape, dtype=decoder_torch.DTYPE) * 0.02)


def column(n_in, n_out, bias):
    return ColumnLinear(decoder_torch.linear(n_in, n_out, bias))


def row(n_in, n_out, bias):
    return RowLinear(decoder_torch.linear(n_in, n_out, bias))


def build_gptj(c, t):
    """GPT-J (layer_norm_torch's config `c`, whole) at tp rank 0."""
    model = layer_norm_torch.build(c)
    h, v, inter = c["hidden"], c["vocab"], split(c["intermediate"], t)
    for block in model.h:
        attn, mlp = block.attn, block.mlp
        attn.num_attention_heads = c["heads"] // t  # head_dim stays h / a
        for name in ("k_proj", "q_proj", "v_proj"):
            setattr(attn, name, column(h, h // t, False))
        attn.out_proj = row(h // t, h, False)
        mlp.fc_in = column(h, inter, True)
        mlp.fc_out = row(inter, h, True)
    rows = padded_vocab(v, t) // t
    model.wte = VocabParallelEmbedding(rows, h)
    weight = model.wte.weight if c["tied"] else parameter(rows, h)
    bias = nn.Parameter(torch.zeros(rows, dtype=decoder_torch.DTYPE))
    model.lm_head = GatheredColumnLinear(weight, bias, t, keep=v)
    return model, model


def build_mixtral(c, t):
    """Mixtral (decoder_torch's config `c`, whole, untied) at tp rank 0."""
    if c["tied"]:
        raise ValueError("a tied Mixtral lm_head is not modelled at tp > 1")
    model = decoder_torch.build(tp_decoder_torch.local_config(c, t))
    h, v = c["hidden"], c["vocab"]
    for layer in model.layers:
        attn = layer.self_attn
        for name in ("q_proj", "k_proj", "v_proj"):
            setattr(attn, name, ColumnLinear(getattr(attn, name)))
        attn.o_proj = RowLinear(attn.o_proj)
        moe = layer.mlp
        experts = moe.num_experts
        if experts >= t:  # from_native_module keeps it whole below t
            moe.gate = GatheredColumnLinear(parameter(experts // t, h), None,
                                            t)
    model.embed_tokens = VocabParallelEmbedding(padded_vocab(v, t) // t, h)
    model.lm_head = (GatheredColumnLinear(parameter(v // t, h), None, t)
                     if v >= t else decoder_torch.linear(h, v, False))
    return model, model


def build(c, t, family):
    """(model, forward) of tp rank 0 of `family` (gptj, mixtral) at tp size
    t for measure_torch's config `c`; forward(ids, mask, labels) returns
    (loss, logits) as the model's forward does."""
    if family == "gptj":
        return build_gptj(c, t)
    if family == "mixtral":
        return build_mixtral(c, t)
    raise ValueError(f"no tp stand-in for {family}")
