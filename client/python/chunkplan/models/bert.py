"""BERT (transformers' BertModel and BertForMaskedLM)."""

from chunkplan.models.family import Family
from chunkplan.models.hf_config import divisible
from chunkplan.models.layers import embedding, layer_norm, linear

# BertConfig's defaults (BERT base).
_DEFAULTS = {
    "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12,
    "num_attention_heads": 12, "intermediate_size": 3072,
    "max_position_embeddings": 512, "type_vocab_size": 2,
    "position_embedding_type": "absolute", "tie_word_embeddings": True,
}


def _numels(cfg, architecture):
    if cfg.text("position_embedding_type") != "absolute":
        raise ValueError("config position_embedding_type: only \"absolute\" "
                         "is supported")
    h = cfg.size("hidden_size")
    divisible(h, cfg.size("num_attention_heads"),
              "hidden_size / num_attention_heads")
    inter = cfg.size("intermediate_size")
    vocab = cfg.size("vocab_size")
    # embeddings: word, position, token type, LayerNorm.
    numels = (embedding(vocab, h)
              + embedding(cfg.size("max_position_embeddings"), h)
              + embedding(cfg.size("type_vocab_size"), h) + layer_norm(h))
    for _ in range(cfg.size("num_hidden_layers")):
        numels += linear(h, h) * 3       # attention.self: query, key, value
        numels += linear(h, h)           # attention.output.dense
        numels += layer_norm(h)          # attention.output.LayerNorm
        numels += linear(h, inter)       # intermediate.dense
        numels += linear(inter, h)       # output.dense
        numels += layer_norm(h)          # output.LayerNorm
    if architecture == "BertModel":
        numels += linear(h, h)           # pooler.dense
    else:  # BertForMaskedLM: no pooler; cls.predictions
        # BertLMPredictionHead's own parameter, `bias`, comes before its
        # children's; decoder.bias is that same tensor, counted once.
        numels += [vocab]                # cls.predictions.bias
        numels += linear(h, h)           # transform.dense
        numels += layer_norm(h)          # transform.LayerNorm
        if not cfg.flag("tie_word_embeddings"):
            numels += [vocab * h]        # decoder.weight
    return numels


FAMILY = Family("bert", ("BertForMaskedLM", "BertModel"), _DEFAULTS,
                "hidden_size", _numels)
