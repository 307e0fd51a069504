"""Llama 4's text model (model_type "llama4_text"): what its layers save for
backward under torch >= 2.2 with eager attention, tensor by tensor, written
from transformers' modeling_llama4.py as of 4.51.x (the copy whose
attention reads `use_rope = int((layer_idx + 1) % 4 != 0)` and whose eager
softmax runs on `attn_weights.float()`), not from chunkplan's C++.
gemma3_llama4_torch.Llama4ForCausalLM holds the same code as a torch module;
llama4_oracle_test.py holds this list equal to what autograd saves there.

The config `c` is gemma3_llama4_torch's (hidden, heads, kv_heads, head_dim,
vocab, layers, tied, checkpointing, attention_dropout and
c["llama4"]: experts, top_k, inter, inter_mlp, moe_layers, use_qk_norm,
attn_temperature_tuning).

The routing: Llama4TextMoe (4.51.x) sends every token to every expert (the
scores of the experts a token did not choose are sigmoid(-inf) = 0), so what
it saves does not depend on the routing: no bound is needed, the count is
exact for any router.
"""

from activation_oracle import eager_kv, norm_tensors, targets


def dims(c, b, s):
    return dict(b=b, s=s, h=c["hidden"], a=c["heads"], kv=c["kv_heads"],
                d=c["head_dim"], v=c["vocab"], L=c["layers"])


def use_rope(layer):
    """Llama4TextAttention (4.51.x): RoPE (and the chunked mask) on layers
    where (i + 1) % 4 != 0; the others are NoPE layers."""
    return (layer + 1) % 4 != 0


def extra_tensors(m, x, rope):
    """What Llama4TextAttention saves beyond LLaMA's eager attention: on a
    RoPE layer the L2 qk_norm's (use_qk_norm), on a NoPE layer temperature
    tuning's (attn_temperature_tuning). `m`: c["llama4"]."""
    bs, s, a, kv, d = x["b"] * x["s"], x["s"], x["a"], x["kv"], x["d"]
    out = []
    # (RoPE's complex product keeps the fp32 complex table only, one
    # storage for every layer: outside_tensors.)
    if rope and m["use_qk_norm"]:
        # Llama4TextL2Norm: x.float(), kept by pow and x * rsqrt; rsqrt
        # (fp32); no weight (its type_as output is q / k below).
        out += [("q_norm (L2): x.float()", 4 * bs * a * d),
                ("q_norm (L2): rsqrt (fp32)", 4 * bs * a),
                ("k_norm (L2): x.float()", 4 * bs * kv * d),
                ("k_norm (L2): rsqrt (fp32)", 4 * bs * kv)]
    if m["attn_temperature_tuning"] and not rope:
        # the (1, s, 1, 1) fp32 scale, kept by q * scale (its product is
        # fp32, cast back: that copy is q below)
        out.append(("temperature tuning: attn_scales (fp32)", 4 * s))
    return out


def attention_tensors(c, x, layer):
    """Llama4TextAttention's saves, eager."""
    b, s, a, kv, d = (x[k] for k in ("b", "s", "a", "kv", "d"))
    bs = b * s
    out = extra_tensors(c["llama4"], x, use_rope(layer))
    q = 2 * bs * a * d
    p = b * a * s * s
    # q: RoPE's / the norm's / the tuning's fresh (b, s, a, d) tensor or
    # q_proj's output, transposed; matmul keeps it or its copy: q's bytes
    # either way. K and V as LLaMA's (eager_kv): the kv-wide storage where
    # repeat_kv's and matmul's reshapes stay views, else a q-wide copy.
    out += [("q for QK^T", q), ("k repeated, for QK^T", eager_kv(x)),
            ("softmax result (fp32)", 4 * p)]
    if c["attention_dropout"]:
        out += [("attention dropout mask", p),
                ("dropped probabilities for PV", 2 * p)]
    else:
        out.append(("probabilities .to(dtype) for PV", 2 * p))
    out += [("v repeated, for PV", eager_kv(x)),
            ("o_proj input (contiguous copy)", q)]
    return out


def gated_mlp_tensors(rows, inter, where):
    """Llama4TextMLP (silu): gate_proj's output (silu's input), silu's
    output, up_proj's output, the product (down_proj's input)."""
    bi = 2 * rows * inter
    return [(f"{where}: gate_proj output, kept by act", bi),
            (f"{where}: act(gate), kept by the mul", bi),
            (f"{where}: up_proj output, kept by the mul", bi),
            (f"{where}: act(gate) * up, down_proj's input", bi)]


