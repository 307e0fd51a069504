#!/usr/bin/python3
"""The activation oracle: what transformers 4.51.3's decoder families save
for backward under torch >= 2.2, tensor by tensor, and the backward pass's
transients, written from the modeling code (decoder_torch.py holds the same
code as torch modules) and from PyTorch's tools/autograd/derivatives.yaml;
not from chunkplan's C++.

Two ways to answer, one request format:
  * the itemized list (`tensors`): every saved tensor named, summed; for
    any shape (the plan and layout oracles call it on real models);
  * `"measure": true` (small shapes only): the model is built in torch and
    run on CPU in bf16; saved_tensors_hooks count the unique storages saved
    for backward (saved_tensors.py, torch 1.13's extra saves taken out by
    name), and torch.profiler's CPU memory events give the peak of the
    backward pass. The itemized list must equal the count exactly (eager).

SDPA and flash_attention_2 are not run (Debian's torch 1.13 has neither):
their terms are the kernels' documented saved tensors:
  * SDPA, flash backend (torch >= 2.2 derivatives.yaml,
    _scaled_dot_product_flash_attention: "query, key, value:
    _scaled_dot_product_flash_attention_backward_symint(grad, query, key,
    value, output, logsumexp, cum_seq_q, cum_seq_k, max_q, max_k,
    dropout_p, is_causal, philox_seed, philox_offset, scale)"): query, key,
    value (transformers' sdpa_attention_forward repeats K and V to every
    query head first), output, logsumexp (b, a, s) fp32; the seed and
    offset are host scalars.
  * flash_attention_2 (flash_attn_interface.py, FlashAttnFunc.forward:
    "ctx.save_for_backward(q, k, v, out_padded, softmax_lse, rng_state)"):
    q, k and v at their own head counts (no repeat), out, softmax_lse
    (b, a, s) fp32, rng_state (2 x int64).
In both, o_proj's input is the kernel's output (transpose + contiguous is
a no-op on its (b, s, a, d) layout): one storage.

Input, one JSON object a line with --jsonl (integers as numbers or strings):
  {"shape": {"num_layers", "hidden_size", "num_attention_heads",
             "vocab_size", "num_key_value_heads", "head_dim",
             "intermediate_size", "tied_embeddings", "fused_qkv", "norm": "rms"|"gemma_rms"|"layer_norm",
             "gated_mlp", "activation": "single_op"|"gelu_new"|"gelu_fast"|"relu"|"bloom_gelu",
             "rotary", "rotary_dim", "parallel_residual", "value_view",
             "mask_positions", "no_final_norm", "post_norm" (OPT's
             do_layer_norm_before false: the same saves as the pre-norm
             layer, the last norm's backward first),
             "embed_proj_dim", "single_norm", "gptj_rotary", "fp32_logits",
             "head_bias" (GPT-J's biased lm_head), "no_sdpa",
             Falcon and BLOOM: "kv_broadcast", "indexed_kv",
             "one_residual_mask", "direct_sdpa", "alibi", "embedding_norm",
             "no_flash",
             "qk_norm", "fp32_softmax", "scale_by_tensor", "embed_scale",
             "attention_output_held" (GPT2Block keeps attn_output),
             "attention_dropout", "hidden_dropout", "embedding_dropout",
             "not_estimated": "...", "rotary_dim", "fused_gate_up",
             "parallel_block", "norm": ... | "cohere_layer_norm",
             MoE families: "moe_layers", "num_experts", "experts_per_token",
             "moe_intermediate_size", "shared_expert_intermediate_size",
             "norm_topk_prob", DeepSeek-V2 (deepseek_v2_oracle.py):
             "deepseek_v2", "router_groups", "seq_aux"},
   "workload": {"micro_batch", "sequence_length",
                "activation_checkpointing",
                "attention": "default"|"eager"|"sdpa"|"flash_attention_2"},
   "family": "llama", "measure": false, "seed": 0}
("family" picks the torch model to measure: llama, mistral, qwen2, qwen3,
gemma, gpt2, phi3, cohere, gemma2 (dense_torch.py), mixtral, qwen2_moe,
qwen3_moe, gpt_neox, opt, gptj, falcon, bloom, deepseek_v3 or deepseek_v2
(deepseek_v2_torch.py); its traits must be the
shape's. Cohere's logit_scale multiplies the logits by a Python float:
nothing saved, the estimate has no term for it.)
Output, one line each: every part of PARTS as a decimal string, and with
"measure": "measured_saved_bytes", "measured_saved_bytes_torch_1_13",
"measured_peak_bytes" (backward's peak over the memory before forward; for
an MoE model at the estimate's routing bound, every token sent to the last
top-k experts, and "measured_peak_bytes_random_routing" under the random
router's own), or
{"error": "..."} (the refusal's message).
"""

import json
import sys

import deepseek_v2_oracle
import mla_oracle
import tp_activation_oracle
import tp_bloom_sp_oracle
import tp_gpt2_sp_oracle

U64_MAX = 2**64 - 1

PARTS = ("per_layer_bytes", "layers_bytes", "outside_layers_bytes",
         "loss_bytes", "adapter_bytes", "saved_bytes", "held_bytes", "total_bytes",
         "loss_backward_bytes", "head_backward_bytes",
         "final_norm_backward_bytes", "recompute_bytes",
         "layer_backward_bytes", "embedding_backward_bytes",
         "transient_bytes")

SIZE_FIELDS = ("num_layers", "hidden_size", "num_attention_heads",
               "vocab_size")


# Bytes a norm's backward holds above its saves per element of its input
# (b x s x h), besides the input's gradient: measured with torch.profiler
# on the norms of decoder_torch.py (tests/oracle/norm_backward_test in
# activation_oracle_test.py re-measures them): RMSNorm's fp32 chain
# (grad.to(fp32), x * rsqrt's two gradients, mean's expand, pow's 2x)
# peaks at 18, Gemma's at 16; LayerNorm's fused kernel at 3; Cohere's
# fp32 LayerNorm (no bias) at 12.
NORM_BACKWARD = {"rms": 18, "gemma_rms": 16, "layer_norm": 3,
                 "cohere_layer_norm": 12}


class ActivationError(ValueError):
    """A refusal; `code` is "INVALID_ARGUMENT" or "UNIMPLEMENTED"."""

    def __init__(self, message, code="INVALID_ARGUMENT"):
        super().__init__(message)
        self.code = code


