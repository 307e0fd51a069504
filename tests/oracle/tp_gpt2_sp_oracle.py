"""The activation oracle's terms for tp rank 0 of GPT-2 under
GeminiPlugin(tp_size=t, enable_sequence_parallelism=True) where the world
is the tp group (the only mesh it runs on: docs/tensor-parallelism.md):
ShardFormer's split_gather, itemized. Written from ColossalAI 4f9953be's
modeling/gpt2.py, layer/qkv_fused_linear.py and layer/_operation.py (the
file and line of each save: tp_gpt2_sp_torch.py, whose stand-ins the
measurement runs), not from chunkplan's C++.

Against tp rank 0 without sequence parallelism (tp_activation_oracle.py),
with n = b s h and s divisible by t (_split asserts it):
  * what the blocks run on the rank's sequence shard keeps s / t of it:
    both LayerNorms' saves, their outputs as the Col layers save them
    (input_, the shard), the residual dropout masks, the checkpointed
    layer input;
  * c_attn and c_fc each keep ctx.gathered_input, the whole (b, s, h)
    input (2n), as a ctx attribute: past their own backward, until the
    graph is freed (without checkpointing: through the whole backward;
    with it, until the re-run layer's backward ends);
  * the attention and the MLP run on the whole sequence at the rank's
    heads and width, as without sequence parallelism; the embedding, its
    dropout, ln_f, lm_head and the loss too (gather_sp_output gathers the
    sequence before ln_f).
The backward adds the collectives' buffers: a Row layer's backward
gathers its gradient (t shards, 2n, and their cat, 2n), a Col layer's
computes its input's gradient over the whole sequence (2n), copies its t
chunks where b > 1 (2n) and reduce-scatters into a shard (2n / t).
"""

import activation_oracle as ao

# The saves made over the rank's sequence shard, by their names in
# activation_oracle.layer_tensors.
SHARDED = ("input norm", "post-attention norm", "residual dropout mask")
GATHERED = ("c_attn's gathered input (ctx.gathered_input)",
            "c_fc's gathered input (ctx.gathered_input)")


def check(x, tp):
    """_split's assert (layer/_operation.py:1199-1202): the sequence a
    multiple of tp (the request's tp "model_type" named where given)."""
    if x["s"] % tp["tp_size"]:
        family = (f'model_type "{tp["model_type"]}" at tp_size '
                  f'{tp["tp_size"]} with gemini.enable_sequence_parallelism: '
                  if tp.get("model_type") else "")
        raise ao.ActivationError(
            "workload.sequence_length must be a multiple of shape.tp.tp_size "
            f"under sequence parallelism ({family}ColossalAI's _split asserts "
            "\"The dimension to split (...) is not a multiple of world size "
            "(...), cannot split tensor evenly\")")


