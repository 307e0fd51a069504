"""The activation oracle's terms for one tensor-parallel rank under
ColossalAI's ShardFormer (GeminiPlugin(tp_size=t), no sequence
parallelism), itemized: what rank 0 keeps of each saved tensor when the
linear layers, the embedding, lm_head and the loss are split. Written from
ColossalAI 4f9953be's shardformer/layer/{linear,embedding,_operation,
loss}.py and modeling/{llama,mistral,qwen2,qwen3}.py (the file and line of
each save: tp_decoder_torch.py, whose stand-ins the measurement runs), not
from chunkplan's C++.

The request's "tp" object:
  {"tp_size": t, "lm_head": "vocab" | "column",
   "logits_fp32": the causal-LM forward upcasts the logits (Mistral,
                  Qwen2, Qwen3: logits.float()),
   "loss_fp32": dist_cross_entropy's dtype is fp32 (Qwen2, Qwen3:
                logits.dtype; LLaMA, Mistral: the model's 16 bits),
   "logits_contiguous" (optional): the forward holds the sliced logits'
                contiguous copy (OPT), not lm_head's padded output,
   "ties_head" (optional): lm_head shares the embedding's weight whatever
                the config says (OPT's postprocess)}
"vocab": VocabParallelLMHead1D, the vocabulary padded to a multiple of
64 t, rank 0's logits sliced to min(padded / t, vocab) columns; "column":
a plain Linear1D_Col (Qwen3), vocab / t (whole where vocab < t). The
embedding is VocabParallelEmbedding1D (padded / t rows) in every policy
modelled.
"""

VOCAB_MULTIPLE = 64  # ShardConfig.make_vocab_size_divisible_by

# The policies whose causal-LM forward under tp is modelled, by model_type:
# lm_head's layer (policies/<family>.py), whether the forward upcasts the
# logits and the loss's dtype (modeling/<family>.py's forward calling
# dist_cross_entropy: LLaMA's llama_for_causal_lm_forward passes the
# model's dtype; Mistral's get_lm_forward_with_dist_cross_entropy
# logits.float() then the model's dtype; Qwen2's and Qwen3's
# logits.float() then logits.dtype).
FAMILIES = {
    "llama": {"lm_head": "vocab", "logits_fp32": False, "loss_fp32": False},
    "mistral": {"lm_head": "vocab", "logits_fp32": True, "loss_fp32": False},
    "qwen2": {"lm_head": "vocab", "logits_fp32": True, "loss_fp32": True},
    "qwen3": {"lm_head": "column", "logits_fp32": True, "loss_fp32": True},
    # GPT2LMHeadModelPolicy: VocabParallelLMHead1D; gpt2_lmhead_model_forward
    # (modeling/gpt2.py:404-417) passes the 16-bit logits and the model's
    # dtype, as LLaMA's
    "gpt2": {"lm_head": "vocab", "logits_fp32": False, "loss_fp32": False},
    # OPT, BLOOM, Falcon (tp_opt_bloom_falcon_torch.py): the 16-bit logits
    # and the model's dtype, as LLaMA's. OPT's forward (modeling/opt.py:
    # 953) holds lm_head(...).contiguous(): the valid columns copied out
    # where padding follows them; its postprocess (policies/opt.py:433-444)
    # ties lm_head to embed_tokens whatever the config says.
    "opt": {"lm_head": "vocab", "logits_fp32": False, "loss_fp32": False,
            "logits_contiguous": True, "ties_head": True},
    "bloom": {"lm_head": "vocab", "logits_fp32": False, "loss_fp32": False},
    "falcon": {"lm_head": "vocab", "logits_fp32": False, "loss_fp32": False},
    # No causal-LM forward replaced: lm_head gathers its output
    # (gather_output=True: policies/gptj.py's VocabParallelLMHead1D,
    # policies/mixtral.py's Linear1D_Col) and transformers' own forward and
    # loss run on the whole vocabulary (GPT-J's .to(torch.float32) first).
    "gptj": {"lm_head": "vocab", "logits_fp32": True, "loss_fp32": False,
             "gathered_head": True},
    "mixtral": {"lm_head": "column", "logits_fp32": False,
                "loss_fp32": False, "gathered_head": True},
}


