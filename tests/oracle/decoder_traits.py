"""The activation oracle's traits of a described decoder-only config, from
transformers 4.51.3's modeling code and config classes (not from the C++
families): which norm, MLP, positions, softmax and dropout the family's
training forward runs.

traits(config, description) -> the activation oracle's shape dict, with
"not_estimated" set (the message chunkplan answers) for a family whose
layer is not modelled.
keys_read(config, description) -> the config's keys describing it reads:
the families oracle's (description.keys_read) and those traits looks up.
"""

import json
import re

# model_type: (the config key of the MLP's activation, its default).
_LLAMA_LIKE = {"llama": "silu", "mistral": "silu", "qwen2": "silu",
               "qwen3": "silu", "gemma": "gelu_pytorch_tanh",
               "mixtral": "silu", "qwen2_moe": "silu", "qwen3_moe": "silu"}
# The MoE families (the sparse block of modeling_mixtral.py,
# modeling_qwen2_moe.py, modeling_qwen3_moe.py, 4.51.3): the config
# classes' num_experts_per_tok default, and whether the block renormalizes
# the top-k weights always (Mixtral) or where norm_topk_prob (default
# False); Mixtral's router_jitter_noise (default 0) is read too.
_MOE = {"mixtral": (2, True), "qwen2_moe": (4, False),
        "qwen3_moe": (8, False)}
_SINGLE_OP = ("silu", "swish", "gelu", "gelu_pytorch_tanh")
_NOT_MODELLED = "the family's layer is not modelled"
# The MoE families whose layer the estimate refuses, and what it leaves out
# (transformers 4.51.3's modeling_llama4.py, modeling_deepseek_v3.py;
# DeepSeek-V2's remote modeling_deepseek.py).
_DEEPSEEK = ("DeepSeek's layer is not modelled: multi-head latent attention "
             "(low-rank q and kv projections with their norms, a decoupled "
             "RoPE head) and DeepSeekMoE (group-limited top-k routing, shared "
             "experts; V2's training-time auxiliary loss, V3's sigmoid scores "
             "with a correction bias)")
_NOT_MODELLED_MOE = {
    "deepseek_v2": _DEEPSEEK, "deepseek_v3": _DEEPSEEK,
    "llama4_text": ("Llama 4's layer is not modelled: its MoE (every expert "
                    "on every token: the input repeated num_local_experts "
                    "times, scaled by sigmoid router scores, one batched "
                    "gate_up_proj and down_proj, beside the shared expert), "
                    "chunked attention, the layers without RoPE and the q/k "
                    "L2 norm")}
# A decoder layer's parameter name: (prefix.)layers.<i>. or (prefix.)h.<i>.
_LAYER = re.compile(r"(.*\.)?(?:layers|h)\.(\d+)\.")


def _probability(config, key, default):
    value = config.get(key, default)
    if value is None:
        return False
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 <= value <= 1:
        raise ValueError(f"config {key}: expected a probability in [0, 1], "
                         f"got {json.dumps(value)}")
    return value != 0


def _numel(description, suffix):
    """The numel of the first parameter whose name ends in `suffix`."""
    for name, n in zip(description.names, description.numels):
        if name.endswith(suffix):
            return n
    return 0


def _sizes(description, heads):
    """The sizes, read off the parameter list: layers by index, widths by
    the projections' numels over the hidden size."""
    d = description
    h = d.hidden_size
    layers = {m.group(2) for m in map(_LAYER.match, d.names) if m}
    q = _numel(d, "q_proj.weight") // h or h
    head_dim = q // heads
    kv = (_numel(d, "k_proj.weight") // h // head_dim
          if _numel(d, "k_proj.weight") else heads)
    inter = (_numel(d, "gate_proj.weight") or _numel(d, "c_fc.weight")) // h
    vocab = (_numel(d, "embed_tokens.weight") or _numel(d, "wte.weight")) // h
    return {"num_layers": len(layers), "hidden_size": h,
            "num_attention_heads": heads, "vocab_size": vocab,
            "num_key_value_heads": kv, "head_dim": head_dim,
            "intermediate_size": inter}


def _llama_like(config, model_type, description, heads):
    t = _sizes(description, heads)
    if model_type in _MOE:
        t.update(_moe_sizes(description))
    t.update(tied_embeddings=bool(config.get(
                 "tie_word_embeddings", model_type == "gemma")),
             norm="gemma_rms" if model_type == "gemma" else "rms",
             gated_mlp=True, activation="single_op", rotary=True,
             qk_norm=model_type in ("qwen3", "qwen3_moe"), fp32_softmax=True,
             scale_by_tensor=False, embed_scale=model_type == "gemma",
             hidden_dropout=False, embedding_dropout=False,
             not_estimated="")
    act = config.get("hidden_act")
    act = _LLAMA_LIKE[model_type] if act is None else act
    try:
        t["attention_dropout"] = _probability(config, "attention_dropout", 0)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    if act not in _SINGLE_OP:
        t["not_estimated"] = (f'hidden_act "{act}" is not modelled (silu, '
                              'swish, gelu, gelu_pytorch_tanh are)')
    elif model_type in _MOE and t["moe_layers"]:
        _moe_traits(config, model_type, t)
    return t


