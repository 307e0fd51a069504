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
               "mixtral": "silu", "qwen2_moe": "silu", "qwen3_moe": "silu",
               "deepseek_v3": "silu", "deepseek_v2": "silu"}
# The MoE families (the sparse block of modeling_mixtral.py,
# modeling_qwen2_moe.py, modeling_qwen3_moe.py, 4.51.3): the config
# classes' num_experts_per_tok default, and whether the block renormalizes
# the top-k weights always (Mixtral) or where norm_topk_prob (default
# False); Mixtral's router_jitter_noise (default 0) is read too.
_MOE = {"mixtral": (2, True), "qwen2_moe": (4, False),
        "qwen3_moe": (8, False), "deepseek_v3": (8, False),
        "deepseek_v2": (None, False)}
# Llama4TextMoe's (read by _llama4 alone: no norm_topk_prob, the weights
# are sigmoid scores)
_LLAMA4_MOE = {"llama4_text": (1, True)}
# DeepseekV3Config's norm_topk_prob default (True; the others' False). Its
# config has no output_router_logits: no auxiliary loss in 4.51.3.
_NORM_TOPK_DEFAULT = {"deepseek_v3": True}
_SINGLE_OP = ("silu", "swish", "gelu", "gelu_pytorch_tanh")
_NOT_MODELLED = "the family's layer is not modelled"
# The MoE families whose layer the estimate refuses, and what it leaves out
# (none left: Llama 4 and DeepSeek-V2 are modelled).
_NOT_MODELLED_MOE = {}
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


def _flag(config, key, default):
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise ValueError(f"config {key}: expected true or false, got "
                         f"{json.dumps(value)}")
    return value


def _flag_or(config, key, default):
    """_flag, `default` where the key is absent or null."""
    return default if config.get(key) is None else _flag(config, key, default)


def _fraction(config, key, default):
    """A number in [0, 1] (None: 0), as _probability checks it."""
    _probability(config, key, default)
    return config.get(key, default) or 0


def _text(config, key, default):
    value = config.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ValueError(f"config {key}: expected a string, got "
                         f"{json.dumps(value)}")
    return value


# ACT2FN's activations by what they save (activations.py): one op keeps
# its input; gelu_new and gelu_fast are tanh arithmetic; relu keeps its
# result.
_ACTIVATIONS = {"gelu": "single_op", "gelu_pytorch_tanh": "single_op",
                "silu": "single_op", "swish": "single_op",
                "gelu_new": "gelu_new", "gelu_fast": "gelu_fast",
                "relu": "relu"}


def _look_up(config, *keys):
    """Looks up every key first, as the C++ families read them all before
    judging any (keys_read)."""
    for key in keys:
        config.get(key)


def _activation(t, key, act):
    """Sets t's activation; False (and the reason) where not modelled."""
    t["activation"] = _ACTIVATIONS.get(act, "single_op")
    if act in _ACTIVATIONS:
        return True
    t["not_estimated"] = (f'{key} "{act}" is not modelled (gelu, gelu_new, '
                          'gelu_fast, gelu_pytorch_tanh, relu, silu, swish '
                          'are)')
    return False


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


def _llama_like(config, model_type, description, heads,
                act_key="hidden_act"):
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
    act = config.get(act_key)
    act = _LLAMA_LIKE[model_type] if act is None else act
    try:
        t["attention_dropout"] = _probability(config, "attention_dropout", 0)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    if act not in _SINGLE_OP:
        t["not_estimated"] = (f'{act_key} "{act}" is not modelled (silu, '
                              'swish, gelu, gelu_pytorch_tanh are)')
    elif model_type in ("deepseek_v3", "deepseek_v2") and not _mla_traits(
            config, description, heads, t, model_type == "deepseek_v2"):
        pass
    elif model_type in _MOE and t["moe_layers"]:
        _moe_traits(config, model_type, t)
        if model_type == "deepseek_v2" and not t["not_estimated"]:
            _v2_gate(config, t)
    return t