# The policies whose forward under sequence parallelism (split_gather, as
# GeminiPlugin runs it) is modelled: GPT-2's where zero x extra_dp is 1
# (tp_gpt2_sp_oracle.py), BLOOM's on every mesh (tp_bloom_sp_oracle.py;
# the request's "sequence_parallel": true).
SEQUENCE_PARALLEL = ("gpt2", "bloom")

# Why tp rank 0's activations are not split where sequence parallelism
# stays on and is not modelled (the activation note's reason): what
# tp_oracle lets through otherwise, none today (LLaMA's, Qwen2's, Qwen3's,
# Command's and Mixtral's forwards fail on every mesh, GPT-2's where the
# world is not the tp group: refused).
SEQUENCE_PARALLEL_WHY = (
    "sequence parallelism (split_gather: each rank's sequence shard, "
    "gathered inputs, ColossalAI's attention forward) is not modelled")


class TpError(ValueError):
    pass


def split(n, t):
    """Linear1D_Col / Row's share: n / t, n where n < t (kept whole)."""
    return n if n < t else n // t


def padded(v, t):
    """v padded to a multiple of 64 t (VocabParallelEmbedding1D's rows)."""
    m = VOCAB_MULTIPLE * t
    return (v + m - 1) // m * m


def sizes(x, tp):
    """The rank's vocabulary widths: (embedding rows, lm_head rows, the
    logits' width after the padding is sliced off, whether sliced)."""
    t, v = tp["tp_size"], x["v"]
    m = VOCAB_MULTIPLE * t
    padded = (v + m - 1) // m * m
    if tp["lm_head"] == "vocab":
        rows = padded // t
        return padded // t, rows, min(rows, v), True
    return padded // t, split(v, t), split(v, t), False


def rank_dims(x, tp):
    """The per-rank dims: query and key/value heads / t (the policy's
    attribute_replacement; it asserts both divisible), the MLP width / t
    (whole where below t); the hidden size, head_dim and the tokens stay
    (the residual stream and the norms are whole without sequence
    parallelism)."""
    t = tp["tp_size"]
    if x["a"] % t:
        raise TpError("shape.num_attention_heads must be divisible by "
                      "shape.tp.tp_size")
    if x["kv"] % t:
        raise TpError("shape.num_key_value_heads must be divisible by "
                      "shape.tp.tp_size")
    out = dict(x)
    out["a"], out["kv"], out["i"] = x["a"] // t, x["kv"] // t, split(x["i"], t)
    return out


def embedding_tensors(x):
    """VocabParallelEmbedding1D (embedding.py:386-400): F.embedding saves
    the masked ids (int64, a clone of input_ids), index_put_ the bool mask
    (embedding_output[input_mask, :] = 0.0)."""
    bs = x["b"] * x["s"]
    return [("masked input ids (int64), kept by the embedding", 8 * bs),
            ("the ids' out-of-range mask (bool), kept by index_put_", bs)]


def loss_tensors(x, tp):
    """DistCrossEntropy.forward's save_for_backward (loss.py:131): over
    b (s - 1) rows (labels[..., 1:], logits[..., :-1, :]): exp_logits in
    the loss's dtype, the bool mask, the int64 masked target."""
    rows = x["b"] * (x["s"] - 1)
    width = sizes(x, tp)[2]
    return [("exp_logits", rows * width * (4 if tp["loss_fp32"] else 2)),
            ("target mask (bool)", rows), ("masked target (int64)", 8 * rows)]


def held_logits(x, tp):
    """The model's output: the fp32 copy of the sliced logits where the
    forward upcasts, the 16-bit valid columns where it holds their
    contiguous copy (OPT), else lm_head's 16-bit output (its padded rows
    too)."""
    b, s = x["b"], x["s"]
    _, rows, width, _ = sizes(x, tp)
    if tp["logits_fp32"]:
        return 4 * b * s * width
    return 2 * b * s * (width if tp.get("logits_contiguous") else rows)