def _moe_sizes(description):
    """A MoE family's sizes off the parameter list: the sparse layers (those
    with a router, `.gate.weight`), the experts (the router's rows), an
    expert's width (Mixtral's w1, the Qwen experts' gate_proj), the shared
    expert's; the MLP width is the dense layers' where there are some."""
    d = description
    h = d.hidden_size
    gates = [(name, n) for name, n in zip(d.names, d.numels)
             if name.endswith(".gate.weight")]
    dense = _numel(d, ".mlp.gate_proj.weight") // h
    expert = (_numel(d, ".experts.0.w1.weight") or
              _numel(d, ".experts.0.gate_proj.weight")) // h
    out = {"moe_layers": len(gates),
           "num_experts": gates[0][1] // h if gates else 0,
           "moe_intermediate_size": expert if gates else 0,
           "shared_expert_intermediate_size":
               _numel(d, ".shared_expert.gate_proj.weight") // h
               if gates else 0,
           "experts_per_token": 0, "norm_topk_prob": False}
    if gates:
        out["intermediate_size"] = dense or expert
    return out


def _shown(value):
    """A config value as chunkplan's messages show it (JSON)."""
    return json.dumps(value, separators=(",", ":"))


def _moe_traits(config, model_type, t):
    """The sparse block's traits read from the config (after the layer's),
    or t["not_estimated"] set to the reason: num_experts_per_tok a positive
    integer no larger than the experts (torch.topk), norm_topk_prob and
    output_router_logits true or false, the aux loss (output_router_logits)
    and Mixtral's router jitter not modelled."""
    top_k_default, always_norm = _MOE[model_type]
    top_k = config.get("num_experts_per_tok", top_k_default)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or \
            not 0 < top_k < 2**64:
        t["not_estimated"] = ("config num_experts_per_tok: expected a "
                              "positive integer below 2^64, got " +
                              _shown(top_k))
        return
    if top_k > t["num_experts"]:
        t["not_estimated"] = (f"num_experts_per_tok {top_k} exceeds the "
                              f"experts ({t['num_experts']}): torch.topk "
                              "refuses it")
        return
    norm = always_norm
    keys = ([] if always_norm else ["norm_topk_prob"]) + \
        ["output_router_logits"]
    flags = {}
    for key in keys:
        value = config.get(key, False)
        if not isinstance(value, bool):
            t["not_estimated"] = (f"config {key}: expected true or false, "
                                  f"got {_shown(value)}")
            return
        flags[key] = value
    norm = norm or flags.get("norm_topk_prob", False)
    if flags["output_router_logits"]:
        t["not_estimated"] = ("output_router_logits: the router's auxiliary "
                              "loss is not modelled")
        return
    if model_type == "mixtral":
        try:
            jitter = _probability(config, "router_jitter_noise", 0.0)
        except ValueError as e:
            t["not_estimated"] = str(e)
            return
        if jitter:
            t["not_estimated"] = ("router_jitter_noise: the router's noise "
                                  "is not modelled")
            return
    t.update(experts_per_token=top_k, norm_topk_prob=norm)


def _gpt2(config, description, heads):
    t = _sizes(description, heads)
    act = config.get("activation_function") or "gelu_new"
    t.update(tied_embeddings=config.get("tie_word_embeddings", True),
             fused_qkv=True, norm="layer_norm", gated_mlp=False,
             activation="gelu_new" if act == "gelu_new" else "single_op",
             rotary=False, qk_norm=False, fp32_softmax=False,
             scale_by_tensor=config.get("scale_attn_weights", True),
             embed_scale=False,
             not_estimated="")
    try:
        for trait, key in (("attention_dropout", "attn_pdrop"),
                           ("hidden_dropout", "resid_pdrop"),
                           ("embedding_dropout", "embd_pdrop")):
            t[trait] = _probability(config, key, 0.1)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    if config.get("reorder_and_upcast_attn", False):
        t["not_estimated"] = "reorder_and_upcast_attn is not modelled"
    elif act not in ("gelu_new", "gelu", "gelu_pytorch_tanh"):
        t["not_estimated"] = (f'activation_function "{act}" is not modelled '
                              '(gelu_new, gelu, gelu_pytorch_tanh are)')
    return t


def traits(config, description, heads):
    """The shape dict of a described decoder-only config with `heads`
    query heads."""
    model_type = description.model_type
    if model_type == "gpt2":
        t = _gpt2(config, description, heads)
    elif model_type in _LLAMA_LIKE:
        t = _llama_like(config, model_type, description, heads)
    else:
        reason = _NOT_MODELLED
        if model_type in _NOT_MODELLED_MOE:
            reason = _NOT_MODELLED_MOE[model_type]
        if model_type in ("gemma2", "gemma3_text"):
            generation = 2 if model_type == "gemma2" else 3
            reason = (f"Gemma-{generation}'s layer (soft-capped scores, four "
                      "norms) is not modelled")
        t = {"not_estimated": reason}
    if t["not_estimated"]:
        t["not_estimated"] = (f'{description.architecture} (model_type '
                              f'"{model_type}"): {t["not_estimated"]}')
    return t


class _Recording(dict):
    """A config that remembers the keys looked up with get()."""

    def __init__(self, config):
        super().__init__(config)
        self.looked_up = set()

    def get(self, key, default=None):
        self.looked_up.add(key)
        return super().get(key, default)


def keys_read(config, description):
    """The config's keys that describing it reads, sorted: the families
    oracle's (description.keys_read) and those traits looks up (none for a
    family whose layer it does not model). tie_word_embeddings is the
    families oracle's to judge: traits looks it up even for a class without
    a head, where it ties nothing."""
    recording = _Recording(config)
    traits(recording, description, 1)
    looked_up = recording.looked_up - {"tie_word_embeddings"}
    return sorted(set(description.keys_read) |
                  {k for k in looked_up if k in config})