def _v2_gate(config, t):
    """DeepSeek-V2's MoEGate options (the remote configuration_deepseek.py's
    defaults where unset: scoring_func "softmax", topk_method "gready",
    aux_loss_alpha 0.001, seq_aux true), or t["not_estimated"] set: the
    remote code raises for another scoring_func, chooses nothing for a
    topk_method other than "greedy" or "group_limited_greedy" (its
    default's spelling included), views the scores by n_group, takes
    topk_group of the groups, and fails in training without an auxiliary
    loss (AddAuxiliaryLoss.apply(y, None))."""
    try:
        scoring = _text(config, "scoring_func", "softmax")
        if scoring != "softmax":
            t["not_estimated"] = (f'scoring_func "{scoring}": MoEGate runs '
                                  'only "softmax"')
            return
        method = _text(config, "topk_method", "gready")
        if method == "group_limited_greedy":
            groups = _required_size(config, "n_group")
            topk_groups = _required_size(config, "topk_group")
            if t["num_experts"] % groups:
                t["not_estimated"] = (f"n_group {groups} does not divide "
                                      f"n_routed_experts {t['num_experts']}: "
                                      "MoEGate's view of the scores fails")
                return
            if topk_groups > groups:
                t["not_estimated"] = (f"topk_group {topk_groups} exceeds "
                                      f"n_group {groups}: torch.topk refuses "
                                      "it")
                return
            t["router_groups"] = groups
        elif method != "greedy":
            t["not_estimated"] = (f'topk_method "{method}" is neither '
                                  '"greedy" nor "group_limited_greedy": '
                                  'MoEGate chooses no experts')
            return
        if not _number(config, "aux_loss_alpha", 0.001) > 0:
            t["not_estimated"] = ("aux_loss_alpha not above 0: the remote "
                                  "code's training forward calls "
                                  "AddAuxiliaryLoss.apply(y, None), which "
                                  "fails")
            return
        seq_aux = config.get("seq_aux", True)
        if not isinstance(seq_aux, bool):
            t["not_estimated"] = ("config seq_aux: expected true or false, "
                                  f"got {_shown(seq_aux)}")
            return
        t["seq_aux"] = seq_aux
    except ValueError as e:
        t["not_estimated"] = str(e)


def _required_size(config, key):
    """A positive integer below 2^64 the config must hold."""
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 0 < value < 2**64:
        raise ValueError(f"config {key}: expected a positive integer below "
                         f"2^64, got {_shown(value)}")
    return value


def _mla_traits(config, description, heads, t, v2=False):
    """DeepSeek-V3's latent attention (modeling_deepseek_v3.py, 4.51.3)
    off the parameter list: kv_lora_rank (kv_a_layernorm's width),
    qk_rope_head_dim (kv_a_proj_with_mqa's rows past it), q_lora_rank
    (q_a_layernorm's width; 0: a plain q_proj), v_head_dim (o_proj's
    columns a head), head_dim (kv_b_proj's rows a head less v, plus the
    rope part); the shared experts' width; DeepseekV3MoE on the sparse
    layers. False (and the reason) where num_key_value_heads is set and
    not the heads. `v2`: DeepSeek-V2's remote code, whose attention never
    reads num_key_value_heads; its layer's own traits (deepseek_v2, the
    fp32 logits, no sdpa class) instead of DeepseekV3MoE."""
    d, h = description, description.hidden_size
    # (the config's heads: keys_read calls traits with heads 1)
    heads = config.get("num_attention_heads", 32 if v2 else 128)
    kv = None if v2 else config.get("num_key_value_heads")
    if kv is not None and (isinstance(kv, bool) or not isinstance(kv, int)
                           or not 0 < kv < 2**64):
        t["not_estimated"] = ("config num_key_value_heads: expected a "
                              "positive integer below 2^64, got " +
                              _shown(kv))
        return False
    if kv is not None and kv != heads:
        t["not_estimated"] = (f"num_key_value_heads {kv} is not "
                              f"num_attention_heads {heads}: the latent "
                              "attention's k and v have one head per query "
                              "head")
        return False
    kv_lora = _numel(d, "kv_a_layernorm.weight")
    rope = _numel(d, "kv_a_proj_with_mqa.weight") // h - kv_lora
    v = _numel(d, "o_proj.weight") // h // heads
    head_dim = _numel(d, "kv_b_proj.weight") // kv_lora // heads - v + rope
    t.update(q_lora_rank=_numel(d, "q_a_layernorm.weight"),
             kv_lora_rank=kv_lora, qk_rope_head_dim=rope, rotary_dim=rope,
             v_head_dim=v, head_dim=head_dim, num_key_value_heads=heads,
             deepseek_moe=t["moe_layers"] > 0 and not v2,
             shared_expert_intermediate_size=_numel(
                 d, ".shared_experts.gate_proj.weight") // h)
    if v2:
        t.update(deepseek_v2=True, fp32_logits=True, no_sdpa=True)
    return True


def _number(config, key, default):
    """A number the config holds (default where absent or null)."""
    value = config.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"config {key}: expected a number, got "
                         f"{json.dumps(value)}")
    return value