def head_last_step(grad, bs, rows, e, bias):
    """lm_head's last backward step: the incoming 16-bit gradient `grad`
    beside its input's (bs x e) and weight's (rows x e) gradients, and its
    bias's (rows, aten::sum's) where `bias` (GPT-J). The whole model's head
    too (rows: the vocabulary)."""
    return grad + 2 * bs * e + 2 * rows * e + (2 * rows if bias else 0)


def backward_steps(x, tp, loss, e, bias=False):
    """(loss_backward, head_backward): the loss's and the head's backward
    over what forward left, each less the loss's saves (released by then).
    DistCrossEntropy's backward works in place on exp_logits and returns
    it as the gradient of b (s - 1) rows, which autograd casts to the
    logits' dtype where the loss's differs (Mistral); logits[..., :-1, :]'s
    backward then allocates the logits' gradient (b s x width, the logits'
    dtype) beside it. Then the upcast's backward (a 16-bit copy beside the
    fp32 one), the padding slice's (b s x rows, 16 bits, beside its
    input's), lm_head's (its input's and its weight's gradient, e wide:
    OPT's word_embed_proj_dim or h, beside the logits'; with `bias`, the
    bias's, the rank's rows)."""
    b, s = x["b"], x["s"]
    _, rows, width, sliced = sizes(x, tp)
    logit_bytes = 4 if tp["logits_fp32"] else 2
    g_logits = b * s * width * logit_bytes
    g_rows = b * (s - 1) * width * logit_bytes
    g16 = 2 * b * s * width
    grad = g_logits
    steps = [g_rows + g_logits]
    if tp["logits_fp32"]:
        steps.append(g_logits + g16)
        grad = g16
    # output[..., :num_valid] is a step of its own only where it drops
    # columns: Python's indexing returns the tensor itself for a full slice
    # (TensorIndexing.h applySlice, CPU and CUDA alike).
    if sliced and width < rows:
        steps.append(grad + 2 * b * s * rows)
        grad = 2 * b * s * rows
    steps.append(head_last_step(grad, b * s, rows, e, bias))
    return max(0, steps[0] - loss), max(0, max(steps[1:]) - loss)


def gathered_head_backward(x, tp, loss, e=None, bias=False):
    """lm_head's backward where it gathers its output ("gathered_head":
    the loss and the logits are the whole model's), less the loss's saves:
    the fp32 logits' gradient beside its 16-bit copy (GPT-J's .to(float32)),
    SliceBackward's zero-filled gathered rows (a vocab head's [..., :vocab],
    linear.py:796-797), _GatherForwardSplitBackward's backward
    (_operation.py:1076-1079: _split clones the rank's columns, :1204-1206,
    beside the gathered gradient), then LinearWithAsyncCommunication's
    input and weight gradients, and the bias's (`bias`: GPT-J's lm_head,
    the rank's rows of it, from the ops' own aten::sum)."""
    b, s, h, v, t = x["b"], x["s"], x["h"], x["v"], tp["tp_size"]
    _, rows, _, sliced = sizes(x, tp)
    bs = b * s
    grad = bs * v * (4 if tp["logits_fp32"] else 2)
    steps = []
    if tp["logits_fp32"]:
        steps.append(grad + 2 * bs * v)
        grad = 2 * bs * v
    if sliced:
        steps.append(grad + 2 * bs * rows * t)
        grad = 2 * bs * rows * t
    if sliced or v >= t:  # a column head kept whole (v < t) gathers nothing
        steps.append(grad + 2 * bs * rows)
        grad = 2 * bs * rows
    e = e or h  # lm_head's input width (OPT's word_embed_proj_dim)
    steps.append(head_last_step(grad, bs, rows, e, bias))
    return max(0, max(steps) - loss)
