"""Measures one small model in torch (CPU, bf16): the bytes saved for
backward (saved_tensors.py) and the peak of the backward pass from
torch.profiler's CPU memory events. Eager attention only."""

import torch
import torch.profiler

import decoder_torch
import deepseek_torch
import deepseek_v2_torch
import falcon_bloom_torch
import layer_norm_torch
import llama4_oracle
import saved_tensors
import tp_decoder_torch
import tp_opt_bloom_falcon_torch

# The families decoder_torch builds from dense_torch's layers.
DENSE = ("phi3", "cohere", "gemma2", "gemma3_text")

PROBABILITY = 0.1  # any non-zero dropout: only the masks' sizes count


def config(shape, work, family="llama"):
    """decoder_torch's config for the oracle's traits (`family` adds what
    does not change the saves: Qwen2's q/k/v biases)."""
    h, a = shape["hidden_size"], shape["num_attention_heads"]
    if family in layer_norm_torch.FAMILIES:
        return layer_norm_config(shape, work, family)
    if family in falcon_bloom_torch.FAMILIES:
        return falcon_bloom_torch.config(shape, work, family, PROBABILITY)
    if family == "llama4_text":  # gemma3_llama4_torch's Llama4ForCausalLM
        return llama4_oracle.torch_config(
            config(dict(shape, moe_layers=0), work), shape, work,
            lambda t, sparse: layer_inside(t, work, sparse))
    c = {
        "family": (family if family in DENSE else
                   "llama" if shape["rotary"] else "gpt2"),
        "rotary_dim": shape.get("rotary_dim", 0),
        "layers": shape["num_layers"], "hidden": h, "heads": a,
        "kv_heads": shape["num_key_value_heads"] or a,
        "head_dim": shape["head_dim"] or h // a,
        "intermediate": shape["intermediate_size"] or 4 * h,
        "vocab": shape["vocab_size"],
        "qkv_bias": family in ("qwen2", "qwen2_moe"), "o_bias": False,
        "mlp_bias": False, "qk_norm": shape["qk_norm"],
        "norm": {"rms": "rms", "gemma_rms": "gemma_rms", "layer_norm": "ln",
                 "cohere_layer_norm": "cohere"}[shape["norm"]],
        "act": ("gelu_new" if shape["activation"] == "gelu_new" else
                "gelu_pytorch_tanh" if shape["norm"] == "gemma_rms" else
                "silu"),
        # CohereConfig's default logit_scale
        "logit_scale": 0.0625 if family == "cohere" else None,
        # Gemma2Config's defaults where the shape soft-caps
        "attn_softcap": 50.0 if shape.get("attn_softcap") else None,
        "final_softcap": 30.0 if shape.get("final_softcap") else None,
        "query_pre_attn_scalar": 256,
        # Gemma-3: sliding layers beside global ones where the shape keeps
        # both rotary tables (else every layer slides), a window of 3
        "sliding_window_pattern": (2 if shape.get("both_rotary_used") else
                                   shape["num_layers"] + 1),
        "sliding_window": 3,
        "attention_dropout": PROBABILITY * shape["attention_dropout"],
        "resid_dropout": PROBABILITY * shape["hidden_dropout"],
        "embedding_dropout": PROBABILITY * shape["embedding_dropout"],
        "embed_scale": shape["embed_scale"],
        "tied": shape["tied_embeddings"],
        "checkpointing": work["activation_checkpointing"],
        "n_positions": work["sequence_length"] + 3,
        # MoE families: the sparse layers' block (decoder_torch.SparseMoeBlock)
        "moe": ({"layers": shape["moe_layers"],
                 "experts": shape["num_experts"],
                 "top_k": shape["experts_per_token"],
                 "inter": shape["moe_intermediate_size"],
                 "shared_inter": shape["shared_expert_intermediate_size"],
                 "norm_topk_prob": shape["norm_topk_prob"],
                 "dense_on_top": dense_on_top(shape, work)}
                if shape.get("moe_layers") else None),
    }
    if family in deepseek_torch.FAMILIES + deepseek_v2_torch.FAMILIES:
        c["mla"] = mla_config(shape)
        c["moe"] = dict(c["moe"] or {"layers": 0},
                        **deepseek_groups(shape))
    if family in deepseek_v2_torch.FAMILIES:
        # topk_group (it chooses experts, saves nothing): as many groups as
        # the top-k needs, so that the bound's last top-k experts are chosen
        groups, experts = shape["router_groups"], shape["num_experts"]
        c["moe"]["v2"] = {
            "groups": groups, "seq_aux": shape["seq_aux"],
            "topk_groups": (min(groups, -(-shape["experts_per_token"] //
                                          (experts // groups)))
                            if groups else 0)}
    return c


def mla_config(shape):
    """deepseek_torch's latent attention sizes from the oracle's traits."""
    rope = shape["qk_rope_head_dim"]
    return {"q_lora": shape["q_lora_rank"], "kv_lora": shape["kv_lora_rank"],
            "rope": rope, "nope": shape["head_dim"] - rope,
            "v": shape["v_head_dim"]}


def deepseek_groups(shape):
    """n_group and topk_group (they choose experts, save nothing): two
    groups where each keeps at least two experts (topk(2) within a group),
    and as many groups chosen as the top-k needs."""
    experts, top_k = shape["num_experts"], shape["experts_per_token"]
    n_group = 2 if experts and experts % 2 == 0 and experts >= 4 else 1
    per_group = max(1, experts // n_group)
    return {"n_group": n_group,
            "topk_group": min(n_group, -(-top_k // per_group))}


def layer_inside(shape, work, sparse):
    """The activation oracle's bound on the layers' backward for one kind
    of layer (sparse or dense) of the traits `shape`."""
    import activation_oracle as ao
    t = dict(ao.DEFAULT_TRAITS, **shape)
    return ao.layer_terms(t, ao.dims(t, work), work["attention"],
                          work["activation_checkpointing"], sparse)["inside"]


def dense_on_top(shape, work):
    """Whether a dense layer's backward holds more than a sparse one's (the
    activation oracle's itemized terms): the estimate bounds each kind as
    if it were the last layer (its backward first, every layer's saves
    held), so the peak is measured with that kind on top."""
    import activation_oracle as ao
    t = dict(ao.DEFAULT_TRAITS, **shape)
    if t["moe_layers"] >= shape["num_layers"]:
        return False
    x = ao.dims(t, work)
    terms = [ao.layer_terms(t, x, work["attention"],
                            work["activation_checkpointing"], sparse)
             for sparse in (False, True)]
    return terms[0]["inside"] > terms[1]["inside"]
def layer_norm_config(shape, work, family):
    """layer_norm_torch's config for the oracle's traits."""
    h, a = shape["hidden_size"], shape["num_attention_heads"]
    return {
        "family": family, "layers": shape["num_layers"], "hidden": h,
        "heads": a, "intermediate": shape["intermediate_size"] or 4 * h,
        "vocab": shape["vocab_size"], "qkv_bias": True,
        "rotary_ndims": shape["rotary_dim"] or shape["head_dim"] or h // a,
        "parallel_residual": shape["parallel_residual"],
        "act": shape["activation"] if shape["activation"] in (
            "gelu_new", "gelu_fast", "relu") else "gelu",
        "attention_dropout": PROBABILITY * shape["attention_dropout"],
        "resid_dropout": PROBABILITY * shape["hidden_dropout"],
        "tied": shape["tied_embeddings"],
        "checkpointing": work["activation_checkpointing"],
        # OPT: word_embed_proj_dim, do_layer_norm_before, the final norm
        "proj": shape["embed_proj_dim"] or h,
        "norm_before": not shape["post_norm"],
        "final_norm": not shape["post_norm"] and not shape["no_final_norm"],
        "affine": True, "n_positions": work["sequence_length"] + 3,
        "embedding_dropout": PROBABILITY * shape["embedding_dropout"],
    }


def drop_parameter_grads(model):
    """Frees each parameter's gradient once accumulated, as Gemini moves
    it into its chunk: a transient, not a lasting .grad."""
    handles = []
    for p in model.parameters():
        node = p.expand_as(p).grad_fn.next_functions[0][0]

        def free(_inputs, _outputs, p=p):
            p.grad = None
        node.register_hook(free)
        handles.append(node)
    return handles


BACKWARD_MARKER = "oracle_backward"  # record_function around backward()


def memory_events(prof, start_marker=BACKWARD_MARKER):
    """The profile's CPU allocations (the kineto [memory] events) as
    (start_us, bytes) in time order, bytes negative where freed, and the
    start of the first `start_marker` range."""
    events, mark = [], None
    for e in prof.profiler.kineto_results.events():
        if e.name() == "[memory]":
            events.append((e.start_us(), e.nbytes()))
        elif e.name() == start_marker and mark is None:
            mark = e.start_us()
    events.sort(key=lambda x: x[0])  # stable: same-microsecond order kept
    return events, mark


def backward_peak(prof, start_marker=BACKWARD_MARKER):
    """The largest running total of CPU allocations from the backward
    marker on, over the total before forward."""
    events, mark = memory_events(prof, start_marker)
    total, peak = 0, 0
    for t, n in events:
        total += n
        if t >= mark:
            peak = max(peak, total)
    return peak


def measure(shape, work, family, seed, tp=1, sp=False, on_profile=None):
    """The measured figures; at tp > 1, of tp rank 0 as ColossalAI's
    ShardFormer runs it (tp_decoder_torch.py,
    tp_opt_bloom_falcon_torch.py; `sp`: GPT-2 or BLOOM with sequence
    parallelism, tp_gpt2_sp_torch.py, tp_bloom_sp_torch.py). `on_profile`,
    where given, is called with each peak run's key and profile
    (peak_trace.py)."""
    if work["attention"] != "eager":
        raise ValueError("only eager attention runs in torch 1.13")
    torch.manual_seed(seed)
    c = config(shape, work, family)
    if tp > 1 and sp and family == "bloom":
        import tp_bloom_sp_torch
        model, forward = tp_bloom_sp_torch.build(c, tp)
    elif tp > 1 and sp:
        import tp_gpt2_sp_torch
        model, forward = tp_gpt2_sp_torch.build(c, tp)
    elif tp > 1 and family in tp_opt_bloom_falcon_torch.FAMILIES:
        model, forward = tp_opt_bloom_falcon_torch.build(c, tp, family)
    elif tp > 1:
        model, forward = tp_decoder_torch.build(c, tp, family)
    else:
        model = (layer_norm_torch.build(c)
                 if family in layer_norm_torch.FAMILIES
                 else falcon_bloom_torch.build(c)
                 if family in falcon_bloom_torch.FAMILIES
                 else deepseek_torch.build(c)
                 if family in deepseek_torch.FAMILIES
                 else deepseek_v2_torch.build(c)
                 if family in deepseek_v2_torch.FAMILIES
                 else decoder_torch.build(c))
        forward = model
    model.train()
    keep = drop_parameter_grads(model)
    b, s = work["micro_batch"], work["sequence_length"]
    ids = torch.randint(0, c["vocab"], (b, s))
    mask = torch.ones(b, s, dtype=torch.long)
    # The saves, counted on the model as written (1.13's extra saves are
    # taken out by name).
    recorder = saved_tensors.SavedRecorder()
    with recorder.hooks():
        loss, _ = forward(ids, mask, ids)
    modern, raw, _ = saved_tensors.saved_bytes(model, loss.grad_fn, recorder)
    loss.backward()
    del loss
    # The peak, with torch >= 2.2's mean.dim in the norms; for an MoE
    # model at the estimate's bound (decoder_torch.ROUTE_ALL_TO_LAST), and
    # with the random router's own routing beside it.
    peaks = {}
    runs = [("measured_peak_bytes", c.get("moe") is not None)]
    if c.get("moe") is not None:
        runs.append(("measured_peak_bytes_random_routing", False))
    decoder_torch.TORCH_2_MEAN = True
    decoder_torch.CUDA_DROPOUT = True
    decoder_torch.PRESERVE_RNG_STATE = False
    tp_decoder_torch.CUDA_MUL = True
    # Without oneDNN: where the CPU has AVX512-BF16, torch 1.13 sends bf16
    # matrix products to oneDNN, whose reorder and scratch buffers come
    # from the CPU allocator and show as memory events (a kernel's own
    # workspace, which the estimate does not count; the saves are the
    # same). Measured on such a CPU (AMD EPYC), BLOOM at hidden 24, one
    # layer: a peak of 46,568 bytes with oneDNN, 32,328 without, the
    # estimate 32,560.
    try:
        for key, bound in runs:
            decoder_torch.ROUTE_ALL_TO_LAST = bound
            with torch.backends.mkldnn.flags(enabled=False), \
                    torch.profiler.profile(
                        activities=[torch.profiler.ProfilerActivity.CPU],
                        profile_memory=True) as prof:
                loss, logits = forward(ids, mask, ids)
                with torch.profiler.record_function(BACKWARD_MARKER):
                    loss.backward()
            del loss, logits
            peaks[key] = backward_peak(prof)
            if on_profile is not None:
                on_profile(key, prof)
    finally:
        decoder_torch.TORCH_2_MEAN = False
        decoder_torch.CUDA_DROPOUT = False
        decoder_torch.PRESERVE_RNG_STATE = True
        decoder_torch.ROUTE_ALL_TO_LAST = False
        tp_decoder_torch.CUDA_MUL = False
    del keep
    return dict({"measured_saved_bytes": modern,
                 "measured_saved_bytes_torch_1_13": raw}, **peaks)