def _phi3(config, description, heads):
    """Phi3ForCausalLM (modeling_phi3.py): LLaMA's layer with one
    qkv_proj (q, k and v its slices), RoPE over int(head_dim *
    partial_rotary_factor) dimensions, resid_pdrop's two dropouts; the
    sizes from qkv_proj, o_proj and gate_up_proj."""
    d = description
    h = d.hidden_size
    t = _llama_like(config, "llama", d, heads)
    q_width = _numel(d, "o_proj.weight") // h
    head_dim = q_width // heads
    t.update(head_dim=head_dim,
             num_key_value_heads=(_numel(d, "qkv_proj.weight") // h -
                                  q_width) // 2 // head_dim,
             intermediate_size=_numel(d, "gate_up_proj.weight") // h // 2,
             fused_qkv=True, fused_gate_up=True)
    if t["not_estimated"]:
        return t
    try:
        t["hidden_dropout"] = _probability(config, "resid_pdrop", 0)
        factor = _number(config, "partial_rotary_factor", 1.0)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    # Phi3RotaryEmbedding: dim = int(head_dim * partial_rotary_factor),
    # inv_freq over arange(0, dim, 2): cos and sin 2 ceil(dim / 2) wide.
    dim = int(head_dim * factor)
    t["rotary_dim"] = 2 * ((dim + 1) // 2)
    if not 0 < t["rotary_dim"] <= head_dim:
        t["not_estimated"] = ("partial_rotary_factor: the rotary width "
                              "must be from 1 to head_dim "
                              f"({head_dim})")
    return t


def _cohere(config, description, heads):
    """CohereForCausalLM (modeling_cohere.py): one CohereLayerNorm per
    layer whose output attention and MLP both read; q_norm and k_norm
    CohereLayerNorms where use_qk_norm (their weights in the parameter
    list); lm_head tied by default; logits times logit_scale (nothing
    saved)."""
    t = _llama_like(config, "llama", description, heads)
    t.update(norm="cohere_layer_norm", parallel_block=True,
             tied_embeddings=bool(config.get("tie_word_embeddings", True)),
             qk_norm=any(n.endswith("q_norm.weight")
                         for n in description.names))
    return t


def _gemma2(config, description, heads):
    """Gemma2ForCausalLM (modeling_gemma2.py): Gemma's layer (the MLP's act
    from hidden_activation) with GemmaRMSNorm four times a layer, the
    scores and the logits soft-capped where attn_logit_softcapping and
    final_logit_softcapping are not null (Gemma2Config: 50.0 and 30.0)."""
    t = _llama_like(config, "gemma", description, heads,
                    act_key="hidden_activation")
    t["four_norms"] = True
    if t["not_estimated"]:
        return t
    for trait, key, default in (
            ("attn_softcap", "attn_logit_softcapping", 50.0),
            ("final_softcap", "final_logit_softcapping", 30.0)):
        value = config.get(key, default)
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, float))):
            t["not_estimated"] = (f"config {key}: expected a number or "
                                  f"null, got {json.dumps(value)}")
            return t
        t[trait] = value is not None
    return t
