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
               "qwen3": "silu", "gemma": "gelu_pytorch_tanh"}
_SINGLE_OP = ("silu", "swish", "gelu", "gelu_pytorch_tanh")
_NOT_MODELLED = "the family's layer is not modelled"
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


def _llama_like(config, model_type, description, heads,
                act_key="hidden_act"):
    t = _sizes(description, heads)
    t.update(tied_embeddings=bool(config.get(
                 "tie_word_embeddings", model_type == "gemma")),
             norm="gemma_rms" if model_type == "gemma" else "rms",
             gated_mlp=True, activation="single_op", rotary=True,
             qk_norm=model_type == "qwen3", fp32_softmax=True,
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
    return t


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
    elif model_type == "phi3":
        t = _phi3(config, description, heads)
    elif model_type == "cohere":
        t = _cohere(config, description, heads)
    elif model_type == "gemma2":
        t = _gemma2(config, description, heads)
    else:
        reason = _NOT_MODELLED
        if model_type == "gemma3_text":
            reason = ("Gemma-3's layer (q/k norms, local and global rotary "
                      "tables) is not modelled")
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