def moe_tensors(m, x):
    """Llama4TextMoe (4.51.x), E experts on all T = b x s tokens each
    (`m`: c["llama4"])."""
    T, h, E, i = x["b"] * x["s"], x["h"], m["experts"], m["inter"]
    # The index: arange(T) expanded to (E, T), reshape(-1, 1) (a copy of
    # E x T, or with one token a view of the arange itself), expanded.
    index = 8 * E * T if T > 1 else 8
    # (the router's and gather's input is the norm's output, counted)
    return [("moe router: topk indices (int64), scatter_'s index too",
             8 * T * m["top_k"]),
            ("moe router: sigmoid(scores.float()) result (fp32)", 4 * E * T),
            ("moe: gather / scatter_add_ index (E*T, 1) int64, expanded",
             index),
            ("moe: gathered rows (E*T, h), kept by the score mul",
             2 * E * T * h),
            ("moe: scores (E*T, 1) 16-bit copy, kept by the mul", 2 * E * T),
            ("moe experts: scaled rows, gate_up bmm's input", 2 * E * T * h),
            ("moe experts: gate_up (E, T, 2I): act's input and up",
             4 * E * T * i),
            ("moe experts: act(gate), kept by the mul", 2 * E * T * i),
            ("moe experts: up * act(gate), down bmm's input",
             2 * E * T * i)] + gated_mlp_tensors(T, i, "moe shared expert")


def layer_tensors(c, x, layer):
    """What decoder layer `layer` saves without checkpointing."""
    bs, n = x["b"] * x["s"], x["b"] * x["s"] * x["h"]
    out = norm_tensors("rms", bs, x["h"], "input norm")
    out.append(("input norm's output, kept by q/k/v projections", 2 * n))
    out += attention_tensors(c, x, layer)
    out += norm_tensors("rms", bs, x["h"], "post-attention norm")
    out.append(("post-attention norm's output, kept by the MLP", 2 * n))
    if layer in c["llama4"]["moe_layers"]:
        out += moe_tensors(c["llama4"], x)
    else:
        out += gated_mlp_tensors(bs, c["llama4"]["inter_mlp"], "dense MLP")
    return out


def outside_tensors(c, x, ckpt):
    """Saves outside the layers, and (ckpt) the checkpoint's arguments."""
    b, s, h, d, L = x["b"], x["s"], x["h"], x["d"], x["L"]
    out = [("input_ids (embedding's indices)", 8 * b * s)]
    if any(use_rope(i) for i in range(L)) or ckpt and L:
        # (1, s, d/2) complex64, kept by every RoPE layer's product; under
        # checkpointing every layer's argument
        out.append(("freqs_cis (complex64), RoPE's table", 4 * s * d))
    if ckpt and L:
        out += [("layer inputs (checkpoint arguments)", L * 2 * b * s * h),
                ("cache_position / position_ids (checkpoint argument)",
                 8 * s),
                ("eager mask (checkpoint argument)", 2 * b * s * s)]
    out += norm_tensors("rms", b * s, h, "final norm")
    out.append(("final hidden states, lm_head's input", 2 * b * s * h))
    out += [("loss: log-probs (fp32)", 4 * b * s * x["v"]),
            ("loss: targets (int64)", targets(b, s)),
            ("loss: total weight", 4)]
    return out


def tensors(c, b, s):
    """Every tensor saved for backward at the end of forward, named."""
    x = dims(c, b, s)
    ckpt = c["checkpointing"]
    out = outside_tensors(c, x, ckpt)
    if not ckpt:
        for layer in range(x["L"]):
            out += [(f"layer {layer}: {name}", n)
                    for name, n in layer_tensors(c, x, layer)]
    return out


def saved_bytes(c, b, s):
    return sum(n for _, n in tensors(c, b, s))


# The activation oracle's traits (activation_oracle.py): "llama4" (the
# layer is Llama4TextDecoderLayer), "nope_layers" (of num_layers, those
# without RoPE), "nope_moe_layers" (of those, the MoE ones; moe_layers
# counts every MoE layer), "l2_qk_norm" (use_qk_norm), "temperature_tuning"
# (attn_temperature_tuning); intermediate_size is a dense layer's MLP
# (intermediate_size_mlp), moe_intermediate_size an expert's and the
# shared expert's.