def _gemma3(config, description, heads):
    """Gemma3ForCausalLM (modeling_gemma3.py, 4.51.3): Gemma-2's layer
    with q_norm and k_norm (GemmaRMSNorm over head_dim), two rotary tables
    (the global one, and rope_local_base_freq's for the sliding layers:
    layer i slides where (i + 1) % sliding_window_pattern, default 6, is
    not 0), both passed to every layer; the logits soft-capped where
    final_logit_softcapping is not null (Gemma3TextConfig: None).
    Gemma3Attention passes no softcap to the attention function:
    attn_logit_softcapping changes nothing."""
    t = _llama_like(config, "gemma", description, heads,
                    act_key="hidden_activation")
    # (Gemma3TextScaledWordEmbedding's embed_scale is a buffer: its mul
    # keeps model state, no activation)
    t.update(four_norms=True, qk_norm=True, local_rotary=True,
             embed_scale=False)
    if t["not_estimated"]:
        return t
    _look_up(config, "sliding_window_pattern", "final_logit_softcapping")
    step = config.get("sliding_window_pattern")
    if step is not None and (isinstance(step, bool) or
                             not isinstance(step, int) or
                             not 1 <= step < 2**64):
        t["not_estimated"] = ("config sliding_window_pattern: expected a "
                              "positive integer below 2^64, got "
                              f"{json.dumps(step)}")
        return t
    cap = config.get("final_logit_softcapping")
    if cap is not None and (isinstance(cap, bool) or
                            not isinstance(cap, (int, float))):
        t["not_estimated"] = ("config final_logit_softcapping: expected a "
                              f"number or null, got {json.dumps(cap)}")
        return t
    # (sliding_window changes the sliding layers' mask values only)
    _look_up(config, "sliding_window")
    step = 6 if step is None else step
    t["both_rotary_used"] = step > 1 and t["num_layers"] >= step
    t["final_softcap"] = cap is not None
    return t


def _llama4(config, description, heads):
    """Llama4ForCausalLM (modeling_llama4.py, 4.51-era; llama4_oracle.py):
    LLaMA's layer with Llama 4's kinds off the parameter list (a layer
    with feed_forward.router is Llama4TextMoe: the experts the router's
    rows, an expert's width off experts.down_proj; the dense MLP's width
    off feed_forward.gate_proj) and the config as Llama4TextConfig reads
    it: NoPE layers every no_rope_layer_interval-th (default 4; a listed
    no_rope_layers refused), use_qk_norm (default true),
    attn_temperature_tuning (a flag or a number, non-zero on; default 4),
    num_experts_per_tok (default 1) and output_router_logits (default
    false, true refused) where a layer is sparse."""
    d, h = description, description.hidden_size
    t = _llama_like(config, "llama", d, heads)
    if t["not_estimated"]:
        return t
    sparse = {int(m.group(2)) for name in d.names
              if name.endswith(".feed_forward.router.weight")
              for m in [_LAYER.match(name)] if m}
    experts = _numel(d, ".feed_forward.router.weight") // h
    expert = (_numel(d, ".experts.down_proj") // (experts * h)
              if experts else 0)
    dense = _numel(d, ".feed_forward.gate_proj.weight") // h
    t["intermediate_size"] = dense or expert
    listed = config.get("no_rope_layers")
    bad = ([listed] if not isinstance(listed, list) else
           [i for i in listed if isinstance(i, bool) or
            not isinstance(i, int)]) if listed is not None else []
    if bad:
        t["not_estimated"] = ("config no_rope_layers: expected a list of "
                              f"integers, got {_shown(bad[0])}")
        return t
    if any(i >= 0 for i in listed or []):
        t["not_estimated"] = ("no_rope_layers listed: only "
                              "no_rope_layer_interval's NoPE layers are "
                              "modelled")
        return t
    try:
        interval = config.get("no_rope_layer_interval")
        interval = 4 if interval is None else _positive(
            config, "no_rope_layer_interval", 4)
        qk = _flag_or(config, "use_qk_norm", True)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    tuning = config.get("attn_temperature_tuning", 4)
    if tuning is None:
        tuning = 4
    if not isinstance(tuning, (bool, int, float)):
        t["not_estimated"] = ("config attn_temperature_tuning: expected a "
                              f"number, got {_shown(tuning)}")
        return t
    L = t["num_layers"]
    nope = {i for i in range(L) if (i + 1) % interval == 0}
    t.update(llama4=True, l2_qk_norm=qk, temperature_tuning=bool(tuning),
             nope_layers=len(nope), moe_layers=len(sparse),
             nope_moe_layers=len(nope & sparse))
    if sparse:
        t["num_experts"], t["moe_intermediate_size"] = experts, expert
        _moe_traits(config, "llama4_text", t)
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


