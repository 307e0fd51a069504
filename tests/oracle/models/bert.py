"""BERT (transformers' BertModel and BertForMaskedLM)."""

from .family import Family
from .hf_config import divisible
from .layers import embedding, layer_norm, linear, repeated, scoped
from .random_config import common_head

# BertConfig's defaults (BERT base), and PretrainedConfig's for
# add_cross_attention.
_DEFAULTS = {
    "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
    "num_attention_heads": 12, "intermediate_size": 3072,
    "max_position_embeddings": 512, "type_vocab_size": 2,
    "position_embedding_type": "absolute", "tie_word_embeddings": True,
    "add_cross_attention": False,
}


def _layer(h, inter):
    """BertLayer: attention (self: query, key, value; output: dense,
    LayerNorm), intermediate.dense, output (dense, LayerNorm)."""
    return (linear("attention.self.query", h, h)
            + linear("attention.self.key", h, h)
            + linear("attention.self.value", h, h)
            + linear("attention.output.dense", h, h)
            + layer_norm("attention.output.LayerNorm", h)
            + linear("intermediate.dense", h, inter)
            + linear("output.dense", inter, h)
            + layer_norm("output.LayerNorm", h))


def _params(cfg, architecture):
    if cfg.text("position_embedding_type") != "absolute":
        raise ValueError("config position_embedding_type: only \"absolute\" "
                         "is supported")
    if cfg.flag("add_cross_attention"):
        raise ValueError("config add_cross_attention: BERT with cross "
                         "attention is not supported")
    h = cfg.size("hidden_size")
    divisible(h, cfg.size("num_attention_heads"),
              "hidden_size / num_attention_heads")
    inter = cfg.size("intermediate_size")
    vocab = cfg.size("vocab_size")
    model = (embedding("embeddings.word_embeddings", vocab, h)
             + embedding("embeddings.position_embeddings",
                         cfg.size("max_position_embeddings"), h)
             + embedding("embeddings.token_type_embeddings",
                         cfg.size("type_vocab_size"), h)
             + layer_norm("embeddings.LayerNorm", h)
             + repeated("encoder.layer", cfg.size("num_hidden_layers"),
                        lambda i: _layer(h, inter)))
    if architecture == "BertModel":
        return model + linear("pooler.dense", h, h)
    # BertForMaskedLM: bert (no pooler), cls.predictions. The prediction
    # head's own parameter, `bias`, comes before its children's; its
    # decoder.bias is that same tensor, and decoder.weight is tied to the
    # word embeddings unless tie_word_embeddings is false.
    params = (scoped("bert", model) + [("cls.predictions.bias", vocab)]
              + linear("cls.predictions.transform.dense", h, h)
              + layer_norm("cls.predictions.transform.LayerNorm", h))
    if not cfg.flag("tie_word_embeddings"):
        params += linear("cls.predictions.decoder", h, vocab, bias=False)
    return params


def random_config(rng):
    """A small BERT config."""
    heads = rng.randint(1, 4)
    config = {"model_type": "bert", "hidden_size": heads * rng.randint(1, 8),
              "num_attention_heads": heads,
              "num_hidden_layers": rng.randint(1, 3),
              "intermediate_size": rng.randint(1, 40),
              "max_position_embeddings": rng.randint(1, 64),
              "type_vocab_size": rng.randint(1, 3),
              "vocab_size": rng.randint(1, 300)}
    return common_head(rng, config, FAMILY)


FAMILY = Family("bert", ("BertForMaskedLM", "BertModel"), _DEFAULTS,
                "hidden_size", _params)
