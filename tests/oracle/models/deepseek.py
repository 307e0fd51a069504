"""DeepSeek-V2 and DeepSeek-V3: multi-head latent attention and DeepSeekMoE.
"deepseek_v3" as transformers 4.51.3 defines DeepseekV3Model and
DeepseekV3ForCausalLM (modeling_deepseek_v3.py: the router's
e_score_correction_bias is a registered buffer, not a parameter);
"deepseek_v2" as the model's published remote code defines them
(modeling_deepseek.py of deepseek-ai/DeepSeek-V2; transformers 4.51.3 has
no DeepSeek-V2): the MoE layers also follow moe_layer_freq, and a null
n_routed_experts or n_shared_experts means none."""

from .decoder import causal_lm, gated_mlp, norms
from .family import Family
from .layers import linear, repeated, rms_norm, scoped
from .random_config import common_head, maybe

# The remote DeepseekV2Config's defaults.
_V2_DEFAULTS = {
    "vocab_size": 102400, "hidden_size": 4096, "intermediate_size": 11008,
    "moe_intermediate_size": 1407, "num_hidden_layers": 30,
    "num_attention_heads": 32, "n_shared_experts": None,
    "n_routed_experts": None, "ep_size": 1, "kv_lora_rank": 512,
    "q_lora_rank": 1536, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "qk_nope_head_dim": 128, "moe_layer_freq": 1, "first_k_dense_replace": 0,
    "attention_bias": False, "tie_word_embeddings": False,
    "num_experts_per_tok": None, "norm_topk_prob": False, "seq_aux": True,
}
# DeepseekV3Config's defaults (DeepSeek-V3's shape).
_V3_DEFAULTS = {
    "vocab_size": 129280, "hidden_size": 7168, "intermediate_size": 18432,
    "moe_intermediate_size": 2048, "num_hidden_layers": 61,
    "num_attention_heads": 128, "n_shared_experts": 1,
    "n_routed_experts": 256, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_rope_head_dim": 64, "v_head_dim": 128, "qk_nope_head_dim": 128,
    "first_k_dense_replace": 3, "attention_bias": False,
    "tie_word_embeddings": False,
}


def _attention(cfg, h):
    """self_attn: q_proj (q_lora_rank null) or q_a_proj, q_a_layernorm,
    q_b_proj; kv_a_proj_with_mqa, kv_a_layernorm, kv_b_proj, o_proj.
    attention_bias biases q_a_proj, kv_a_proj_with_mqa and o_proj."""
    heads = cfg.size("num_attention_heads")
    q_lora = cfg.optional_size("q_lora_rank")
    kv_lora = cfg.size("kv_lora_rank")
    rope = cfg.size("qk_rope_head_dim")
    nope = cfg.size("qk_nope_head_dim")
    v = cfg.size("v_head_dim")
    bias = cfg.flag("attention_bias")
    q_out = heads * (nope + rope)
    if q_lora is None:
        q = linear("q_proj", h, q_out, False)
    else:
        q = (linear("q_a_proj", h, q_lora, bias)
             + rms_norm("q_a_layernorm", q_lora)
             + linear("q_b_proj", q_lora, q_out, False))
    return scoped("self_attn", q
                  + linear("kv_a_proj_with_mqa", h, kv_lora + rope, bias)
                  + rms_norm("kv_a_layernorm", kv_lora)
                  + linear("kv_b_proj", kv_lora, heads * (nope + v), False)
                  + linear("o_proj", heads * v, h, bias))


def _model(cfg, architecture, v2):
    h = cfg.size("hidden_size")
    attn = _attention(cfg, h)
    first_dense = cfg.count("first_k_dense_replace")
    if v2:
        if cfg.size("ep_size") != 1:
            raise ValueError("config ep_size: only 1 is supported")
        routed = cfg.optional_size("n_routed_experts")
        freq = cfg.size("moe_layer_freq") if routed else 1
    else:
        routed = cfg.size("n_routed_experts")
        freq = 1

    def sparse(i):
        return bool(routed) and i >= first_dense and i % freq == 0

    def layer(i):
        if sparse(i):
            inter = cfg.size("moe_intermediate_size")
            shared = (cfg.optional_size("n_shared_experts") if v2
                      else cfg.size("n_shared_experts"))
            # DeepseekV*MoE: experts, gate (the router's weight), then
            # shared_experts.
            mlp = (repeated("experts", routed, lambda e: gated_mlp(h, inter))
                   + [("gate.weight", routed * h)])
            if shared is not None:
                mlp += scoped("shared_experts", gated_mlp(h, inter * shared))
        else:
            mlp = gated_mlp(h, cfg.size("intermediate_size"))
        return (attn + scoped("mlp", mlp)
                + norms(h, "input_layernorm", "post_attention_layernorm"))
    return causal_lm(cfg, architecture, layer)


def _v2(cfg, architecture):
    return _model(cfg, architecture, True)


def _v3(cfg, architecture):
    return _model(cfg, architecture, False)


def _random(rng, model_type):
    heads = rng.randint(1, 4)
    config = {"model_type": model_type, "hidden_size": rng.randint(1, 12),
              "num_attention_heads": heads, "num_key_value_heads": heads,
              "num_hidden_layers": rng.randint(1, 4),
              "intermediate_size": rng.randint(1, 30),
              "moe_intermediate_size": rng.randint(1, 10),
              "vocab_size": rng.randint(1, 200),
              "kv_lora_rank": rng.randint(1, 8),
              "q_lora_rank": rng.choice([None, rng.randint(1, 8)]),
              "qk_rope_head_dim": rng.randint(1, 4),
              "qk_nope_head_dim": rng.randint(1, 4),
              "v_head_dim": rng.randint(1, 4),
              "n_routed_experts": rng.randint(1, 5),
              "n_shared_experts": rng.randint(1, 2),
              "num_experts_per_tok": 1,
              "first_k_dense_replace": rng.randint(0, 3)}
    maybe(rng, config, "attention_bias", rng.random() < 0.5)
    return config


def random_v2_config(rng):
    """A small DeepSeek-V2 config: MoE every moe_layer_freq-th layer from
    first_k_dense_replace, experts or shared experts sometimes null."""
    config = _random(rng, "deepseek_v2")
    config["moe_layer_freq"] = rng.randint(1, 3)
    if rng.random() < 0.2:
        config["n_routed_experts"] = None
    if rng.random() < 0.3:
        config["n_shared_experts"] = None
    return common_head(rng, config, V2)


def random_v3_config(rng):
    """A small DeepSeek-V3 config."""
    return common_head(rng, _random(rng, "deepseek_v3"), V3)


V2 = Family("deepseek_v2", ("DeepseekV2ForCausalLM", "DeepseekV2Model"),
            _V2_DEFAULTS, "hidden_size", _v2)
V3 = Family("deepseek_v3", ("DeepseekV3ForCausalLM", "DeepseekV3Model"),
            _V3_DEFAULTS, "hidden_size", _v3)