def _positive(config, key, default):
    """A positive integer below 2^64 the config holds (default where
    absent); ValueError naming the key otherwise."""
    value = config.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or \
            not 0 < value < 2**64:
        raise ValueError(f"config {key}: expected a positive integer below "
                         f"2^64, got {_shown(value)}")
    return value


def _shown(value):
    """A config value as chunkplan's messages show it (JSON)."""
    return json.dumps(value, separators=(",", ":"))


def _moe_traits(config, model_type, t):
    """The sparse block's traits read from the config (after the layer's),
    or t["not_estimated"] set to the reason: num_experts_per_tok a positive
    integer no larger than the experts (torch.topk), norm_topk_prob and
    output_router_logits true or false, the aux loss (output_router_logits)
    and Mixtral's router jitter not modelled."""
    top_k_default, always_norm = {**_MOE, **_LLAMA4_MOE}[model_type]
    try:
        top_k = _positive(config, "num_experts_per_tok", top_k_default)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return
    if top_k > t["num_experts"]:
        t["not_estimated"] = (f"num_experts_per_tok {top_k} exceeds the "
                              f"experts ({t['num_experts']}): torch.topk "
                              "refuses it")
        return
    norm = always_norm
    keys = ([] if always_norm else ["norm_topk_prob"]) + \
        ([] if model_type in ("deepseek_v3", "deepseek_v2")
         else ["output_router_logits"])
    flags = {}
    for key in keys:
        value = config.get(key, _NORM_TOPK_DEFAULT.get(model_type, False)
                           if key == "norm_topk_prob" else False)
        if not isinstance(value, bool):
            t["not_estimated"] = (f"config {key}: expected true or false, "
                                  f"got {_shown(value)}")
            return
        flags[key] = value
    norm = norm or flags.get("norm_topk_prob", False)
    if flags.get("output_router_logits"):
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
             embed_scale=False, attention_output_held=True,
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


def _gpt_neox(config, description, heads):
    """modeling_gpt_neox.py: LayerNorm, the fused query_key_value (V a
    strided view of it), RoPE over int(head_size * rotary_pct) dimensions
    (inv_freq = arange(0, dim, 2): cos and sin of the even width), an fp32
    softmax, dense_h_to_4h / act / dense_4h_to_h, use_parallel_residual,
    attention_dropout and hidden_dropout (emb_dropout, post_attention_dropout,
    post_mlp_dropout)."""
    d = description
    h = d.hidden_size
    head = h // heads
    t = {"num_layers": len({m.group(2) for m in map(_LAYER.match, d.names)
                            if m}),
         "hidden_size": h, "num_attention_heads": heads,
         "num_key_value_heads": heads, "head_dim": head,
         "intermediate_size": _numel(d, "dense_h_to_4h.weight") // h,
         "vocab_size": _numel(d, "embed_in.weight") // h,
         "tied_embeddings": "embed_out.weight" not in d.names,
         "fused_qkv": True, "norm": "layer_norm", "gated_mlp": False,
         "rotary": True, "qk_norm": False, "fp32_softmax": True,
         "scale_by_tensor": False, "embed_scale": False,
         "value_view": True, "not_estimated": ""}
    _look_up(config, "hidden_act", "rotary_pct", "use_parallel_residual",
             "attention_dropout", "hidden_dropout")
    try:
        act = _text(config, "hidden_act", "gelu")
        pct = _fraction(config, "rotary_pct", 0.25)
        t["parallel_residual"] = _flag(config, "use_parallel_residual", True)
        t["attention_dropout"] = _probability(config, "attention_dropout", 0)
        t["hidden_dropout"] = _probability(config, "hidden_dropout", 0)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    t["embedding_dropout"] = t["hidden_dropout"]
    rotary = int(head * pct)
    t["rotary_dim"] = rotary + rotary % 2
    if not _activation(t, "hidden_act", act):
        pass
    elif not 0 < t["rotary_dim"] <= head:
        t["not_estimated"] = (f"rotary_pct gives a rotary width of "
                              f"{t['rotary_dim']} for head size {head}: not "
                              "modelled")
    return t


