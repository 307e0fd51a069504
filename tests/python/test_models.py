"""chunkplan.models: parameter lists from Hugging Face config.json files.

Totals are checked against published parameter counts; where no count is
published for the exact class, the figure is derived by hand in the comment
from the layer shapes (and says so). Order is checked against
examples/gpt2_colossalai.json (ColossalAI's GPT-2 test model, listed
independently) and against the module definitions' order, layer by layer.
"""

import json

import pytest

from chunkplan import models
from oracle_cases import HF_CONFIGS, gpt2_example_numels

# Published parameter counts (model.num_parameters() of the class named).
PUBLISHED = {
    # GPT2LMHeadModel (lm_head tied to wte).
    "gpt2-xl.json": 1_557_611_200,
    # LlamaForCausalLM.
    "llama-2-7b.json": 6_738_415_616,
    # Also by hand: embed_tokens and lm_head 2*32000*5120 = 327,680,000;
    # norm 5120; 40 layers of q, k, v, o 4*5120^2 = 104,857,600, gate, up,
    # down 3*5120*13824 = 212,336,640 and two norms 10,240.
    "llama-2-13b.json": 13_015_864_320,
    "llama-2-70b.json": 68_976_648_192,
    # MistralForCausalLM.
    "mistral-7b-v0.1.json": 7_241_732_096,
    # MixtralForCausalLM.
    "mixtral-8x7b-v0.1.json": 46_702_792_704,
}

# bert-large-uncased as BertModel (with its pooler): published 335,141,888.
BERT_LARGE_BERT_MODEL = 335_141_888

# bert-large-uncased as BertForMaskedLM, derived (no exact figure published):
# BertModel without the pooler (335,141,888 - 1024*1024 - 1024) plus
# cls.predictions: bias 30522, transform.dense 1024*1024 + 1024,
# transform.LayerNorm 2*1024; the decoder's weight is tied to the word
# embeddings and its bias is the predictions' bias.
BERT_LARGE_MASKED_LM = 335_141_888 - 1_049_600 + 30_522 + 1_049_600 + 2_048

# OPT-30B (OPTForCausalLM, lm_head tied), derived (the published figure is
# the round "30B"): embed_tokens 50272*7168 = 360,349,696; embed_positions
# (2048 + 2)*7168 = 14,694,400; final_layer_norm 2*7168 = 14,336; each of 48
# layers: q, k, v, out 4*(7168^2 + 7168) = 205,549,568, two LayerNorms
# 2*2*7168 = 28,672, fc1 7168*28672 + 28672 = 205,549,568, fc2
# 28672*7168 + 7168 = 205,528,064, together 616,655,872.
OPT_30B = 360_349_696 + 14_694_400 + 14_336 + 48 * 616_655_872


def config(name):
    return HF_CONFIGS / name


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_published_totals(name):
    assert sum(models.from_hf_config(config(name))) == PUBLISHED[name]


def test_derived_opt_30b_total():
    assert OPT_30B == 29_974_540_288
    assert sum(models.from_hf_config(config("opt-30b.json"))) == OPT_30B


def test_bert_large_both_classes():
    path = config("bert-large-uncased.json")
    assert sum(models.from_hf_config(path, "BertModel")) == \
        BERT_LARGE_BERT_MODEL
    # The config names BertForMaskedLM: that is the default.
    assert models.describe(path).architecture == "BertForMaskedLM"
    assert sum(models.from_hf_config(path)) == BERT_LARGE_MASKED_LM


def test_colossalai_gpt2_test_model_in_order():
    """The whole list, in order, equals the example's independent listing."""
    assert models.from_hf_config(config("colossalai-gpt2-test.json")) == \
        gpt2_example_numels()


def test_llama_order():
    h, inter, vocab = 4096, 11008, 32000
    numels = models.from_hf_config(config("llama-2-7b.json"))
    layer = [h * h] * 4 + [h * inter] * 3 + [h, h]
    assert numels == [vocab * h] + layer * 32 + [h, vocab * h]


def test_grouped_query_attention_order():
    h, kv, inter, vocab = 8192, 1024, 28672, 32000
    numels = models.from_hf_config(config("llama-2-70b.json"))
    layer = [h * h, h * kv, h * kv, h * h] + [h * inter] * 3 + [h, h]
    assert numels == [vocab * h] + layer * 80 + [h, vocab * h]
    h, kv, inter = 4096, 1024, 14336
    numels = models.from_hf_config(config("mistral-7b-v0.1.json"))
    layer = [h * h, h * kv, h * kv, h * h] + [h * inter] * 3 + [h, h]
    assert numels == [vocab * h] + layer * 32 + [h, vocab * h]


