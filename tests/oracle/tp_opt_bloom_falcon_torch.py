"""Tp rank 0 of a small OPT, BLOOM or Falcon as ColossalAI's ShardFormer
runs it under GeminiPlugin(tp_size=t) without sequence parallelism, in one
process: the models of layer_norm_torch.py and falcon_bloom_torch.py with
the linear layers, the embedding, lm_head and the loss the policy replaces
swapped for tp_decoder_torch.py's stand-ins (each saves for backward
exactly what ColossalAI's autograd function saves; every collective an
identity). Written from ColossalAI 4f9953be (colossalai/shardformer/
policies/{opt,bloom,falcon}.py, modeling/{opt,bloom,falcon}.py,
layer/{linear,embedding,dropout,loss,normalization}.py, read with the
fetch tool), not from chunkplan's C++.

GeminiPlugin's ShardConfig leaves enable_fused_normalization,
enable_flash_attention, enable_jit_fused and enable_all_optimization
False and parallel_output True, and there is no pipeline: so every norm
stays the native nn.LayerNorm (layer/normalization.py:192-228,
LayerNorm.from_native_module returns the module), no fused or flash
forward is substituted, and the causal-LM forward is the policy's
get_lm_forward_with_dist_cross_entropy.

What each policy does (file:line at 4f9953be):
  * OPT (policies/opt.py:82-144, 364-444): q_proj, k_proj, v_proj, fc1
    Linear1D_Col; out_proj, fc2 Linear1D_Row; the attention's embed_dim
    and num_heads / t; embed_tokens VocabParallelEmbedding1D, lm_head
    VocabParallelLMHead1D; postprocess (:433-444) ties lm_head's weight to
    embed_tokens' whatever tie_word_embeddings says; the dropouts are
    functional (nn.functional.dropout): the same masks. The forward
    (modeling/opt.py:846-968): the decoder as transformers runs it, then
    self.lm_head(outputs[0]).contiguous() (the valid columns copied out of
    the padded output where they are fewer), dist_cross_entropy(...,
    self.model.decoder.dtype): 16-bit logits and loss.
  * BLOOM (policies/bloom.py:73-134, 360-398): query_key_value (a plain
    Linear1D_Col: BLOOM's fused rows are grouped per head, so rank 0 keeps
    its heads' q, k and v), dense_h_to_4h Col; dense, dense_4h_to_h Row;
    attention_dropout DropoutForParallelInput (nn.Dropout under a forked
    RNG: the same mask); hidden_size, split_size and num_heads / t;
    BloomModel.num_heads / t and build_alibi_tensor replaced by
    build_bloom_alibi_tensor (modeling/bloom.py:37-103: the slopes of all
    heads, then rank 0's num_heads / t of them, .to(dtype)). The forward
    (modeling/bloom.py:1095-1156): lm_head's 16-bit (padded, sliced)
    output, dist_cross_entropy(..., self.transformer.dtype).
  * Falcon (policies/falcon.py:33-121, 300-330; not for the old multi-query
    layout, where it turns tp off): query_key_value (plain Linear1D_Col:
    the new architecture's rows are grouped per key/value head, rank 0
    keeps num_kv_heads / t groups), dense_h_to_4h Col; dense, dense_4h_to_h
    Row; num_heads and num_kv_heads / t; FalconDecoderLayer.forward
    replaced (modeling/falcon.py:98-180: transformers 4.51.3's but
    `mlp_output = mlp_output + attention_output` out of place). The
    forward (modeling/falcon.py:742-815): lm_head's 16-bit output,
    lm_logits[..., :-1, :].contiguous() and labels[..., 1:].contiguous()
    into cross_entropy_1d(..., dtype=self.transformer.dtype) with its
    default mode "mean" (layer/loss.py:240-249: DistCrossEntropy saves the
    same three tensors; backward first scales grad_output by
    1 / num_non_zero).
"""

import torch
from torch import nn

import decoder_torch
import falcon_bloom_torch
import layer_norm_torch
import tp_decoder_torch
from tp_decoder_torch import ColumnLinear, RowLinear, split

FAMILIES = ("opt", "bloom", "falcon")


def column(i, o, bias, t):
    """Linear1D_Col at rank 0: o / t output rows (whole where o < t)."""
    return ColumnLinear(decoder_torch.linear(i, split(o, t), bias))


def row(i, o, bias, t):
    """Linear1D_Row at rank 0: i / t input columns, the whole bias."""
    return RowLinear(decoder_torch.linear(split(i, t), o, bias))


def shard_opt(model, c, t):
    h, inter, bias = c["hidden"], c["intermediate"], c["qkv_bias"]
    for layer in model.layers:
        attn = layer.self_attn
        attn.num_heads = c["heads"] // t
        for name in ("q_proj", "k_proj", "v_proj"):
            setattr(attn, name, column(h, h, bias, t))
        attn.out_proj = row(h, h, bias, t)
        layer.fc1 = column(h, inter, bias, t)
        layer.fc2 = row(inter, h, bias, t)