def _opt(config, description, heads):
    """modeling_opt.py: LayerNorm before (or after: the same bytes) the
    attention and the MLP, q/k/v/out_proj, an fp32 softmax, fc1 /
    activation_function / fc2, dropout (not after the embeddings) and
    attention_dropout, positions from the mask's cumsum (embed_positions
    keeps position_ids + 2), final_layer_norm only with do_layer_norm_before
    and not _remove_final_layer_norm, project_in / project_out where
    word_embed_proj_dim differs from hidden_size."""
    d = description
    h = d.hidden_size
    proj = config.get("word_embed_proj_dim") or h
    before = config.get("do_layer_norm_before", True)
    t = {"num_layers": len({m.group(2) for m in map(_LAYER.match, d.names)
                            if m}),
         "hidden_size": h, "num_attention_heads": heads,
         "num_key_value_heads": heads, "head_dim": h // heads,
         "intermediate_size": _numel(d, "fc1.weight") // h,
         "vocab_size": _numel(d, "embed_tokens.weight") // proj,
         "tied_embeddings": "lm_head.weight" not in d.names,
         "fused_qkv": False, "norm": "layer_norm", "gated_mlp": False,
         "rotary": False, "qk_norm": False, "fp32_softmax": True,
         "scale_by_tensor": False, "embed_scale": False,
         "mask_positions": True, "embedding_dropout": False,
         "no_final_norm": not (before and not config.get(
             "_remove_final_layer_norm", False)),
         "embed_proj_dim": 0 if proj == h else proj, "not_estimated": "",
         "post_norm": not before}
    _look_up(config, "activation_function", "attention_dropout", "dropout")
    try:
        act = _text(config, "activation_function", "relu")
        t["attention_dropout"] = _probability(config, "attention_dropout", 0)
        t["hidden_dropout"] = _probability(config, "dropout", 0.1)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    _activation(t, "activation_function", act)
    return t


def _gptj(config, description, heads):
    """modeling_gptj.py: ln_1 read by both the attention and the MLP, RoPE
    over rotary_dim from fp32 sin/cos gathered in each layer (q and k fp32,
    upcast for the scores), activation_function, embd_pdrop / attn_pdrop /
    resid_pdrop, the logits cast to fp32; _supports_sdpa unset (eager by
    default)."""
    d = description
    h = d.hidden_size
    head = h // heads
    t = {"num_layers": len({m.group(2) for m in map(_LAYER.match, d.names)
                            if m}),
         "hidden_size": h, "num_attention_heads": heads,
         "num_key_value_heads": heads, "head_dim": head,
         "intermediate_size": _numel(d, "fc_in.weight") // h,
         "vocab_size": _numel(d, "wte.weight") // h,
         "tied_embeddings": "lm_head.weight" not in d.names,
         "fused_qkv": False, "norm": "layer_norm", "gated_mlp": False,
         "rotary": True, "qk_norm": False, "fp32_softmax": True,
         "scale_by_tensor": False, "embed_scale": False,
         "single_norm": True, "gptj_rotary": True, "fp32_logits": True,
         "head_bias": "lm_head.bias" in d.names,
         "no_sdpa": True, "not_estimated": ""}
    _look_up(config, "activation_function", "rotary_dim", "embd_pdrop",
             "attn_pdrop", "resid_pdrop")
    try:
        act = _text(config, "activation_function", "gelu_new")
        rotary = config.get("rotary_dim", 64)
        if rotary is not None and (isinstance(rotary, bool) or
                                   not isinstance(rotary, int) or
                                   rotary < 1 or rotary >= 2**64):
            raise ValueError(f"config rotary_dim: expected a positive "
                             f"integer below 2^64, got {json.dumps(rotary)}")
        t["embedding_dropout"] = _probability(config, "embd_pdrop", 0)
        t["attention_dropout"] = _probability(config, "attn_pdrop", 0)
        t["hidden_dropout"] = _probability(config, "resid_pdrop", 0)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    if not _activation(t, "activation_function", act):
        return t
    if rotary is None:
        t["not_estimated"] = "rotary_dim null (RoPE over n_embd) is not modelled"
    elif rotary % 2 or rotary > head:
        t["not_estimated"] = (f"rotary_dim {rotary} (odd, or past the head "
                              f"size {head}) is not modelled")
    else:
        t["rotary_dim"] = rotary
    return t


