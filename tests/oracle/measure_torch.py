"""Measures one small model in torch (CPU, bf16): the bytes saved for
backward (saved_tensors.py) and the peak of the backward pass from
torch.profiler's CPU memory events. Eager attention only."""

import torch
import torch.profiler

import decoder_torch
import saved_tensors
import tp_decoder_torch

# The families decoder_torch builds from dense_torch's layers.
DENSE = ("phi3", "cohere", "gemma2", "gemma3_text")

PROBABILITY = 0.1  # any non-zero dropout: only the masks' sizes count


def config(shape, work, family="llama"):
    """decoder_torch's config for the oracle's traits (`family` adds what
    does not change the saves: Qwen2's q/k/v biases)."""
    h, a = shape["hidden_size"], shape["num_attention_heads"]
    return {
        "family": (family if family in DENSE else
                   "llama" if shape["rotary"] else "gpt2"),
        "rotary_dim": shape.get("rotary_dim", 0),
        "layers": shape["num_layers"], "hidden": h, "heads": a,
        "kv_heads": shape["num_key_value_heads"] or a,
        "head_dim": shape["head_dim"] or h // a,
        "intermediate": shape["intermediate_size"] or 4 * h,
        "vocab": shape["vocab_size"], "qkv_bias": family == "qwen2", "o_bias": False,
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
        "attention_dropout": PROBABILITY * shape["attention_dropout"],
        "resid_dropout": PROBABILITY * shape["hidden_dropout"],
        "embedding_dropout": PROBABILITY * shape["embedding_dropout"],
        "embed_scale": shape["embed_scale"],
        "tied": shape["tied_embeddings"],
        "checkpointing": work["activation_checkpointing"],
        "n_positions": work["sequence_length"] + 3,
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


def backward_peak(prof, start_marker):
    """The largest running total of CPU allocations (the kineto [memory]
    events) from the backward marker on, over the total before forward."""
    events, mark = [], None
    for e in prof.profiler.kineto_results.events():
        if e.name() == "[memory]":
            events.append((e.start_us(), e.nbytes()))
        elif e.name() == start_marker and mark is None:
            mark = e.start_us()
    events.sort(key=lambda x: x[0])  # stable: same-microsecond order kept
    total, peak = 0, 0
    for t, n in events:
        total += n
        if t >= mark:
            peak = max(peak, total)
    return peak


def measure(shape, work, family, seed, tp=1):
    """The measured figures; at tp > 1, of tp rank 0 as ColossalAI's
    ShardFormer runs it (tp_decoder_torch.py)."""
    if work["attention"] != "eager":
        raise ValueError("only eager attention runs in torch 1.13")
    torch.manual_seed(seed)
    c = config(shape, work, family)
    if tp > 1:
        model, forward = tp_decoder_torch.build(c, tp, family)
    else:
        model = decoder_torch.build(c)
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
    # The peak, with torch >= 2.2's mean.dim in the norms.
    decoder_torch.TORCH_2_MEAN = True
    decoder_torch.PRESERVE_RNG_STATE = False
    tp_decoder_torch.CUDA_MUL = True
    try:
        with torch.profiler.profile(
                activities=[torch.profiler.ProfilerActivity.CPU],
                profile_memory=True) as prof:
            loss, logits = forward(ids, mask, ids)
            with torch.profiler.record_function("oracle_backward"):
                loss.backward()
    finally:
        decoder_torch.TORCH_2_MEAN = False
        decoder_torch.PRESERVE_RNG_STATE = True
        tp_decoder_torch.CUDA_MUL = False
    del keep, loss, logits
    return {"measured_saved_bytes": modern,
            "measured_saved_bytes_torch_1_13": raw,
            "measured_peak_bytes": backward_peak(prof, "oracle_backward")}
