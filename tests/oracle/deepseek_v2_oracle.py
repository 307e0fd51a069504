"""DeepSeek-V2's layer and loss for the activation oracle
(activation_oracle.py): what the model's remote code (modeling_deepseek.py
of deepseek-ai/DeepSeek-V2; deepseek_v2_torch.py holds it as torch modules
and names the copies read) saves for backward under torch >= 2.2, where it
differs from DeepSeek-V3's (mla_oracle.py); from PyTorch's
tools/autograd/derivatives.yaml, not from chunkplan's C++.

Traits (the shape's): "deepseek_v2" (the layer is the remote code's: its
attention is mla_oracle's plus each layer's own RoPE tables, its sparse
block DeepseekV2MoE's training branch, the loss over shifted fp32 logits;
"fp32_logits" and "no_sdpa" set beside it), "router_groups" (MoEGate's
n_group with topk_method "group_limited_greedy"; 0: "greedy"),
"router_topk_groups" (topk_group), "seq_aux" (the auxiliary loss per
sequence, else over the batch; aux_loss_alpha 0 is refused upstream: the
remote code's training forward calls AddAuxiliaryLoss.apply(y, None)).
"""


def rope_tensors(x, rope):
    """DeepseekV2RotaryEmbedding's tables gathered by position_ids (1, s)
    in each layer: cos[position_ids] and sin[position_ids], 16-bit, each
    kept by RoPE's two multiplications (mul.Tensor keeps the factor that
    needs no gradient)."""
    return [("V2 RoPE: this layer's cos and sin (1, s, qk_rope_head_dim)",
             4 * x["s"] * rope)]


def moe_tensors(t, x):
    """What DeepseekV2MoE's training branch saves, its input (the norm's
    output, kept by the shared experts) aside. T = b s tokens, E experts,
    k a token: T k token-expert pairs, dispatched over the
    repeat_interleave'd tokens (torch >= 2.1: a clone of an expand, nothing
    kept). derivatives.yaml: mm keeps both fp32 copies; _softmax its
    result; topk and max.dim their indices; masked_fill its bool mask;
    div.Tensor self and other; mul.Tensor the factor the other's gradient
    needs (ce, or fi; the weights and y both); index.Tensor and index_put_
    their indices (the bool masks flat_topk_idx == i, one a side for every
    expert, chosen or not); mean, sum, the casts and views nothing."""
    T, h, E, k = x["b"] * x["s"], x["h"], t["num_experts"], \
        t["experts_per_token"]
    i, shared = t["moe_intermediate_size"], \
        t["shared_expert_intermediate_size"]
    pairs = T * k
    out = [("moe gate: the input's fp32 copy, kept by mm", 4 * T * h),
           ("moe gate: the weight's fp32 copy, kept by mm", 4 * E * h),
           ("moe gate: softmax scores (fp32)", 4 * T * E)]
    if t["router_groups"]:
        # group_limited_greedy: max.dim's and the group top-k's nodes keep
        # their indices, but only the indices leave them (group_idx builds
        # a mask without grad): unreachable from the loss, freed at once.
        # masked_fill keeps its bool mask.
        out.append(("moe gate: masked_fill's bool mask", T * E))
    out.append(("moe gate: top-k indices (int64)", 8 * pairs))
    if k > 1 and t["norm_topk_prob"]:
        out += [("moe gate: top-k weights, div's numerator (fp32)",
                 4 * pairs),
                ("moe gate: the top-k sum + 1e-20 (fp32), the divisor",
                 4 * T)]
    out.append(("moe gate: the auxiliary loss's ce (seq_aux: b x E; else "
                "fi: E) (fp32)", 4 * (x["b"] if t["seq_aux"] else 1) * E))
    out += [("moe experts: flat_topk_idx == i, read and write (bool), "
             "every expert", 2 * E * pairs),
            ("moe experts: the tokens' states (index), kept by gate/up",
             2 * pairs * h),
            ("moe experts: act's input, act, up, the product",
             8 * pairs * i),
            ("moe experts: y (index_put_), kept by the weight mul",
             2 * pairs * h),
            ("moe experts: the routing weights (fp32)", 4 * pairs)]
    if shared:
        out.append(("moe shared experts: act's input, act, up, the product",
                    8 * T * shared))
    return out


def loss_bytes(x):
    """DeepseekV2ForCausalLM's CrossEntropyLoss over the shifted logits:
    log_softmax's fp32 result over b (s - 1) rows, nll_loss's targets
    (labels[..., 1:].contiguous(): a copy, or at b = 1 the labels' own
    storage, already contiguous) and total_weight (fp32)."""
    b, s, v = x["b"], x["s"], x["v"]
    targets = 8 * s if b == 1 else 8 * b * (s - 1)
    return 4 * b * (s - 1) * v + targets + 4


def loss_backward_bytes(x):
    """The loss's backward above what is saved and held: log_softmax's
    gradients in and out (fp32, b (s - 1) rows); then the shifted slice's
    scatter into a zero b s x V fp32 gradient and its 16-bit cast, once
    the log-probabilities are released."""
    b, s, v = x["b"], x["s"], x["v"]
    return max(8 * b * (s - 1) * v, (6 * s - 4 * (s - 1)) * b * v)


def moe_backward(t, x, mlp_step, shared_saves):
    """DeepseekV2MoE's backward above its saves and the residual stream's
    gradient, at the bound that every token reaches the expert whose
    backward runs first (all the block's saves held). P = T k pairs,
    N = T h. The shared experts' backward first (they ran last); then,
    once their saves are released, the weighted sum's: the fp32 gradient
    of the sum (4N), mul's two fp32 gradients (grad * weights for y, 4P h;
    grad * y for the weights, 4P h, not yet summed to P) and y's cast to
    16 bits (2P h: the engine's validate_outputs casts and sums them after
    the node); then the index_put_ chain: each
    expert's step passes on a new P x h gradient (index_put of zeros)
    beside the one it got, the expert's MLP over all T tokens, and the
    gradient of the repeat_interleave'd tokens (index's scatter into
    zeros, accumulated), once y is released."""
    T, h, k = x["b"] * x["s"], x["h"], t["experts_per_token"]
    n, ph = T * h, T * k * h
    shared = t["shared_expert_intermediate_size"]
    return max(mlp_step(T, h, shared) if shared else 0,
               4 * n + 10 * ph - shared_saves,
               4 * ph + mlp_step(T, h, t["moe_intermediate_size"])
               - shared_saves,
               6 * ph - shared_saves)


def moe_forward(t, x):
    """Re-running DeepseekV2MoE under checkpointing, at the weighted sum:
    the repeat_interleave'd tokens (2P h, still bound), the fp32 product
    (4P h) and its fp32 sum (4N), over the saves made before it (the
    shared experts', run after, not yet)."""
    T, h, k = x["b"] * x["s"], x["h"], t["experts_per_token"]
    return 6 * T * k * h + 4 * T * h