def _layer_norm_base(description, heads, embed, first_mlp):
    """The shape facts off the parameter list of a fused-q/k/v LayerNorm
    family (Falcon, BLOOM)."""
    d = description
    h = d.hidden_size
    return {"num_layers": len({m.group(2) for m in map(_LAYER.match, d.names)
                               if m}),
            "hidden_size": h, "num_attention_heads": heads,
            "head_dim": h // heads,
            "intermediate_size": _numel(d, first_mlp) // h,
            "vocab_size": _numel(d, embed) // h,
            "tied_embeddings": "lm_head.weight" not in d.names,
            "fused_qkv": True, "norm": "layer_norm", "gated_mlp": False,
            "qk_norm": False, "scale_by_tensor": False, "embed_scale": False,
            "not_estimated": ""}


def _size(config, key):
    """An optional positive size (None where unset)."""
    value = config.get(key)
    if value is not None and (isinstance(value, bool) or
                              not isinstance(value, int) or
                              not 0 < value < 2**64):
        raise ValueError(f"config {key}: expected a positive integer below "
                         f"2^64, got {json.dumps(value)}")
    return value


def _falcon(config, description, heads):
    """modeling_falcon.py (alibi false): LayerNorm, the fused
    query_key_value (new_decoder_architecture: K and V picked by a list
    index and broadcast to every query head; multi_query: one K/V head
    picked by a list index; else strided views of three projections), RoPE
    over the head, softmax in the hidden states' dtype and no dropout on
    it, FalconMLP's `activation`, the MLP on the attention's norm
    (parallel_attn, one norm), on ln_mlp (two norms) or on
    post_attention_layernorm (sequential), dropout_add after the attention
    (sequential, attention_dropout) and after the MLP (hidden_dropout);
    F.scaled_dot_product_attention called directly. alibi true, the layouts
    FalconDecoderLayer.forward fails on and unmodelled activations are
    refused by name."""
    d = description
    h = d.hidden_size
    t = _layer_norm_base(d, heads, "word_embeddings.weight",
                         "dense_h_to_4h.weight")
    head = h // heads
    qkv = _numel(d, "query_key_value.weight") // h
    t.update(num_key_value_heads=(qkv - h) // (2 * head), rotary=True,
             fp32_softmax=False, direct_sdpa=True, embedding_dropout=False,
             attention_dropout=False,
             # FalconDecoderLayer.forward keeps attention_output bound to
             # its end (a re-run layer's last step)
             attention_output_held=True)
    new_arch = config.get("new_decoder_architecture", False)
    parallel = config.get("parallel_attn", True)
    num_ln = config.get("num_ln_in_parallel_attn")
    two_norms = (num_ln if num_ln is not None else
                 2 if new_arch else 1) == 2
    _look_up(config, "alibi", "activation", "hidden_dropout",
             "attention_dropout", "num_kv_heads")
    try:
        alibi = _flag(config, "alibi", False)
        act = _text(config, "activation", "gelu")
        hidden = _probability(config, "hidden_dropout", 0.0)
        attn = _probability(config, "attention_dropout", 0.0)
        kv = _size(config, "num_kv_heads")
        multi_query = (False if new_arch else
                       _flag(config, "multi_query", True))
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    t["kv_broadcast"] = new_arch
    t["indexed_kv"] = new_arch or multi_query
    t["value_view"] = not t["indexed_kv"]
    t["single_norm"] = parallel and not two_norms
    t["parallel_residual"] = parallel and two_norms
    masks = (1 if not parallel and attn else 0) + (1 if hidden else 0)
    t["hidden_dropout"] = masks > 0
    t["one_residual_mask"] = masks == 1
    if not _activation(t, "activation", act):
        return t
    if alibi:
        t["not_estimated"] = ("alibi true (ALiBi attention, Falcon-RW's) is "
                              "not modelled")
    elif new_arch and not parallel:
        t["not_estimated"] = ("new_decoder_architecture true with "
                              "parallel_attn false: FalconDecoderLayer."
                              "forward fails in transformers 4.51.3")
    elif not new_arch and parallel and two_norms:
        t["not_estimated"] = ("num_ln_in_parallel_attn 2 without "
                              "new_decoder_architecture: FalconDecoderLayer."
                              "forward calls input_layernorm, which it does "
                              "not build")
    elif t["value_view"] and kv is not None and kv != heads:
        t["not_estimated"] = (f"num_kv_heads {kv} with multi_query false "
                              "and the old architecture: FalconAttention's "
                              f"reshape fails ({heads} heads)")
    return t