def test_mixtral_order():
    h, kv, inter, vocab, experts = 4096, 1024, 14336, 32000, 8
    numels = models.from_hf_config(config("mixtral-8x7b-v0.1.json"))
    # self_attn, block_sparse_moe (gate, then w1, w2, w3 of each expert),
    # input_layernorm, post_attention_layernorm.
    layer = ([h * h, h * kv, h * kv, h * h] + [h * experts]
             + [h * inter] * 3 * experts + [h, h])
    assert numels == [vocab * h] + layer * 32 + [h, vocab * h]


def test_opt_order():
    h, ffn = 7168, 28672
    numels = models.from_hf_config(config("opt-30b.json"))
    # OPTDecoder defines final_layer_norm before its layers.
    layer = [h * h, h] * 4 + [h, h] + [h * ffn, ffn, ffn * h, h] + [h, h]
    assert numels == [50272 * h, 2050 * h, h, h] + layer * 48


def test_bert_order():
    h, inter, vocab = 1024, 4096, 30522
    path = config("bert-large-uncased.json")
    embeddings = [vocab * h, 512 * h, 2 * h, h, h]
    layer = [h * h, h] * 4 + [h, h] + [h * inter, inter, inter * h, h, h, h]
    assert models.from_hf_config(path, "BertModel") == \
        embeddings + layer * 24 + [h * h, h]
    assert models.from_hf_config(path, "BertForMaskedLM") == \
        embeddings + layer * 24 + [vocab, h * h, h, h, h]


def test_defaults_fill_left_out_keys():
    # LlamaConfig's defaults are LLaMA-7B's shape: same published total.
    assert sum(models.from_hf_config({"model_type": "llama"})) == \
        PUBLISHED["llama-2-7b.json"]
    # GPT2Config's defaults are GPT-2 small: 124,439,808 published.
    assert sum(models.from_hf_config({"model_type": "gpt2"})) == 124_439_808


def test_heads_and_tying():
    llama = json.loads(config("llama-2-7b.json").read_text())
    bare = models.from_hf_config(llama, "LlamaModel")
    with_head = models.from_hf_config(llama)
    assert with_head == bare + [32000 * 4096]
    tied = models.from_hf_config(dict(llama, tie_word_embeddings=True))
    assert tied == bare
    gpt2 = json.loads(config("gpt2-xl.json").read_text())
    untied = models.from_hf_config(dict(gpt2, tie_word_embeddings=False))
    assert untied == models.from_hf_config(gpt2) + [50257 * 1600]


def test_explicit_head_dim():
    cfg = {"model_type": "mistral", "hidden_size": 5120, "head_dim": 128,
           "num_attention_heads": 32, "num_key_value_heads": 8,
           "num_hidden_layers": 1, "intermediate_size": 14336,
           "vocab_size": 131072}
    numels = models.from_hf_config(cfg)
    assert numels[1:5] == [5120 * 4096, 5120 * 1024, 5120 * 1024, 4096 * 5120]


def test_describe():
    model = models.describe(config("mixtral-8x7b-v0.1.json"))
    assert (model.model_type, model.architecture, model.hidden_size) == (
        "mixtral", "MixtralForCausalLM", 4096)
    assert models.describe(config("gpt2-xl.json")).hidden_size == 1600


def test_loads_dict_file_and_directory(tmp_path):
    raw = json.loads(config("llama-2-13b.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(raw))
    expected = models.from_hf_config(raw)
    assert models.from_hf_config(str(tmp_path / "config.json")) == expected
    assert models.from_hf_config(tmp_path) == expected
    assert sum(expected) == PUBLISHED["llama-2-13b.json"]


@pytest.mark.parametrize("cfg, architecture, words", [
    ({"model_type": "t5"}, None, "model_type"),
    ({}, None, "model_type"),
    ({"model_type": "llama"}, "BertModel", "BertModel"),
    ({"model_type": "bert",
      "architectures": ["BertForSequenceClassification"]}, None,
     "BertForSequenceClassification"),
    ({"model_type": "llama", "hidden_size": 4095}, None, "divisible"),
    ({"model_type": "llama", "hidden_size": "4096"}, None, "hidden_size"),
    ({"model_type": "llama", "num_hidden_layers": True}, None,
     "num_hidden_layers"),
    ({"model_type": "gpt2", "add_cross_attention": True}, None,
     "add_cross_attention"),
    ({"model_type": "bert", "position_embedding_type": "relative_key"}, None,
     "position_embedding_type"),
])
def test_refuses_what_it_cannot_list(cfg, architecture, words):
    with pytest.raises(ValueError, match=words):
        models.from_hf_config(cfg, architecture)


def test_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        models.from_hf_config(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{\"model_type\": ")
    with pytest.raises(ValueError, match="not JSON"):
        models.from_hf_config(broken)
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    with pytest.raises(ValueError, match="not a JSON object"):
        models.from_hf_config(listed)


def test_supported_architectures_listed():
    assert set(models.SUPPORTED_ARCHITECTURES) == {
        "gpt2", "bert", "opt", "llama", "mistral", "mixtral"}
