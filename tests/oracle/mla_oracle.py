"""DeepSeek-V3's layer for the activation oracle (activation_oracle.py):
what multi-head latent attention and DeepSeekMoE save for backward under
torch >= 2.2, tensor by tensor, written from transformers 4.51.3's
modeling_deepseek_v3.py (deepseek_torch.py holds the same code as torch
modules) and PyTorch's tools/autograd/derivatives.yaml; not from
chunkplan's C++.

Traits (the shape's): "kv_lora_rank" (non-zero: the layer's attention is
MLA), "q_lora_rank" (0: a plain q_proj), "qk_rope_head_dim" (RoPE's width,
also "rotary_dim"), "v_head_dim"; "head_dim" is q's and k's
(qk_nope_head_dim + qk_rope_head_dim), num_key_value_heads the heads.
"deepseek_moe": the sparse block is DeepseekV3MoE (the sigmoid router on
fp32 copies, fp32 weighted outputs, shared experts without a gate).
"""


def check(shape, head_dim, error):
    """Raises `error` naming the MLA size out of range (kv_lora_rank set)."""
    if not shape.get("kv_lora_rank"):
        return
    if not shape.get("v_head_dim"):
        raise error("shape.v_head_dim must be at least 1 when "
                    "shape.kv_lora_rank is set")
    if shape.get("qk_rope_head_dim", 0) > head_dim:
        raise error("shape.qk_rope_head_dim must be at most the head "
                    "dimension when shape.kv_lora_rank is set")


def _norm(kind, rows, width, where):
    import activation_oracle  # the norms' saves (no import cycle at load)
    return activation_oracle.norm_tensors(kind, rows, width, where)


def attention_tensors(t, x, attention):
    """What DeepseekV3Attention saves, its input (the input norm's output,
    kept by q_a_proj / q_proj and kv_a_proj_with_mqa) aside. derivatives.yaml:
    a linear keeps its input; RoPE's mul.Tensor keeps only cos and sin (q
    and k's rope part need no saving: cos and sin need no gradient); cat and
    split keep sizes; the views nothing."""
    b, s, a, d = x["b"], x["s"], x["a"], x["d"]
    bs = b * s
    qr, kvr, vd = t["q_lora_rank"], t["kv_lora_rank"], t["v_head_dim"]
    nope = d - t["qk_rope_head_dim"]
    out = []
    if qr:
        out += _norm("rms", bs, qr, "q_a_layernorm")
        out.append(("q_a_layernorm's output, q_b_proj's input", 2 * bs * qr))
    out += _norm("rms", bs, kvr, "kv_a_layernorm")
    out.append(("kv_a_layernorm's output, kv_b_proj's input", 2 * bs * kvr))
    q = 2 * bs * a * d  # cat((q_pass, q_rot)), and k likewise
    o = 2 * bs * a * vd  # the attention's output, o_proj's input
    kv_b = 2 * bs * a * (nope + vd)  # kv_b_proj's output
    if attention == "flash_attention_2":
        # v padded to head_dim (F.pad: a copy) where v_head_dim is
        # narrower, else a strided view of kv_b_proj's output
        # (maybe_contiguous keeps it); out at head_dim, sliced to
        # v_head_dim and copied for o_proj where narrower.
        narrow = vd != d
        out += [("q", q), ("k", q), ("v (padded to head_dim, or a view of "
                                     "kv_b_proj's output)",
                                     q if narrow else kv_b),
                ("out (at head_dim)", q), ("softmax_lse (fp32)", 4 * bs * a),
                ("rng_state", 16)]
        if narrow:
            out.append(("out[..., :v_head_dim] copied, o_proj's input", o))
        return out
    if attention == "sdpa":
        # sdpa_attention_forward's .contiguous(): v a copy at v_head_dim
        return out + [("query", q), ("key", q), ("value (contiguous copy)", o),
                      ("output (also o_proj's input)", o),
                      ("logsumexp (fp32)", 4 * bs * a)]
    p = b * a * s * s
    out += [("q for QK^T", q), ("k for QK^T", q),
            ("softmax result", 4 * p)]
    if t["attention_dropout"]:
        out += [("attention dropout mask", p),
                ("dropped probabilities for PV", 2 * p)]
    else:
        out.append(("probabilities .to(dtype) for PV", 2 * p))
    out += [("v for PV", mla_eager_v(t, x)),
            ("o_proj input (contiguous copy)", o)]
    return out


def mla_eager_v(t, x):
    """V as eager PV's matmul keeps it: a strided view of kv_b_proj's
    output, which matmul's reshape to bmm's batch keeps as a view when b,
    a or s is 1 (then bmm keeps the whole output); else a copy."""
    b, s, a = x["b"], x["s"], x["a"]
    vd = t["v_head_dim"]
    if 1 in (b, a, s):
        return 2 * b * s * a * (x["d"] - t["qk_rope_head_dim"] + vd)
    return 2 * b * s * a * vd


def moe_tensors(t, x):
    """What DeepseekV3MoE saves, its input (the norm's output, kept by the
    shared experts) aside. T = b s tokens, E experts, k a token: T k
    token-expert pairs. The router (DeepseekV3TopkRouter): F.linear on
    fp32 copies of the input and of the weight (mm keeps both), sigmoid
    its result, gather its index (and self: the sigmoid's result), with
    norm_topk_prob div_'s divisor and the weights' fp32 clone; per pair
    (an expert no token chose is skipped): torch.where's (n, 2) int64
    nonzero, the token's state, the expert's gated MLP, its output, the
    fp32 weight (an index of topk_weights), the fp32 weighted output
    index_add_ keeps; the shared experts' gated MLP (the sum keeps
    nothing)."""
    T, h, E, k = x["b"] * x["s"], x["h"], t["num_experts"], \
        t["experts_per_token"]
    i, shared = t["moe_intermediate_size"], \
        t["shared_expert_intermediate_size"]
    pairs = T * k
    out = [("moe router: the input's fp32 copy, kept by mm", 4 * T * h),
           ("moe router: the weight's fp32 copy, kept by mm", 4 * E * h),
           ("moe router: sigmoid(router_logits) (fp32)", 4 * T * E),
           ("moe router: gather's top-k indices (int64)", 8 * pairs)]
    if t["norm_topk_prob"]:
        out += [("moe router: the top-k sum + 1e-20 (fp32), the divisor",
                 4 * T),
                ("moe router: top-k weights before div_ (fp32 clone)",
                 4 * pairs)]
    out += [("moe experts: torch.where indices (nonzero, 16 a pair)",
             16 * pairs),
            ("moe experts: the tokens' states (index), kept by gate/up",
             2 * pairs * h),
            ("moe experts: act's input, act, up, the product",
             8 * pairs * i),
            ("moe experts: expert output, kept by the weight mul",
             2 * pairs * h),
            ("moe experts: routing weight per pair (fp32)", 4 * pairs),
            ("moe experts: fp32 weighted output, index_add_'s source",
             4 * pairs * h),
            ("moe shared experts: act's input, act, up, the product",
             8 * T * shared)]
    return out