def _bloom(config, description, heads):
    """modeling_bloom.py: word_embeddings_layernorm, LayerNorm, the fused
    query_key_value whose q, k, v are reshaped strided views (baddbmm onto
    the ALiBi bias, bmm), an fp32 softmax, GeLUFunction (bloom_gelu),
    attention_dropout and hidden_dropout; eager only (no sdpa, no
    flash_attention_2 path in 4.51.3). pretraining_tp > 1 with
    slow_but_exact is refused."""
    t = _layer_norm_base(description, heads, "word_embeddings.weight",
                         "dense_h_to_4h.weight")
    t.update(num_key_value_heads=heads, rotary=False, alibi=True,
             embedding_norm=True, activation="bloom_gelu", fp32_softmax=True,
             no_sdpa=True, no_flash=True, embedding_dropout=False)
    _look_up(config, "attention_dropout", "hidden_dropout", "pretraining_tp",
             "slow_but_exact")
    try:
        t["attention_dropout"] = _probability(config, "attention_dropout",
                                              0.0)
        t["hidden_dropout"] = _probability(config, "hidden_dropout", 0.0)
        tp = _size(config, "pretraining_tp")
        exact = _flag(config, "slow_but_exact", False)
    except ValueError as e:
        t["not_estimated"] = str(e)
        return t
    if exact and (tp or 1) > 1:
        t["not_estimated"] = ("slow_but_exact true with pretraining_tp > 1 "
                              "(the sliced F.linear loops) is not modelled")
    return t


def traits(config, description, heads):
    """The shape dict of a described decoder-only config with `heads`
    query heads."""
    model_type = description.model_type
    if model_type == "gpt2":
        t = _gpt2(config, description, heads)
    elif model_type == "gpt_neox":
        t = _gpt_neox(config, description, heads)
    elif model_type == "opt":
        t = _opt(config, description, heads)
    elif model_type == "gptj":
        t = _gptj(config, description, heads)
    elif model_type == "falcon":
        t = _falcon(config, description, heads)
    elif model_type == "bloom":
        t = _bloom(config, description, heads)
    elif model_type in _LLAMA_LIKE:
        t = _llama_like(config, model_type, description, heads)
    elif model_type == "phi3":
        t = _phi3(config, description, heads)
    elif model_type == "cohere":
        t = _cohere(config, description, heads)
    elif model_type == "gemma2":
        t = _gemma2(config, description, heads)
    elif model_type == "gemma3_text":
        t = _gemma3(config, description, heads)
    elif model_type == "llama4_text":
        t = _llama4(config, description, heads)
    else:
        reason = _NOT_MODELLED
        if model_type in _NOT_MODELLED_MOE:
            reason = _NOT_MODELLED_MOE[model_type]
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