def shard_bloom(model, c, t):
    h = c["hidden"]
    for block in model.h:
        attn, mlp = block.self_attention, block.mlp
        attn.hidden_size = h // t
        attn.num_heads = c["heads"] // t
        attn.query_key_value = column(h, 3 * h, True, t)
        attn.dense = row(h, h, True, t)
        mlp.dense_h_to_4h = column(h, 4 * h, True, t)
        mlp.dense_4h_to_h = row(4 * h, h, True, t)

    def build_alibi_tensor(attention_mask, num_heads, dtype):
        # build_bloom_alibi_tensor at rank 0: every head's slopes, then
        # heads [0, num_heads / t) (a slice, reshaped), cast to dtype.
        b, s = attention_mask.shape
        alibi = falcon_bloom_torch.build_alibi_tensor(
            attention_mask, num_heads, torch.float32)
        alibi = alibi.view(b, num_heads, 1, s)[:, :num_heads // t, :, :]
        return alibi.reshape(b * (num_heads // t), 1, s).to(dtype)

    model.build_alibi_tensor = build_alibi_tensor


def shard_falcon(model, c, t):
    h, inter, bias = c["hidden"], c["intermediate"], c["bias"]
    d = h // c["heads"]
    for layer in model.h:
        attn, mlp = layer.self_attention, layer.mlp
        qkv = (2 * c["kv_heads"] + c["heads"]) * d if c["new_arch"] else 3 * h
        attn.num_heads = c["heads"] // t
        attn.num_kv_heads = c["kv_heads"] // t
        attn.query_key_value = column(h, qkv, bias, t)
        attn.dense = row(h, h, bias, t)
        mlp.dense_h_to_4h = column(h, inter, bias, t)
        mlp.dense_4h_to_h = row(inter, h, bias, t)
        layer.add_out_of_place = True


class MeanDistCrossEntropy(tp_decoder_torch.DistCrossEntropy):
    """DistCrossEntropy in mode "mean" (loss.py:112-116, 128-130): the sum
    divided by the count of non-zero losses (that count from the targets
    here: the same sizes), grad_output times its inverse first."""

    @staticmethod
    def forward(ctx, vocab_logits, target, vocab_size, world, dtype):
        loss = tp_decoder_torch.DistCrossEntropy.forward(
            ctx, vocab_logits, target, vocab_size, world, dtype)
        num_non_zero = torch.sum(target != tp_decoder_torch.IGNORE_INDEX)
        ctx.inv_num_non_zero = 1.0 / num_non_zero
        return loss.div_(num_non_zero)

    @staticmethod
    def backward(ctx, grad_output):
        grad_output = grad_output * ctx.inv_num_non_zero
        return tp_decoder_torch.DistCrossEntropy.backward(ctx, grad_output)


def falcon_loss(labels, lm_logits, vocab_size, world, dtype):
    """Falcon's forward (modeling/falcon.py:788-805): shift, flatten,
    cross_entropy_1d(mode="mean")."""
    shift_logits = lm_logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous()
    shift_logits = shift_logits.view(-1, shift_logits.shape[-1])
    shift_labels = shift_labels.view(-1)
    return MeanDistCrossEntropy.apply(shift_logits, shift_labels, vocab_size,
                                      world, dtype)


def build(c, t, family):
    """(model, forward) of tp rank 0 of `family` (one of FAMILIES) at tp
    size t for the whole model's config `c` (layer_norm_torch's for OPT,
    falcon_bloom_torch's otherwise)."""
    if family == "opt":
        model = layer_norm_torch.build(c)
        shard_opt(model, c, t)
        width, embedding_name = c["proj"], "embed_tokens"
    else:
        model = falcon_bloom_torch.build(c)
        (shard_bloom if family == "bloom" else shard_falcon)(model, c, t)
        width, embedding_name = c["hidden"], "word_embeddings"
    padded = tp_decoder_torch.padded_vocab(c["vocab"], t)
    rows = padded // t
    valid = min(rows, c["vocab"])
    embedding = tp_decoder_torch.VocabParallelEmbedding(rows, width)
    setattr(model, embedding_name, embedding)
    # OPT's postprocess ties the head under tp whatever the config says.
    if c["tied"] or family == "opt":
        head_weight = embedding.weight
    else:
        head_weight = nn.Parameter(torch.randn(rows, width,
                                               dtype=decoder_torch.DTYPE))
    dtype = decoder_torch.DTYPE  # the model's dtype: 16-bit loss

    def forward(input_ids, attention_mask, labels):
        hidden = model.hidden(input_ids, attention_mask)
        logits = tp_decoder_torch.LinearWithAsyncCommunication.apply(
            hidden, head_weight, None)[..., :valid]
        if family == "opt":
            logits = logits.contiguous()
        if family == "falcon":
            loss = falcon_loss(labels, logits, padded, t, dtype)
        else:
            loss = tp_decoder_torch.dist_cross_entropy(labels, logits, padded,
                                                       t, dtype)
        return loss, logits

    model.lm_head = None  # replaced by the head above
    model.tp_head_weight = head_weight  # model state, as the head's weight
    return model, forward
