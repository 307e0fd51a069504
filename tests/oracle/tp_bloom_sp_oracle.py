"""The activation oracle's terms for tp rank 0 of BLOOM under
GeminiPlugin(tp_size=t, enable_sequence_parallelism=True): ShardFormer's
split_gather as BLOOM's policy runs it, itemized. Written from ColossalAI
4f9953be's policies/bloom.py, modeling/bloom.py, layer/linear.py and
layer/_operation.py (the file and line of each save: tp_bloom_sp_torch.py,
whose stand-ins the measurement runs), not from chunkplan's C++.

The modes (policies/bloom.py:53-61): "all_to_all" is asserted ("all_to_all
sequence parallelism is not supported for BLOOM"), "ring" becomes
split_gather with a warning; GeminiPlugin passes no mode, so ShardConfig
sets split_gather and neither is reachable. BLOOM's forward splits and
gathers over the tp group (modeling/bloom.py:1020-1025, 1063-1068), so it
runs on every mesh (GPT-2's gathers over the whole world).

Where the sequence is split and gathered, with n = b s h and s divisible
by t (_split asserts it):
  * whole: the embedding, word_embeddings_layernorm's saves (:1003), the
    ALiBi tensor and the causal mask (built from the whole mask, :1015-
    1018), then split_forward_gather_backward (:1020-1025, nothing saved);
  * on the rank's s / t rows (the blocks, transformers' BloomBlock):
    input_layernorm's and post_attention_layernorm's saves (input, fp32
    mean and rstd), their outputs as query_key_value and dense_h_to_4h
    save them (save_for_backward(input_, ...), _operation.py:539), the
    residual dropout masks of both dropout_adds, the checkpointed block
    input;
  * the whole (b, s, h) input of query_key_value and dense_h_to_4h
    (ctx.gathered_input = _gather(...), _operation.py:561-562), 2n each:
    ctx attributes, alive until the graph is freed;
  * the attention (get_bloom_sequence_parallel_attention_forward, the
    whole sequence at heads / t: q and k for baddbmm, the fp32 softmax,
    the 16-bit probabilities, v, the merged context dense saves), the MLP
    (GeLUFunction's input, dense_4h_to_h's input, 4h / t wide) as without
    sequence parallelism;
  * whole again after gather_forward_split_backward (:1063-1068): ln_f,
    lm_head, dist_cross_entropy, as without sequence parallelism.
The backward as GPT-2's (tp_gpt2_sp_oracle.layer_terms: the Row's gather,
the Col's input gradient, chunks and shard), but for GeLUFunction's:
bloom_gelu_back holds the incoming gradient and up to five temporaries of
its tanh arithmetic (2 b s I each) once dense_4h_to_h's saved input is
released. The embedding's step as GPT-2's, without positions (ALiBi).
"""

import tp_gpt2_sp_oracle

# The gathered inputs, by their names in the itemized list.
GATHERED = ("query_key_value's gathered input (ctx.gathered_input)",
            "dense_h_to_4h's gathered input (ctx.gathered_input)")

check = tp_gpt2_sp_oracle.check  # _split's assert, the same words
gathered_bytes = tp_gpt2_sp_oracle.gathered_bytes


def layer_tensors(t, x, tp, attention):
    """One BLOOM block's saves at rank dims `x` under split_gather."""
    return tp_gpt2_sp_oracle.layer_tensors(t, x, tp, attention, GATHERED)


def act_step(x):
    """GeLUFunction's backward above the block's saves: the incoming
    gradient and five temporaries (6 x 2 b s I) less dense_4h_to_h's saved
    input (2 b s I), released before it."""
    return 5 * 2 * x["b"] * x["s"] * x["i"]


def layer_terms(t, x, tp, attention, ckpt):
    """{"saved", "backward", "inside"} of a BLOOM block under
    split_gather."""
    return tp_gpt2_sp_oracle.layer_terms(t, x, tp, attention, ckpt,
                                         act_step(x), GATHERED)


def embedding_step(t, x, rows, released):
    """The embedding's backward, last (tp_gpt2_sp_oracle.embedding_step,
    no positions)."""
    return tp_gpt2_sp_oracle.embedding_step(t, x, rows, released,
                                            positions=False)