def sub_config(t, x):
    """c["llama4"] for the oracle's traits `t` and dims `x`."""
    return {"experts": t["num_experts"], "top_k": t["experts_per_token"],
            "inter": t["moe_intermediate_size"], "inter_mlp": x["i"],
            "use_qk_norm": t["l2_qk_norm"],
            "attn_temperature_tuning": t["temperature_tuning"]}


def check(t, error):
    """Raises `error` naming the first layer count out of range."""
    if not t.get("llama4"):
        return
    if t["nope_layers"] > t["num_layers"]:
        raise error("shape.nope_layers must be at most shape.num_layers")
    if t["nope_moe_layers"] > min(t["nope_layers"], t["moe_layers"]):
        raise error("shape.nope_moe_layers must be at most shape.nope_layers "
                    "and shape.moe_layers")
    if t["moe_layers"] - t["nope_moe_layers"] > \
            t["num_layers"] - t["nope_layers"]:
        raise error("shape.moe_layers less shape.nope_moe_layers must be at "
                    "most the layers with RoPE")


def kinds(t, x):
    """The four kinds of layer, [(traits, sparse, count)] with a count:
    RoPE or not ("rotary" false in a NoPE kind's traits) x MoE or dense."""
    L, moe = x["L"], t["moe_layers"]
    nope, nope_moe = t["nope_layers"], t["nope_moe_layers"]
    nope_t = dict(t, rotary=False)
    out = [(t, False, L - nope - (moe - nope_moe)), (t, True, moe - nope_moe),
           (nope_t, False, nope - nope_moe), (nope_t, True, nope_moe)]
    return [k for k in out if k[2]]


def torch_config(c, shape, work, inside):
    """gemma3_llama4_torch's config for the oracle's traits, from
    decoder_torch's config `c` of the same shape. The torch model's NoPE
    layers are those where (i + 1) % 4 == 0 (the shape's nope_layers must
    count them); within RoPE and within NoPE layers the kind whose
    `inside(traits, sparse)` is larger comes last (its backward first, as
    the estimate bounds it)."""
    L = shape["num_layers"]
    rope = [i for i in range(L) if use_rope(i)]
    nope = [i for i in range(L) if not use_rope(i)]
    if len(nope) != shape["nope_layers"]:
        raise ValueError("shape.nope_layers must be the torch model's "
                         f"{len(nope)} NoPE layers")
    moe_layers = []
    for layers, sparse, rotary in (
            (rope, shape["moe_layers"] - shape["nope_moe_layers"], True),
            (nope, shape["nope_moe_layers"], False)):
        t = dict(shape, rotary=rotary)
        last = inside(t, True) >= inside(t, False)
        moe_layers += layers[len(layers) - sparse:] if last else \
            layers[:sparse]
    return dict(c, family="llama4_text", llama4={
        "experts": shape["num_experts"], "top_k": shape["experts_per_token"],
        "inter": shape["moe_intermediate_size"],
        "inter_mlp": c["intermediate"], "moe_layers": sorted(moe_layers),
        "use_qk_norm": shape["l2_qk_norm"],
        "attn_temperature_tuning": shape["temperature_tuning"],
        "floor_scale": 8192, "attn_scale": 0.1})


def moe_backward(m, x):
    """Llama4TextMoe's backward above its saves and the residual stream's
    gradient (2N, the block's output gradient, scatter_add_'s self
    gradient too). scatter_add_'s backward gathers the source's gradient,
    (E*T, h), held until the experts' down bmm runs; the shared expert,
    made last, runs its backward first (its gated MLP's step); then the
    experts' bmm over all E*T rows: down's input and weight gradients
    (2ETI, 2EIh) once the shared expert's saves are released, or the
    product's gradients (4ETI); last gate_up's: the joined gradient of its
    output (chunk's backward, 4ETI), its input's (2ETh) and its weight's
    (4EhI), once act(gate), the product and gate_up's output (8ETI) are
    released too."""
    T, h, E, i = x["b"] * x["s"], x["h"], m["experts"], m["inter"]
    import activation_oracle
    shared_saves = 8 * T * i
    src = 2 * E * T * h
    return max(src + activation_oracle.mlp_step(T, h, i),
               src + 2 * E * T * i + 2 * E * i * h - shared_saves,
               4 * E * T * i - shared_saves,
               4 * E * T * i + src + 4 * E * h * i - 8 * E * T * i -
               shared_saves)
