"""OPT (transformers' OPTModel and OPTForCausalLM)."""

from chunkplan.models.family import Family
from chunkplan.models.hf_config import divisible
from chunkplan.models.layers import embedding, layer_norm, linear

# OPTConfig's defaults (OPT-125m).
_DEFAULTS = {
    "vocab_size": 50272, "hidden_size": 768, "num_hidden_layers": 12,
    "ffn_dim": 3072, "max_position_embeddings": 2048,
    "num_attention_heads": 12, "do_layer_norm_before": True,
    "_remove_final_layer_norm": False, "word_embed_proj_dim": None,
    "enable_bias": True, "layer_norm_elementwise_affine": True,
    "tie_word_embeddings": True,
}
# OPTLearnedPositionalEmbedding keeps 2 rows more than the positions.
_POSITION_OFFSET = 2


def _numels(cfg, architecture):
    h = cfg.size("hidden_size")
    divisible(h, cfg.size("num_attention_heads"),
              "hidden_size / num_attention_heads")
    ffn = cfg.size("ffn_dim")
    vocab = cfg.size("vocab_size")
    proj = cfg.optional_size("word_embed_proj_dim") or h
    bias = cfg.flag("enable_bias")
    affine = cfg.flag("layer_norm_elementwise_affine")
    # OPTDecoder defines, in this order: embed_tokens, embed_positions,
    # project_out, project_in, final_layer_norm, layers.
    numels = embedding(vocab, proj) + embedding(
        cfg.size("max_position_embeddings") + _POSITION_OFFSET, h)
    if proj != h:
        numels += linear(h, proj, bias=False)   # project_out
        numels += linear(proj, h, bias=False)   # project_in
    if cfg.flag("do_layer_norm_before") and not cfg.flag(
            "_remove_final_layer_norm"):
        numels += layer_norm(h, affine)         # final_layer_norm
    for _ in range(cfg.size("num_hidden_layers")):
        numels += linear(h, h, bias) * 4        # k, v, q, out_proj
        numels += layer_norm(h, affine)         # self_attn_layer_norm
        numels += linear(h, ffn, bias)          # fc1
        numels += linear(ffn, h, bias)          # fc2
        numels += layer_norm(h, affine)         # final_layer_norm
    if architecture == "OPTForCausalLM" and not cfg.flag(
            "tie_word_embeddings"):
        numels += linear(proj, vocab, bias=False)  # lm_head
    return numels


FAMILY = Family("opt", ("OPTForCausalLM", "OPTModel"), _DEFAULTS,
                "hidden_size", _numels)