def dims(shape, work):
    b, s = work["micro_batch"], work["sequence_length"]
    for f in ("micro_batch", "sequence_length"):
        if work[f] == 0:
            raise ActivationError(f"workload.{f} must be at least 1")
    if shape.get("not_estimated"):
        raise ActivationError("activations: not estimated for this family: " +
                              shape["not_estimated"], "UNIMPLEMENTED")
    for f in SIZE_FIELDS:
        if shape[f] == 0:
            raise ActivationError(f"shape.{f} must be at least 1")
    h, a = shape["hidden_size"], shape["num_attention_heads"]
    kv = shape.get("num_key_value_heads") or a
    if a % kv:
        raise ActivationError("shape.num_key_value_heads must divide "
                              "shape.num_attention_heads")
    if not shape.get("head_dim") and h % a:
        raise ActivationError("shape.hidden_size / shape.num_attention_heads "
                              "must divide when shape.head_dim is unset")
    if shape.get("moe_layers"):
        for f in ("num_experts", "experts_per_token", "moe_intermediate_size"):
            if not shape.get(f):
                raise ActivationError(f"shape.{f} must be at least 1 when "
                                      "shape.moe_layers is set")
        if shape["experts_per_token"] > shape["num_experts"]:
            raise ActivationError("shape.experts_per_token must be at most "
                                  "shape.num_experts")
        if shape["moe_layers"] > shape["num_layers"]:
            raise ActivationError("shape.moe_layers must be at most "
                                  "shape.num_layers")
    mla_oracle.check(shape, shape.get("head_dim") or h // a, ActivationError)
    import llama4_oracle  # Llama 4's layer counts (no import cycle at load)
    llama4_oracle.check(shape, ActivationError)
    return dict(b=b, s=s, h=h, a=a, kv=kv, d=shape.get("head_dim") or h // a,
                i=shape.get("intermediate_size") or 4 * h,
                v=shape["vocab_size"], L=shape["num_layers"])


def attention_of(work, t=None):
    """The attention run: transformers' default is sdpa, or eager for a
    family without an sdpa path (GPT-J in 4.51.3: _supports_sdpa unset),
    which refuses sdpa by name."""
    a = work.get("attention", "default")
    if t is not None and t.get("no_flash") and a == "flash_attention_2":
        raise ActivationError(NO_FLASH)
    if t is not None and t.get("no_sdpa"):
        if a == "sdpa":
            raise ActivationError(NO_SDPA)
        return "eager" if a == "default" else a
    return "sdpa" if a == "default" else a


NO_SDPA = ("workload.attention: ATTENTION_SDPA: the family has no sdpa path "
           "in transformers 4.51.3 (its default is eager)")
NO_FLASH = ("workload.attention: ATTENTION_FLASH_ATTENTION_2: the family has "
            "no flash_attention_2 path in transformers 4.51.3")


def eager_terms(t, x, attention):
    """Whether the attention saves what eager attention saves: eager, or
    (Falcon, direct_sdpa) F.scaled_dot_product_attention called on query
    heads that K and V do not match (multi-query): neither fused kernel
    takes unequal head counts (torch >= 2.2 sdp_utils_cpp.h,
    check_batch_size_and_num_heads_dense: "both fused kernels require
    query, key and value to have the same batch_size and num_heads"), and
    torch 2.2's math path (_scaled_dot_product_attention_math: q and k
    scaled, matmul, _softmax in the input's dtype, matmul) saves the
    16-bit tensors eager does."""
    return attention == "eager" or (
        attention == "sdpa" and t["direct_sdpa"] and not t["kv_lora_rank"]
        and not t["kv_broadcast"] and x["kv"] != x["a"])


def alibi_views(x):
    """BLOOM: q, k and v are strided views of the fused q/k/v output;
    their reshape to (b * a, s, d) stays a view when b, a or s is 1."""
    return 1 in (x["b"], x["a"], x["s"])


def pv_operand(t, x):
    """V as the PV matmul keeps it (BLOOM's views: the fused output, still
    held by the scores' baddbmm: nothing released with PV)."""
    if t["alibi"]:
        return 0 if alibi_views(x) else 2 * x["b"] * x["s"] * x["a"] * x["d"]
    return eager_v(t, x)


def norm_tensors(kind, rows, width, where, weight=None):
    """(name, bytes) a norm's own ops save over rows x width (`weight`: the
    weight's elements, where not width: Cohere's per-head q/k norms)."""
    if kind == "cohere_layer_norm":  # CohereLayerNorm (fp32, no bias)
        return [(f"{where}: x - mean (fp32), kept by pow", 4 * rows * width),
                (f"{where}: x - mean again (fp32), kept by the mul",
                 4 * rows * width),
                (f"{where}: rsqrt(variance + eps) (fp32)", 4 * rows),
                (f"{where}: the normalized x (fp32), kept by weight * (.)",
                 4 * rows * width),
                (f"{where}: weight.to(fp32)", 4 * (weight or width))]
    if kind == "rms":  # LlamaRMSNorm
        return [(f"{where}: x.to(fp32), kept by pow and by x * rsqrt",
                 4 * rows * width),
                (f"{where}: rsqrt(variance + eps) (fp32), kept by the mul",
                 4 * rows),
                (f"{where}: x_normed.to(dtype), kept by weight * (.)",
                 2 * rows * width)]
    if kind == "gemma_rms":  # GemmaRMSNorm
        return [(f"{where}: x.float(), kept by pow and x * rsqrt",
                 4 * rows * width),
                (f"{where}: rsqrt (fp32)", 4 * rows),
                (f"{where}: _norm(x) (fp32), kept by (.) * (1 + w)",
                 4 * rows * width),
                (f"{where}: 1.0 + weight.float() (fp32)", 4 * width)]
    # nn.LayerNorm: native_layer_norm keeps input, mean, rstd (fp32 on CUDA)
    return [(f"{where}: input", 2 * rows * width),
            (f"{where}: mean (fp32)", 4 * rows),
            (f"{where}: rstd (fp32)", 4 * rows)]


def qk_norm_tensors(t, x):
    """q_norm and k_norm over each head: LlamaRMSNorm's (Qwen3) or, in the
    family's own kind, Cohere's (a weight row per head)."""
    bs, a, kv, d = x["b"] * x["s"], x["a"], x["kv"], x["d"]
    if t["norm"] == "cohere_layer_norm":
        return (norm_tensors(t["norm"], bs * a, d, "q_norm", a * d) +
                norm_tensors(t["norm"], bs * kv, d, "k_norm", kv * d))
    kind = "gemma_rms" if t["norm"] == "gemma_rms" else "rms"  # Gemma-3's
    return (norm_tensors(kind, bs * a, d, "q_norm") +
            norm_tensors(kind, bs * kv, d, "k_norm"))


def eager_kv(x):
    """K (or V) as eager attention's matmul keeps it: repeat_kv's
    expand + reshape is a view when kv = 1, and so is matmul's reshape to
    bmm's batch when b = 1 (size-1 dimensions take any stride): then the
    kv-wide tensor itself; else a copy as wide as q."""
    if x["kv"] == 1 and x["b"] == 1:
        return 2 * x["s"] * x["d"]
    return 2 * x["b"] * x["s"] * x["a"] * x["d"]


def eager_v(t, x):
    """V as eager attention's PV matmul keeps it. With value_view (V a
    strided view of the fused q/k/v output, GPT-NeoX) matmul's reshape to
    bmm's batch is a view when b, a or s is 1, and bmm keeps the whole fused
    output. With one fused q/k/v projection and RoPE otherwise (Phi-3's
    qkv_proj) q and k are RoPE's fresh tensors but v stays a slice (a view)
    of the fused output, (b, kv, s, d) with strides (s W, d, W, 1),
    W = (a + 2kv)d. repeat_kv's and matmul's reshapes stay views (size-1
    dimensions take any stride) where b = 1 and kv is 1 or a, or where
    a = 1: then the storage kept is the whole fused output. (Without RoPE,
    GPT-2's c_attn, q, k and v are all views of that one storage: as many
    bytes as three.) Else a copy as wide as q (eager_kv)."""
    b, a, kv = x["b"], x["a"], x["kv"]
    if t["value_view"]:
        return fused_qkv_bytes(x) if 1 in (b, a, x["s"]) else eager_kv(x)
    if t["fused_qkv"] and t["rotary"] and not t["indexed_kv"] and (
            (b == 1 and (kv == 1 or kv == a)) or a == 1):
        return fused_qkv_bytes(x)
    return eager_kv(x)  # (Falcon's V: a list index's copy)


def broadcast_v(x):
    """Falcon's new architecture: V broadcast to every query head, a copy
    (flatten) unless kv is 1 (a stride-0 view of its one head)."""
    if x["kv"] == 1:
        return 2 * x["b"] * x["s"] * x["d"]
    return 2 * x["b"] * x["s"] * x["a"] * x["d"]


def fused_qkv_bytes(x):
    """The fused q/k/v projection's 16-bit output."""
    return 2 * x["b"] * x["s"] * (x["a"] + 2 * x["kv"]) * x["d"]


def v_kernel(t, x):
    """V as flash_attention_2 keeps it: at its own heads (flash-attn's
    maybe_contiguous copies only a tensor whose last stride is not 1), so
    where V is a view of the fused q/k/v output (GPT-NeoX's value_view, or
    a fused projection with RoPE) that output's whole storage; Falcon's
    list-indexed V at its heads, or broadcast (new architecture)."""
    if t["kv_broadcast"]:
        return broadcast_v(x)
    if t["value_view"] or (t["fused_qkv"] and t["rotary"] and
                           not t["indexed_kv"]):
        return fused_qkv_bytes(x)
    return 2 * x["b"] * x["s"] * x["kv"] * x["d"]


def targets(b, s):
    """The loss's targets (int64): labels padded by one then [..., 1:]
    .contiguous(), a copy of b x s, or with b = 1 already contiguous, the
    padded storage of s + 1."""
    return 8 * (s + 1) if b == 1 else 8 * b * s


def moe_tensors(t, x):
    """What a sparse MoE block saves (MixtralSparseMoeBlock,
    Qwen2MoeSparseMoeBlock, Qwen3MoeSparseMoeBlock, 4.51.3), its input (the
    norm's output, kept by the router and the index selects) aside. T = b s
    tokens, E experts, k of them per token: T k token-expert pairs, each
    expert taking n_e of them (the n_e sum to T k whatever the routing).
    derivatives.yaml (torch >= 2.2): _softmax keeps its result; topk its
    indices; div.Tensor self and other (div_ in place: self's value before,
    a clone); index.Tensor its indices; mul.Tensor both factors; index_add
    `source: maybe_multiply(source.dim() > 0 ? grad.index_select(dim,
    index).expand_as(source) : ..., alpha)`: the index and the source."""
    T, h, E, k = x["b"] * x["s"], x["h"], t["num_experts"], \
        t["experts_per_token"]
    i, shared = t["moe_intermediate_size"], \
        t["shared_expert_intermediate_size"]
    if t["deepseek_moe"]:  # DeepseekV3MoE (mla_oracle.py)
        return mla_oracle.moe_tensors(t, x)
    if t["deepseek_v2"]:  # DeepseekV2MoE (deepseek_v2_oracle.py)
        return deepseek_v2_oracle.moe_tensors(t, x)
    if t["llama4"]:  # Llama4TextMoe (llama4_oracle.py)
        import llama4_oracle
        return llama4_oracle.moe_tensors(llama4_oracle.sub_config(t, x), x)
    pairs = T * k
    out = [("moe router: softmax(router_logits, fp32) result", 4 * T * E),
           ("moe router: topk indices (int64)", 8 * pairs)]
    if t["norm_topk_prob"]:
        out += [("moe router: the top-k sum (fp32), the divisor", 4 * T),
                ("moe router: top-k weights before div_ (fp32 clone)",
                 4 * pairs)]
    # Per expert, n_e pairs: torch.where's (n_e, 2) int64 nonzero (idx and
    # top_x are its columns), kept by both index ops and index_add_.
    out += [("moe experts: torch.where indices (nonzero, 16 a pair)",
             16 * pairs),
            ("moe experts: the tokens' states (index), kept by w1 and w3",
             2 * pairs * h),
            ("moe experts: w1 output, kept by act", 2 * pairs * i),
            ("moe experts: act(w1), kept by the mul", 2 * pairs * i),
            ("moe experts: w3 output, kept by the mul", 2 * pairs * i),
            ("moe experts: act * w3, w2's input", 2 * pairs * i),
            ("moe experts: expert output, kept by the weight mul",
             2 * pairs * h),
            ("moe experts: routing weight per pair (16-bit)", 2 * pairs),
            ("moe experts: weighted output, index_add_'s source",
             2 * pairs * h)]
    if shared:
        out += [("moe shared expert: act's input, act, up, the product",
                 8 * T * shared),
                ("moe shared expert: sigmoid(shared_expert_gate(x))", 2 * T),
                ("moe shared expert: output, kept by the sigmoid mul",
                 2 * T * h)]
    return out


def layer_tensors(t, x, attention, sparse=False):
    """What one decoder layer saves without checkpointing (`sparse`: an MoE
    layer, its MLP the sparse block)."""
    b, s, h, a, kv, d, i = (x[k] for k in ("b", "s", "h", "a", "kv", "d",
                                            "i"))
    bs, n = b * s, b * s * h
    out = norm_tensors(t["norm"], bs, h, "input norm")
    out.append(("input norm's output, kept by q/k/v projections", 2 * n))
    if t["qk_norm"]:
        out += qk_norm_tensors(t, x)
    if t["llama4"]:  # the L2 qk_norm or temperature tuning (llama4_oracle)
        import llama4_oracle
        out += llama4_oracle.extra_tensors(llama4_oracle.sub_config(t, x), x,
                                           t["rotary"])
    q = 2 * bs * a * d
    if t["gptj_rotary"]:
        # GPT-J: fp32 sin and cos gathered in each layer (position_ids is
        # (1, s)), repeat_interleave'd (1, s, 1, r) for q and again for k,
        # each kept by its mul.
        out.append(("GPT-J sin and cos for q and k (fp32)",
                    4 * 4 * s * (t["rotary_dim"] or d)))
    if t["kv_lora_rank"]:  # DeepSeek's latent attention (mla_oracle.py)
        out += mla_oracle.attention_tensors(t, x, attention)
        if t["deepseek_v2"]:
            out += deepseek_v2_oracle.rope_tensors(x, t["qk_rope_head_dim"])
    elif attention == "flash_attention_2":
        # flash_attn's maybe_contiguous keeps a view whose last stride is
        # 1: with value_view, V's storage is the fused q/k/v output.
        # Falcon's new architecture: K rotated at every query head.
        out += [("q", q), ("k (kv heads)", q if t["kv_broadcast"]
                           else 2 * bs * kv * d),
                ("v (kv heads)", v_kernel(t, x)),
                ("out (also o_proj's input)", q),
                ("softmax_lse (fp32)", 4 * bs * a), ("rng_state", 16)]
    elif not eager_terms(t, x, attention):
        # direct_sdpa (Falcon): the kernel keeps the tensors passed, V a
        # view of the fused output (value_view) or a broadcast.
        value = (fused_qkv_bytes(x) if t["direct_sdpa"] and t["value_view"]
                 else broadcast_v(x) if t["kv_broadcast"] else q)
        out += [("query", q), ("key (repeated)", q),
                ("value (repeated)", value),
                ("output (also o_proj's input)", q),
                ("logsumexp (fp32)", 4 * bs * a)]
    else:
        p = b * a * s * s
        # GPT-J: q and k fp32 (RoPE by fp32 tables, then upcast)
        qk = 2 if t["gptj_rotary"] else 1
        if t["alibi"]:
            # BLOOM: baddbmm keeps batch1 and batch2 (derivatives.yaml
            # baddbmm), bmm its two operands: q, k and v reshaped to
            # (b * a, s, d), one fused storage where they stay views.
            out += ([("alibi: q, k, v views of the fused output",
                      fused_qkv_bytes(x))] if alibi_views(x) else
                    [("alibi: q copy (baddbmm's batch1)", q),
                     ("alibi: k copy (baddbmm's batch2)", q)])
        else:
            out += [("q for QK^T", qk * q),
                    ("k repeated, for QK^T",
                     qk * (q if t["kv_broadcast"] else eager_kv(x)))]
        if t["scale_by_tensor"]:
            out.append(("the 0-dim scale tensor divided by", 2))
        if t["attn_softcap"]:  # Gemma-2: softcap * tanh(scores / softcap)
            out.append(("tanh of the scores (soft-capping)", 2 * p))
        out.append(("softmax result", (4 if t["fp32_softmax"] else 2) * p))
        if t["attention_dropout"]:
            out += [("attention dropout mask", p),
                    ("dropped probabilities for PV", 2 * p)]
        elif t["fp32_softmax"]:
            out.append(("probabilities .to(dtype) for PV", 2 * p))
        out += [("v repeated, for PV", pv_operand(t, x)),
                ("o_proj input (contiguous copy)", q)]
    if t["indexed_kv"]:
        # Falcon: fused[..., [-2], :] and [..., [-1], :]: index keeps its
        # int64 indices (derivatives.yaml index.Tensor), one element each.
        out.append(("K and V list indices (int64)", 16))
    if t["four_norms"]:  # Gemma-2's post_attention_layernorm (o_proj's out)
        out += norm_tensors(t["norm"], bs, h, "sandwich norm after attention")
    if t["hidden_dropout"] and not t["one_residual_mask"]:
        out.append(("residual dropout mask after attention", n))
    second = norm_tensors(t["norm"], bs, h, "post-attention norm")
    if t["parallel_residual"] and t["norm"] == "layer_norm":
        second = second[1:]  # its input is the layer's, the first's too
    # GPT-J and Cohere: the MLP reads the first norm's output too
    if not t["single_norm"] and not t["parallel_block"]:
        out += second
        # (DeepseekV2MoE without shared experts keeps only its fp32 copy)
        if not (sparse and t["deepseek_v2"] and
                not t["shared_expert_intermediate_size"]):
            out.append(("post-attention norm's output, kept by the MLP",
                        2 * n))
    bi = 2 * bs * i
    # The activation's own saves: relu keeps its result, which the next op
    # (the mul, or c_proj) keeps too: nothing of its own.
    act = {"single_op": [("act's input (gate_proj / c_fc output)", bi)],
           "gelu_new": [("gelu_new: x (pow)", bi),
                        ("gelu_new: tanh result", bi),
                        ("gelu_new: 0.5 * x", bi),
                        ("gelu_new: 1 + tanh", bi)],
           # FastGELUActivation: x, 0.044715x, 0.79788x, 1 + 0.044715x^2,
           # tanh, 1 + tanh, 0.5x
           "gelu_fast": [(f"gelu_fast: saved {k}", bi) for k in range(7)],
           # BLOOM's GeLUFunction: ctx.save_for_backward(input)
           "bloom_gelu": [("act's input (GeLUFunction's save)", bi)],
           "relu": []}[t["activation"]]
    if sparse:
        out += moe_tensors(t, x)
    elif t["gated_mlp"]:
        out += act + [("act(gate), kept by the mul", bi),
                      ("up_proj output, kept by the mul", bi),
                      ("act(gate) * up, down_proj's input", bi)]
    else:
        out += act + [("act output, c_proj's input", bi)]
    if t["hidden_dropout"]:
        out.append(("residual dropout mask after the MLP", n))
    if t["four_norms"]:  # post_feedforward_layernorm (down_proj's output)
        out += norm_tensors(t["norm"], bs, h, "sandwich norm after the MLP")
    return out


def outside_tensors(t, x, work):
    b, s, h, d = x["b"], x["s"], x["h"], x["d"]
    ckpt = work["activation_checkpointing"]
    eager = attention_of(work, t) == "eager"
    out = [("input_ids (embedding's indices)", 8 * b * s)]
    e = t["embed_proj_dim"] or h
    if t["mask_positions"]:
        # OPT: position_ids from the mask's cumsum, (b, s); the embedding
        # keeps position_ids + 2; the checkpoint keeps position_ids and
        # cache_position as arguments.
        out.append(("position_ids + offset (embed_positions' indices)",
                    8 * b * s))
        if ckpt:
            out += [("position_ids (checkpoint argument)", 8 * b * s),
                    ("cache_position (checkpoint argument)", 8 * s)]
    elif not t["rotary"] and not t["alibi"]:
        out.append(("position_ids (wpe's indices)", 8 * s))
    elif ckpt:
        out.append(("cache_position / position_ids (checkpoint argument)",
                    8 * s))
    if (t["rotary"] and not t["gptj_rotary"] and not t["deepseek_v2"]
            and (not ckpt or t["llama4"])):
        # (Llama 4: freqs_cis, (1, s, d/2) complex64, the same bytes; under
        # checkpointing a tensor argument, which the checkpoint saves)
        out.append(("cos and sin (1, s, rotary width), kept by RoPE",
                    4 * s * (t["rotary_dim"] or d)))
        if t["local_rotary"] and t["both_rotary_used"]:
            # Gemma-3: the sliding layers' table beside the global one's
            out.append(("local cos and sin (1, s, rotary width), kept by "
                        "the sliding layers' RoPE",
                        4 * s * (t["rotary_dim"] or d)))
    if ckpt and eager:
        out.append(("eager mask (checkpoint argument)",
                    2 * b * s * s if t["rotary"] or t["mask_positions"] or
                    t["alibi"] else 2 * b * s))
    if ckpt and t["alibi"]:
        out.append(("alibi (b * a, 1, s) (checkpoint argument)",
                    2 * b * x["a"] * s))
    if t["embedding_norm"]:
        out += norm_tensors(t["norm"], b * s, h, "embedding norm")
    if t["embedding_dropout"]:
        out.append(("embedding dropout mask", b * s * h))
    if t["embed_scale"]:
        out.append(("embedding normalizer (0-dim)", 2))
    if t["final_softcap"]:  # Gemma-2: cap * tanh(logits / cap)
        out.append(("tanh of the logits (final soft-capping)",
                    2 * b * s * x["v"]))
    if not t["no_final_norm"]:
        out += norm_tensors(t["norm"], b * s, h, "final norm")
    out.append(("final hidden states, lm_head's (project_out's) input",
                2 * b * s * h))
    if e != h:
        out += [("project_in's input (the token embeddings)", 2 * b * s * e),
                ("project_out's output, lm_head's input", 2 * b * s * e)]
    return out


def adapter_terms(s, b, adapters, checkpointing):
    """What the LoRA adapters store, module by module (PEFT's lora.Linear
    forward: lora_B(lora_A(dropout(x))) * scaling): lora_B's input, the
    r-wide intermediate (2sbr); with dropout, the 1-byte mask (sb x in) and
    its output, lora_A's input (2sb x in); without dropout lora_A reads x
    itself, already counted. A recomputed layer keeps only its input: under
    checkpointing the modules inside the layers store nothing."""
    terms = []
    for m in adapters.get("modules", []) if adapters else []:
        if checkpointing and m.get("in_layer"):
            continue
        terms.append(("lora_B input", 2 * s * b * adapters["rank"]))
        if adapters.get("dropout"):
            terms.append(("lora dropout mask", s * b * m["in_features"]))
            terms.append(("lora_A input", 2 * s * b * m["in_features"]))
    return terms


def mlp_step(bs, h, i):
    """A gated (or GPT-2) MLP's backward over bs tokens of width i, above
    its saves: down_proj's input gradient with its weight's (freed once
    Gemini takes it), or the last product's three gradients once down_proj's
    input is released."""
    return max(2 * bs * i + 2 * h * i, 4 * bs * i)


def moe_backward(t, x):
    """The sparse block's backward above its saves and the residual
    stream's gradient, at the bound that every token reaches the expert
    whose backward runs first (all the block's saves still held): the
    gradient of the block's input, summed over the experts and the router
    (2N), one expert's MLP over all b s tokens (once the shared expert's
    saves are released: its backward runs first), the shared expert's,
    and the index's scatter of its input gradient into a b s x h zero
    tensor (index_backward)."""
    if t["llama4"]:  # Llama4TextMoe (llama4_oracle.py)
        import llama4_oracle
        return llama4_oracle.moe_backward(llama4_oracle.sub_config(t, x), x)
    bs, h = x["b"] * x["s"], x["h"]
    shared = t["shared_expert_intermediate_size"]
    # Qwen2-MoE's shared expert, last in forward, runs its backward first
    # (all saves held); the routed experts' after its saves are released.
    shared_saves = (sum(n for name, n in moe_tensors(t, x)
                        if name.startswith("moe shared expert"))
                    if shared else 0)
    if t["deepseek_v2"]:
        return deepseek_v2_oracle.moe_backward(t, x, mlp_step, shared_saves)
    return max(mlp_step(bs, h, shared) if shared else 0,
               mlp_step(bs, h, t["moe_intermediate_size"]) - shared_saves,
               6 * bs * h)


def moe_forward(t, x):
    """Re-running a sparse block under checkpointing, at its last expert:
    the one-hot expert mask (b s x k x E int64) and the output it
    index_adds into (b s x h), over the layer's saves and the incoming
    gradient."""
    bs, n = x["b"] * x["s"], x["b"] * x["s"] * x["h"]
    if t["deepseek_v2"]:
        return deepseek_v2_oracle.moe_forward(t, x)
    shared = 4 * n if t["shared_expert_intermediate_size"] else 0
    if t["deepseek_moe"]:  # the fp32 sum; the shared experts run after
        shared = 0
    return (8 * bs * t["experts_per_token"] * t["num_experts"] +
            4 * n + shared)


def layer_terms(t, x, attention, ckpt, sparse):
    """One decoder layer (`sparse`: an MoE layer): {"saved": its saves,
    "backward": what its backward holds above them, "inside": the most
    the layers' backward holds above what the loss and the final norm
    left, recomputation included}. The backward: the residual stream's
    gradient plus its largest step: first the MLP's (or the sparse
    block's, moe_backward) over all the layer's saves; then o_proj's
    (its input's and weight's gradients beside its saved input) once the
    MLP, the second norm and the residual masks are released; then the
    attention's (eager softmax's gradients in and out, fp32 when upcast; a
    kernel's dq, dk, dv, d(out); o_proj's input and weight gradients) once
    the MLP, the second norm, the residual masks, o_proj's input and PV's
    operands are released."""
    b, s, h = x["b"], x["s"], x["h"]
    tensors = layer_tensors(t, x, attention, sparse)
    layer = sum(n for _, n in tensors)
    bs, i, ad, n = b * s, x["i"], x["a"] * x["d"], b * s * h
    norm = sum(m for _, m in norm_tensors(t["norm"], bs, h, ""))
    mlp_names = ("act", "gate_proj", "up_proj", "c_fc", "gelu_new",
                 "gelu_fast", "residual dropout", "moe")
    # (the gated product's or gelu_new's / gelu_fast's last product's three
    # gradients come once down_proj's input is released; relu's two while
    # its result, down_proj's input, is still saved; a single op's two are
    # no more than the input's gradient with the weight's)
    # The MLP's residual dropout (where its mask is known to be the MLP's)
    # runs its backward before the MLP's: its 1-byte mask is released
    # before every MLP step, and its output's gradient (2N) is held through
    # the down projection's (Falcon's parallel layer holds it longer,
    # `dropout_grad_kept` below).
    mlp_mask = n if not sparse and t["hidden_dropout"] and (
        not t["one_residual_mask"] or t["single_norm"] or
        t["parallel_residual"]) else 0
    dropout_grad_kept = t["direct_sdpa"] and t["hidden_dropout"] and (
        t["single_norm"] or t["parallel_residual"])
    mask_grad = 2 * n if mlp_mask and not dropout_grad_kept else 0
    down = 2 * bs * i + 2 * h * i  # down's input and weight gradients
    if sparse:
        step = moe_backward(t, x)
    elif t["activation"] == "bloom_gelu":
        # dense_4h_to_h's input and weight gradients, then bloom_gelu_back:
        # the incoming gradient and, at most, five temporaries of its tanh
        # arithmetic at once (2bsI each), once dense_4h_to_h's input is
        # released
        step = max(10 * bs * i - mlp_mask, down + mask_grad - mlp_mask)
    elif t["gated_mlp"] or t["activation"] != "single_op":
        step = max(down + mask_grad - mlp_mask, 4 * bs * i - mlp_mask)
    else:
        step = down + mask_grad - mlp_mask
    if not sparse and not t["gated_mlp"]:
        # The up projection's (c_fc, fc1, dense_h_to_4h): its incoming
        # gradient, its input's and its weight's, once the activation's
        # saves, down's input and the MLP's residual dropout mask (where
        # it is known to be the MLP's) are released: above the rest where
        # the MLP is narrower than h (one tp rank's).
        between = sum(m for name, m in tensors
                      if name.startswith(("act", "gelu_new", "gelu_fast")))
        between += mlp_mask
        step = max(step, 2 * bs * i + 2 * n + 2 * h * i - between)
    if t["fused_gate_up"]:
        # Phi-3's gate_up_proj: the fused output's gradient (chunk's
        # backward joins the two halves, 4bsI), the fused weight's (4hI)
        # and the input's, once down_proj's input, act(gate), the fused
        # output (8bsI) and the MLP's residual dropout mask are released.
        step = max(step, 4 * h * i + 2 * n - 4 * bs * i - mlp_mask)
    q = 2 * bs * ad
    attn_work = max(4 * q, q + 2 * h * ad)
    after_attention = (sum(m for name, m in tensors
                           if name.startswith(("post-attention",
                                               "sandwich") + mlp_names))
                       + q)  # o_proj's input
    # o_proj's own backward: its input's gradient (2bs·a·d) and its
    # weight's (2h·a·d) while its saved input (2bs·a·d) and the attention's
    # saves are still held, once the MLP's, the second norm's and the
    # residual masks' are released (above the attention's later steps
    # where a·d is wider than h).
    o_proj_step = 2 * q + 2 * h * ad - after_attention
    if eager_terms(t, x, attention):
        p = b * x["a"] * s * s
        attn_work = max(attn_work, (8 if t["fp32_softmax"] else 4) * p)
        for_pv = (3 * p if t["attention_dropout"] else
                  2 * p if t["fp32_softmax"] else 0)
        after_attention += pv_operand(t, x) + for_pv  # v, PV's left factor
    # Last, q, k and v's projections: their gradients, the largest
    # projection weight's gradient (GPT-2's fused c_attn: all three) and the
    # input's, once all but the first norm's saves and output is released.
    qkv = 2 * bs * (ad + 2 * x["kv"] * x["d"])
    weight = 2 * h * (ad + 2 * x["kv"] * x["d"] if t["fused_qkv"] else ad)
    qkv_step = (qkv + weight + 2 * n -
                (layer - norm - 2 * n))
    # A norm's backward: its fp32 arithmetic's temporaries, NORM_BACKWARD
    # bytes an element (after the MLP, for the second norm; last, for the
    # first).
    norm_step = NORM_BACKWARD[t["norm"]] * n
    mlp_and_masks = sum(m for name, m in tensors
                        if name.startswith(mlp_names))
    if t["four_norms"]:
        # Gemma-2: post_feedforward_layernorm's backward comes first, over
        # all the layer's saves; the MLP's once its saves are released.
        step = max(step - norm, norm_step)
    # Falcon's parallel layer: the MLP's input gradient (2N) waits through
    # the attention's backward for the attention's share (ln_mlp, or the
    # one norm, runs its backward after the attention's); with hidden
    # dropout, the dropout's gradient (counted below) is released by the
    # attention's dense backward, so only dense's step holds both.
    falcon_parallel = t["direct_sdpa"] and (t["single_norm"] or
                                            t["parallel_residual"])
    o_proj_step += 2 * n if falcon_parallel else 0
    waiting = 2 * n if falcon_parallel and not dropout_grad_kept else 0
    steps = [step, attn_work - after_attention + waiting, o_proj_step,
             qkv_step + waiting, norm_step - mlp_and_masks - 2 * n,
             norm_step - (layer - norm - 2 * n)]
    if t["parallel_block"]:
        # Cohere: attention and MLP read one norm's output; the MLP's
        # backward runs first (it ran last) and its input's gradient (2N)
        # waits for the attention's share; no second norm.
        steps = [step, attn_work - after_attention + 2 * n,
                 o_proj_step + 2 * n,
                 qkv_step + 2 * n, norm_step - (layer - norm - 2 * n)]
    if t["post_norm"]:
        # OPT's do_layer_norm_before false: the layer's last norm
        # (final_layer_norm, after the MLP's residual) runs its backward
        # first, over all the saves, and releases its saves (its input,
        # mean and rstd) before every other step.
        steps = [max(0, m - norm) for m in steps] + [norm_step]
    backward = 2 * n + max(steps)
    if dropout_grad_kept:
        # Falcon's parallel layer: the MLP's dropout's gradient (2N) stays
        # for the attention's branch beside the output's, held for the
        # residual.
        backward += 2 * n
    # (a LayerNorm's saved input is the layer's input, which the
    # checkpoint keeps already: not a new allocation of the re-run)
    recompute = (layer - (2 * n if t["norm"] == "layer_norm" else 0)
                 if ckpt else 0)
    # Re-running an eager layer, its softmax holds the 16-bit scores, their
    # fp32 copy and the result at once (GPT-2: the scores and the result),
    # over the saves made before it (v repeated among them), the tensors
    # the attention's locals still hold (q, k and v before their copies)
    # and the incoming gradient.
    forward_softmax = 0
    if ckpt and eager_terms(t, x, attention):
        p = b * x["a"] * s * s
        before = sum(m for name, m in tensors
                     if name.startswith(("input norm", "q_norm", "k_norm",
                                         "the 0-dim scale")))
        # q and k for QK^T (GPT-J's fp32; the same bound for BLOOM's and
        # Falcon's layouts), v repeated (a copy, the k-sized view, or
        # Phi-3's fused output; GPT-NeoX's view of it is PV's alone, not
        # yet made)
        qk = 2 if t["gptj_rotary"] else 1
        before += qk * q + qk * eager_kv(x)
        before += eager_kv(x) if t["value_view"] else eager_v(t, x)
        kv_locals = (0 if eager_kv(x) == 2 * x["s"] * x["d"] else
                     2 * 2 * bs * x["kv"] * x["d"])
        forward_softmax = (2 * n + before + q + kv_locals +
                           (10 if t["fp32_softmax"] else 4) * p)
    forward_moe = (recompute + 2 * n + moe_forward(t, x)
                   if ckpt and sparse else 0)
    if forward_moe and (t["deepseek_moe"] or t["deepseek_v2"]):
        # DeepseekV3MoE runs its shared experts after the routed ones:
        # their saves are not made yet at the last routed expert.
        forward_moe = max(0, forward_moe - 8 * bs * t[
            "shared_expert_intermediate_size"])
    # (checkpoint's inner backward runs over the re-run layer's output,
    # 2N, held meanwhile)
    rerun_output = 2 * n if ckpt else 0
    # The re-run's last step: the layer's last projection's output (or its
    # dropout's input and output) and the residual sum, 4N (and, GPT-2,
    # the attention's output that GPT2Block.forward keeps bound as
    # attn_output, 2N), beside all its saves and the incoming gradient (2N):
    # above the backward's own steps where those are narrow (one tp rank's
    # MLP).
    # Falcon's dropout_add keeps the MLP's output bound beside the
    # dropout's output and the sum: 2N more where hidden dropout is drawn
    # (its sequential layer's one mask may be the attention's: a bound).
    dropout_add = 2 * n if t["direct_sdpa"] and t["hidden_dropout"] else 0
    # GPT-J's parallel block ends holding the attention's and the MLP's
    # outputs, their sum and the residual sum: 4N more than a sequential
    # block's 4N.
    end = (8 if t["attention_output_held"] else 10 if t["single_norm"]
           else 6)
    forward_end = (recompute + end * n +
                   dropout_add if ckpt else 0)
    return {"saved": layer, "backward": backward,
            "inside": max(recompute + backward + rerun_output,
                          forward_softmax, forward_moe, forward_end)}


def layer_kinds(t, x):
    """The kinds of decoder layer, [(traits, sparse, count)] with a count:
    dense and (moe_layers of them) sparse; Llama 4's, each with and without
    RoPE (llama4_oracle.kinds)."""
    if t["llama4"]:
        import llama4_oracle
        return llama4_oracle.kinds(t, x)
    return [k for k in ((t, False, x["L"] - t["moe_layers"]),
                        (t, True, t["moe_layers"])) if k[2]]


def estimate(shape, work, adapters=None, tp=None):
    """The parts (ints); raises ActivationError. `adapters`: the LoRA
    adapters, {"rank", "dropout", "modules": [{"in_features", "in_layer"}]}
    (docs/lora.md). `tp`: tp rank 0's share under ShardFormer
    (tp_activation_oracle.py); None or tp_size 1: the whole model."""
    x = dims(shape, work)
    if tp is not None and tp["tp_size"] == 1:
        tp = None
    if tp is not None:
        try:
            x = tp_activation_oracle.rank_dims(x, tp)
        except tp_activation_oracle.TpError as e:
            raise ActivationError(str(e)) from e
    t = dict(DEFAULT_TRAITS, **shape)
    if tp is not None and tp.get("ties_head"):  # OPT's postprocess under tp
        t["tied_embeddings"] = True
    if tp is not None:
        # (the post-norm layer's first release is measured on the whole
        # model only: at a tp rank the post-norm peak measured as the
        # pre-norm one, docs/plan.md "What is measured")
        t["post_norm"] = False
    ckpt = work["activation_checkpointing"]
    attention = attention_of(work, t)
    b, s, h, v = x["b"], x["s"], x["h"], x["v"]
    # The MoE families: moe_layers of the L layers are sparse (their MLP
    # the sparse block), the others dense.
    terms = [(layer_terms(tk, x, attention, ckpt, sparse), count)
             for tk, sparse, count in layer_kinds(t, x)]
    # GPT-2 or BLOOM under sequence parallelism (tp_gpt2_sp_oracle.py,
    # tp_bloom_sp_oracle.py): the blocks on s / t rows
    sp = tp is not None and tp.get("sequence_parallel", False)
    sp_oracle = (tp_bloom_sp_oracle if t["activation"] == "bloom_gelu"
                 else tp_gpt2_sp_oracle)
    if sp:
        sp_oracle.check(x, tp)
        terms = [(sp_oracle.layer_terms(t, x, tp, attention, ckpt),
                  x["L"])]
    rows = s // tp["tp_size"] if sp else s  # the blocks' sequence
    layer = max(term["saved"] for term, _ in terms)
    per_layer = 2 * b * rows * h if ckpt else layer
    layers_bytes = (x["L"] * per_layer if ckpt else
                    sum(term["saved"] * count for term, count in terms))
    loss = 4 * b * s * v + targets(b, s) + 4  # log-probs, targets, weight
    if t["deepseek_v2"]:  # the remote code's shifted fp32 logits
        loss = deepseek_v2_oracle.loss_bytes(x)
    outside = sum(n for _, n in outside_tensors(t, x, work))
    logits = (4 if t["fp32_logits"] else 2) * b * s * v  # held
    embedding_rows = v
    gathered = tp is not None and tp.get("gathered_head", False)
    if tp is not None:
        if not gathered:  # else transformers' loss on the whole vocabulary
            loss = sum(n for _, n in tp_activation_oracle.loss_tensors(x, tp))
            logits = tp_activation_oracle.held_logits(x, tp)
        # the embedding's ids and mask for input_ids
        outside += (sum(n for _, n in tp_activation_oracle.embedding_tensors(x))
                    - 8 * b * s)
        embedding_rows = tp_activation_oracle.sizes(x, tp)[0]
    # (under checkpointing the rotary tables are every layer's arguments:
    # Gemma-3's local and global tables both)
    held = logits + ((2 if t["local_rotary"] else 1) *
                     4 * s * (t["rotary_dim"] or x["d"])
                     if ckpt and t["rotary"] and not t["gptj_rotary"] and
                     not t["llama4"] and not t["deepseek_v2"] else 0)
    # Backward (docs/plan.md, "Transients"). The head: lm_head's backward
    # holds the 16-bit logits' gradient, its input's and its weight's, once
    # the loss's saves are gone. The layers (layer_terms) run on what the
    # loss and the final norm left.
    bs, n = b * s, b * s * h
    norm = sum(m for _, m in norm_tensors(t["norm"], bs, h, ""))
    e = t["embed_proj_dim"] or h  # the embedding's and lm_head's width
    final = 0 if t["no_final_norm"] else norm
    released = loss + final + 2 * n
    if t["final_softcap"]:  # the logits' tanh, released by the head
        released += 2 * b * s * v
    if e != h:  # OPT's project_out output, lm_head's saved input
        released += 2 * b * s * e
    # (a biased lm_head, GPT-J: the bias's gradient beside the weight's)
    head = max(0, tp_activation_oracle.head_last_step(
        2 * b * s * v, b * s, v, e, t["head_bias"]) - loss)
    # fp32 gradients of log-probs and logits: nll_loss's (4bsv), then, once
    # its saves (the targets, the fp32 total_weight) are released,
    # log_softmax's beside it
    loss_backward = max(4 * b * s * v, 8 * b * s * v - targets(b, s) - 4)
    if t["deepseek_v2"]:
        loss_backward = deepseek_v2_oracle.loss_backward_bytes(x)
    if gathered:
        head = tp_activation_oracle.gathered_head_backward(
            x, tp, loss, e, t["head_bias"])
    elif tp is not None:
        loss_backward, head = tp_activation_oracle.backward_steps(
            x, tp, loss, e, t["head_bias"])
    if e != h:
        # OPT's project_out after lm_head: its weight's and its input's
        # gradients beside the incoming one (lm_head's saved input, 2bse,
        # released), a tied weight's gradient held, once the loss's saves
        # are gone.
        head = max(head, 2 * e * h + 2 * b * s * h + (
            2 * embedding_rows * e if t["tied_embeddings"] else 0) - loss)
    layer_backward = max(term["backward"] for term, _ in terms)
    # (a LayerNorm's saved input is the layer's input, which the
    # checkpoint keeps already: not a new allocation of the re-run)
    recompute = (layer - (2 * b * rows * h if t["norm"] == "layer_norm"
                          else 0)
                 if ckpt else 0)
    # A tied lm_head / embedding weight's gradient waits in AccumulateGrad's
    # input buffer for the embedding's share: held through the layers.
    tied = 2 * embedding_rows * e if t["tied_embeddings"] else 0
    inside = max(term["inside"] for term, _ in terms) + tied
    parts = {
        "per_layer_bytes": per_layer,
        "layers_bytes": layers_bytes,
        "outside_layers_bytes": outside,
        "loss_bytes": loss,
    }
    parts["adapter_bytes"] = sum(n for _, n in adapter_terms(
        s, b, adapters, ckpt))
    parts["saved_bytes"] = (parts["layers_bytes"] + outside + loss +
                            parts["adapter_bytes"])
    parts["held_bytes"] = held
    parts["total_bytes"] = parts["saved_bytes"] + held
    parts["loss_backward_bytes"] = loss_backward
    parts["recompute_bytes"] = recompute
    parts["layer_backward_bytes"] = layer_backward
    parts["head_backward_bytes"] = head
    # Last, the embedding's backward: its output's gradient and its weight's
    # (with a tied lm_head, the held gradient and their sum, out of place),
    # once everything but the embedding's indices and the 16-bit logits
    # (the model's output) is released.
    kept = (8 * bs + (8 * bs if t["mask_positions"] else
                      8 * s if not t["rotary"] and not t["alibi"] else 0)
            + logits)
    if sp:  # the blocks' gathered inputs, held until the graph is freed
        kept += sp_oracle.gathered_bytes(x, tp, ckpt)
    # (embedding_dense_backward's weight gradient beside the incoming one;
    # tied, the engine frees that before it adds the two weight gradients
    # out of place)
    weight = 2 * embedding_rows * e
    step = (2 * weight + max(2 * b * s * e, weight) if t["tied_embeddings"]
            else 2 * b * s * e + weight)
    embedding = max(0, step - (parts["total_bytes"] - kept))
    if sp:
        embedding = sp_oracle.embedding_step(
            t, x, embedding_rows, parts["total_bytes"] - kept)
    parts["embedding_backward_bytes"] = embedding
    # The final norm's backward, once the loss and lm_head released theirs.
    final_norm = (0 if t["no_final_norm"] else
                  max(0, NORM_BACKWARD[t["norm"]] * n - loss))
    parts["final_norm_backward_bytes"] = final_norm
    parts["transient_bytes"] = max(loss_backward, head, final_norm,
                                   inside - released, embedding)
    for p in PARTS:
        if parts[p] > U64_MAX:
            raise ActivationError(f"activations.{p} exceeds 2^64-1 bytes")
    return parts


MLA_SIZES = ("q_lora_rank", "kv_lora_rank", "qk_rope_head_dim",
             "v_head_dim", "router_groups", "nope_layers", "nope_moe_layers")
MOE_SIZES = ("moe_layers", "num_experts", "experts_per_token",
             "moe_intermediate_size", "shared_expert_intermediate_size")
BOOL_TRAITS = ("tied_embeddings", "fused_qkv", "gated_mlp", "rotary", "qk_norm", "fp32_softmax",
               "scale_by_tensor", "embed_scale", "attention_output_held",
               "attention_dropout",
               "hidden_dropout", "embedding_dropout", "norm_topk_prob",
               "parallel_residual", "value_view", "mask_positions",
               "no_final_norm", "post_norm", "single_norm", "gptj_rotary",
               "fp32_logits", "head_bias", "no_sdpa", "fused_gate_up",
               "parallel_block",
               "four_norms", "attn_softcap", "final_softcap",
               "local_rotary", "both_rotary_used", "deepseek_moe",
               "deepseek_v2", "seq_aux",
               "llama4", "l2_qk_norm", "temperature_tuning",
               # Falcon and BLOOM
               "kv_broadcast", "indexed_kv", "one_residual_mask",
               "direct_sdpa", "alibi", "embedding_norm", "no_flash")
DEFAULT_TRAITS = {"tied_embeddings": False, "fused_qkv": False,
                  "norm": "rms", "gated_mlp": True, "activation": "single_op",
                  "rotary": True, "qk_norm": False, "fp32_softmax": True,
                  "scale_by_tensor": False, "embed_scale": False,
                  "attention_output_held": False,
                  "attention_dropout": False, "hidden_dropout": False,
                  "embedding_dropout": False, "not_estimated": "",
                  # MoE families (0: none)
                  "moe_layers": 0, "num_experts": 0,
                  "experts_per_token": 0, "moe_intermediate_size": 0,
                  "shared_expert_intermediate_size": 0,
                  "norm_topk_prob": False,
                  # LayerNorm families (gpt_neox, opt, gptj, falcon, bloom)
                  "rotary_dim": 0, "parallel_residual": False,
                  "value_view": False, "mask_positions": False,
                  "no_final_norm": False, "post_norm": False,
                  "embed_proj_dim": 0, "single_norm": False,
                  "gptj_rotary": False, "fp32_logits": False,
                  "head_bias": False,
                  "no_sdpa": False,
                  # dense families (phi3, cohere, gemma2)
                  "fused_gate_up": False, "parallel_block": False,
                  "four_norms": False, "attn_softcap": False,
                  "final_softcap": False,
                  # Gemma-3: a local rotary table beside the global one
                  "local_rotary": False, "both_rotary_used": False,
                  # DeepSeek-V3 (mla_oracle.py)
                  "q_lora_rank": 0, "kv_lora_rank": 0,
                  "qk_rope_head_dim": 0, "v_head_dim": 0,
                  "deepseek_moe": False,
                  # DeepSeek-V2 (deepseek_v2_oracle.py)
                  "deepseek_v2": False, "router_groups": 0,
                  "seq_aux": False,
                  # Llama 4 (llama4_oracle.py)
                  "llama4": False, "nope_layers": 0, "nope_moe_layers": 0,
                  "l2_qk_norm": False, "temperature_tuning": False,
                  # Falcon and BLOOM
                  "kv_broadcast": False, "indexed_kv": False,
                  "one_residual_mask": False, "direct_sdpa": False,
                  "alibi": False, "embedding_norm": False,
                  "no_flash": False}


def read_request(request):
    shape = dict(DEFAULT_TRAITS)
    shape.update(request["shape"])
    for f in SIZE_FIELDS + ("num_key_value_heads", "head_dim",
                            "intermediate_size", "rotary_dim",
                            "embed_proj_dim") + MOE_SIZES + MLA_SIZES:
        shape[f] = int(shape.get(f, 0) or 0)
    shape["not_estimated"] = shape.get("not_estimated") or ""
    for f in BOOL_TRAITS:
        shape[f] = bool(shape[f])
    w = request["workload"]
    work = {"micro_batch": int(w["micro_batch"]),
            "sequence_length": int(w["sequence_length"]),
            "activation_checkpointing": bool(
                w.get("activation_checkpointing", False)),
            "attention": w.get("attention", "default")}
    return shape, work


def answer(line):
    request = json.loads(line)
    try:
        shape, work = read_request(request)
        parts = estimate(shape, work, request.get("adapters"),
                         request.get("tp"))
    except ActivationError as e:
        return json.dumps({"error": str(e), "code": e.code})
    out = {p: str(parts[p]) for p in PARTS}
    if request.get("measure"):
        import measure_torch  # torch only where asked
        out.update({k: str(v) for k, v in
                    measure_torch.measure(
                        shape, work, request.get("family", "llama"),
                        request.get("seed", 0),
                        (request.get("tp") or {}).get("tp_size", 1),
                        (request.get("tp") or {}).get("sequence_parallel",
                                                      False)).items()})
    return json.dumps(out)


def main(argv):
    if argv[1:] != ["--jsonl"]:
        print(__doc__, file=sys.stderr)
        return 2
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    for line in sys.stdin:
        if line.strip():
            print(answer(line), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