def layer_tensors(t, x, tp, attention, gathered=GATHERED):
    """One GPT-2 block's saves at rank dims `x` under split_gather (BLOOM's
    block, tp_bloom_sp_oracle.py, with its own `gathered` names)."""
    n = x["b"] * x["s"] * x["h"]
    out = [(name, m // tp["tp_size"] if name.startswith(SHARDED) else m)
           for name, m in ao.layer_tensors(t, x, attention)]
    return out + [(name, 2 * n) for name in gathered]


def layer_terms(t, x, tp, attention, ckpt, act_step=None,
                gathered=GATHERED):
    """{"saved", "backward", "inside"} as activation_oracle.layer_terms
    gives them, for a GPT-2 block under split_gather. The backward, above
    all the saves (the top block's: every block's saves held), the
    residual gradient (2n / t) plus its largest step, in order: the MLP's
    residual dropout; its c_proj's gather; c_proj's matmul (the whole
    gradient, its input's and weight's); gelu_new's last product; c_fc's
    Col backward (its input's gradient, the chunks, the shard, its
    weight's); ln_2's; then the same for the attention (softmax's steps
    as without sequence parallelism) and ln_1's. The gathered inputs are
    never released inside the layer. `act_step`: the activation's
    backward above the saves, less c_proj's input (gelu_new's last
    product, 2 b s I, where None); `gathered`: the gathered inputs' names
    (BLOOM's: tp_bloom_sp_oracle.py)."""
    tt = tp["tp_size"]
    b, s, h, i = x["b"], x["s"], x["h"], x["i"]
    ad = x["a"] * x["d"]
    n, bs = b * s * h, b * s
    ns = n // tt
    tensors = layer_tensors(t, x, tp, attention, gathered)
    layer = sum(m for _, m in tensors)
    mask = ns if t["hidden_dropout"] else 0
    drop_grad = 2 * ns if t["hidden_dropout"] else 0
    chunks = 2 * n if b > 1 else 0
    bi = 2 * bs * i
    gathered = 4 * n
    ln = 2 * ns + 8 * bs // tt  # a LayerNorm's saves on the shard
    # (BLOOM's: GeLUFunction's input and dense_4h_to_h's)
    mlp_saves = sum(m for name, m in tensors
                    if name.startswith(("gelu_new", "act output",
                                        "act's input")))
    # The MLP, every save held but what is named released.
    steps = [drop_grad,
             drop_grad + 4 * n - mask,
             2 * n + bi + 2 * i * h - mask,
             (2 * bi if act_step is None else act_step) - mask,
             bi + 2 * n + chunks + 2 * ns + 2 * i * h - mask - mlp_saves,
             3 * ns - mask - mlp_saves - 2 * ns]
    # Released before the attention's backward: the MLP's saves, its mask,
    # ln_2's saves and c_fc's shard.
    after_mlp = mask + mlp_saves + ln + 2 * ns
    q = 2 * bs * ad
    # (an attention kernel's dq, dk, dv, d(out); eager softmax's gradients
    # in and out once PV's operands are released too)
    after_attention = after_mlp + mask + q
    attn_work = 4 * q
    if ao.eager_terms(t, x, attention):
        p = b * x["a"] * s * s
        after_attention += ao.pv_operand(t, x) + (
            3 * p if t["attention_dropout"] else
            2 * p if t["fp32_softmax"] else 0)
        attn_work = max(attn_work, (8 if t["fp32_softmax"] else 4) * p)
    steps += [drop_grad - after_mlp,
              drop_grad + 4 * n - after_mlp - mask,
              2 * n + q + 2 * h * ad - after_mlp - mask,
              attn_work - after_attention]
    # c_attn's Col backward and ln_1's, once all but ln_1's saves, its
    # output's shard and the gathered inputs are released.
    rest = layer - ln - 2 * ns - gathered
    qkv = 2 * bs * 3 * ad
    steps += [qkv + 2 * n + chunks + 2 * ns + 2 * h * 3 * ad - rest,
              3 * ns - rest]
    backward = 2 * ns + max(steps)
    if not ckpt:
        return {"saved": layer, "backward": backward, "inside": backward}
    # Re-run under checkpointing: all its saves but the checkpointed input
    # (ln_1's saved input), the re-run's output and the gradient; the
    # re-run's own peaks: softmax (as without sequence parallelism) and
    # the last Row's output (2n) beside its reduce-scattered shard (its
    # chunks where b > 1), the bias sum, the held attn_output and the
    # incoming gradient.
    recompute = layer - 2 * ns
    forward_end = recompute + 2 * ns + 2 * ns + max(
        2 * n + 2 * ns + chunks, 2 * n + 4 * ns)
    return {"saved": layer, "backward": backward,
            "inside": max(recompute + backward + 2 * ns, forward_end)}


def gathered_bytes(x, tp, ckpt):
    """The gathered inputs every block keeps until the graph is freed
    (without checkpointing: all of them at the embedding's backward)."""
    return 0 if ckpt else 4 * x["b"] * x["s"] * x["h"] * x["L"]


def embedding_step(t, x, rows, released, positions=True):
    """The embedding's backward, last, above what is still held then (the
    logits, the input ids and positions, the gathered inputs; `released`:
    the rest): wte's weight gradient (`rows` x h) beside its output's
    (2n) and, tied, lm_head's held share; then, tied, AccumulateGrad's
    out-of-place sum beside both shares (6 rows h) once the output's
    gradient, the ids and the positions (none where `positions` is
    False: BLOOM's ALiBi) are released."""
    b, s, h = x["b"], x["s"], x["h"]
    tied = t["tied_embeddings"]
    during = 2 * b * s * h + (4 if tied else 2) * rows * h
    summed = 6 * rows * h - 8 * b * s - (8 * s if positions else 0)
    summed = summed if tied else 0
    return max(0, during - released, summed - released)
