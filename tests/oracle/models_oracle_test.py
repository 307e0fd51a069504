#!/usr/bin/python3
"""Tests of the model-family oracle (tests/oracle/models) against published
parameter counts and orders written out by hand.

Every expected figure is a published count (cited in models/published.py)
or written out here from the layer shapes, never read back from the oracle.

Run: /usr/bin/python3 tests/oracle/models_oracle_test.py
     (ctest: models_oracle_test)
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models",
                    "data")


def data(name):
    return os.path.join(DATA, name)


def load(name):
    with open(data(name)) as f:
        return json.load(f)


def numels(config, architecture=None):
    return models.describe(config, architecture).numels


class PublishedTest(unittest.TestCase):
    def test_every_published_total(self):
        for name, path, architecture, total, citation in models.PUBLISHED:
            with self.subTest(name):
                self.assertTrue(citation)
                self.assertEqual(models.describe(path, architecture).total,
                                 total)

    def test_every_model_type_has_a_published_total(self):
        published = {models.describe(path).model_type
                     for _, path, _, _, _ in models.PUBLISHED}
        self.assertEqual(published, set(models.MODEL_TYPES))

    def test_bert_masked_lm_derived(self):
        # BertForMaskedLM, derived from BertModel's published 335,141,888:
        # no pooler (1024*1024 + 1024), plus cls.predictions: bias 30522,
        # transform.dense 1024*1024 + 1024, transform.LayerNorm 2*1024; the
        # decoder's weight is tied to the word embeddings and its bias is
        # the predictions' bias.
        expected = 335_141_888 - 1_049_600 + 30_522 + 1_049_600 + 2_048
        path = data("bert-large-uncased.json")
        self.assertEqual(models.describe(path).architecture,
                         "BertForMaskedLM")
        self.assertEqual(models.describe(path).total, expected)


class OrderTest(unittest.TestCase):
    """Whole lists in order, written out from the module definitions."""

    def test_colossalai_gpt2_test_model(self):
        # examples/gpt2_colossalai.json lists ColossalAI's GPT-2 test model
        # independently of the oracle.
        with open(os.path.join(ROOT, "examples", "gpt2_colossalai.json")) as f:
            expected = json.load(f)["numels"]
        self.assertEqual(numels(data("colossalai-gpt2-test.json")), expected)

    def test_llama(self):
        h, inter, vocab = 4096, 11008, 32000
        layer = [h * h] * 4 + [h * inter] * 3 + [h, h]
        self.assertEqual(numels(data("llama-2-7b.json")),
                         [vocab * h] + layer * 32 + [h, vocab * h])

    def test_grouped_query_attention(self):
        h, kv, inter, vocab = 8192, 1024, 28672, 32000
        layer = [h * h, h * kv, h * kv, h * h] + [h * inter] * 3 + [h, h]
        self.assertEqual(numels(data("llama-2-70b.json")),
                         [vocab * h] + layer * 80 + [h, vocab * h])
        h, kv, inter = 4096, 1024, 14336
        layer = [h * h, h * kv, h * kv, h * h] + [h * inter] * 3 + [h, h]
        self.assertEqual(numels(data("mistral-7b-v0.1.json")),
                         [vocab * h] + layer * 32 + [h, vocab * h])

    def test_mixtral(self):
        h, kv, inter, vocab, experts = 4096, 1024, 14336, 32000, 8
        # self_attn, block_sparse_moe (gate, then w1, w2, w3 of each
        # expert), input_layernorm, post_attention_layernorm.
        layer = ([h * h, h * kv, h * kv, h * h] + [h * experts]
                 + [h * inter] * 3 * experts + [h, h])
        self.assertEqual(numels(data("mixtral-8x7b-v0.1.json")),
                         [vocab * h] + layer * 32 + [h, vocab * h])

    def test_opt(self):
        h, ffn = 7168, 28672
        # OPTDecoder defines final_layer_norm before its layers.
        layer = ([h * h, h] * 4 + [h, h] + [h * ffn, ffn, ffn * h, h]
                 + [h, h])
        self.assertEqual(numels(data("opt-30b.json")),
                         [50272 * h, 2050 * h, h, h] + layer * 48)

    def test_bert(self):
        h, inter, vocab = 1024, 4096, 30522
        path = data("bert-large-uncased.json")
        embeddings = [vocab * h, 512 * h, 2 * h, h, h]
        layer = ([h * h, h] * 4 + [h, h]
                 + [h * inter, inter, inter * h, h, h, h])
        self.assertEqual(numels(path, "BertModel"),
                         embeddings + layer * 24 + [h * h, h])
        self.assertEqual(numels(path, "BertForMaskedLM"),
                         embeddings + layer * 24 + [vocab, h * h, h, h, h])


class NamesTest(unittest.TestCase):
    def test_llama_names(self):
        d = models.describe(data("llama-2-7b.json"))
        self.assertEqual(len(d.names), len(d.numels))
        self.assertEqual(d.names[:10], [
            "model.embed_tokens.weight",
            "model.layers.0.self_attn.q_proj.weight",
            "model.layers.0.self_attn.k_proj.weight",
            "model.layers.0.self_attn.v_proj.weight",
            "model.layers.0.self_attn.o_proj.weight",
            "model.layers.0.mlp.gate_proj.weight",
            "model.layers.0.mlp.up_proj.weight",
            "model.layers.0.mlp.down_proj.weight",
            "model.layers.0.input_layernorm.weight",
            "model.layers.0.post_attention_layernorm.weight"])
        self.assertEqual(d.names[-3:], [
            "model.layers.31.post_attention_layernorm.weight",
            "model.norm.weight", "lm_head.weight"])
        bare = models.describe(data("llama-2-7b.json"), "LlamaModel")
        self.assertEqual(bare.names[0], "embed_tokens.weight")
        self.assertEqual(bare.names[-1], "norm.weight")

    def test_tied_names(self):
        gpt2 = models.describe(data("gpt2-xl.json"))
        self.assertEqual(gpt2.names[:2], ["transformer.wte.weight",
                                          "transformer.wpe.weight"])
        self.assertEqual(gpt2.names[-2:], ["transformer.ln_f.weight",
                                           "transformer.ln_f.bias"])
        bert = models.describe(data("bert-large-uncased.json"))
        self.assertEqual(bert.names[-5:], [
            "cls.predictions.bias",
            "cls.predictions.transform.dense.weight",
            "cls.predictions.transform.dense.bias",
            "cls.predictions.transform.LayerNorm.weight",
            "cls.predictions.transform.LayerNorm.bias"])
        mixtral = models.describe(data("mixtral-8x7b-v0.1.json"))
        self.assertIn("model.layers.0.block_sparse_moe.experts.7.w3.weight",
                      mixtral.names)
        opt = models.describe(data("opt-30b.json"))
        self.assertEqual(opt.names[:4], [
            "model.decoder.embed_tokens.weight",
            "model.decoder.embed_positions.weight",
            "model.decoder.final_layer_norm.weight",
            "model.decoder.final_layer_norm.bias"])


class ConfigTest(unittest.TestCase):
    def test_defaults_fill_left_out_keys(self):
        # LlamaConfig's defaults are LLaMA-7B's shape: the same total as
        # Llama-2-7B (KerasHub llama2_7b_en: 6,738,415,616).
        self.assertEqual(models.describe({"model_type": "llama"}).total,
                         6_738_415_616)

    def test_heads_and_tying(self):
        llama = load("llama-2-7b.json")
        bare = numels(llama, "LlamaModel")
        self.assertEqual(numels(llama), bare + [32000 * 4096])
        self.assertEqual(numels(dict(llama, tie_word_embeddings=True)), bare)
        gpt2 = load("gpt2-xl.json")
        self.assertEqual(numels(dict(gpt2, tie_word_embeddings=False)),
                         numels(gpt2) + [50257 * 1600])

    def test_explicit_head_dim(self):
        cfg = {"model_type": "mistral", "hidden_size": 5120, "head_dim": 128,
               "num_attention_heads": 32, "num_key_value_heads": 8,
               "num_hidden_layers": 1, "intermediate_size": 14336,
               "vocab_size": 131072}
        self.assertEqual(numels(cfg)[1:5], [5120 * 4096, 5120 * 1024,
                                            5120 * 1024, 4096 * 5120])

    def test_describe_fields(self):
        d = models.describe(data("mixtral-8x7b-v0.1.json"))
        self.assertEqual((d.model_type, d.architecture, d.hidden_size),
                         ("mixtral", "MixtralForCausalLM", 4096))
        self.assertEqual(models.describe(data("gpt2-xl.json")).hidden_size,
                         1600)

    def test_loads_dict_file_and_directory(self):
        raw = load("llama-2-13b.json")
        expected = numels(raw)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "config.json")
            with open(path, "w") as f:
                json.dump(raw, f)
            self.assertEqual(numels(path), expected)
            self.assertEqual(numels(tmp), expected)

    def test_refuses_what_it_cannot_list(self):
        cases = [
            ({"model_type": "t5"}, None, "model_type"),
            ({}, None, "model_type"),
            ({"model_type": "llama"}, "BertModel", "BertModel"),
            ({"model_type": "bert",
              "architectures": ["BertForSequenceClassification"]}, None,
             "BertForSequenceClassification"),
            ({"model_type": "llama", "hidden_size": 4095}, None, "divisible"),
            ({"model_type": "llama", "hidden_size": "4096"}, None,
             "hidden_size"),
            ({"model_type": "llama", "hidden_size": 4096.0}, None,
             "hidden_size"),
            ({"model_type": "llama", "vocab_size": None}, None, "vocab_size"),
            ({"model_type": "llama", "num_hidden_layers": True}, None,
             "num_hidden_layers"),
            ({"model_type": "llama", "tie_word_embeddings": None}, None,
             "tie_word_embeddings"),
            ({"model_type": "gpt2", "add_cross_attention": True}, None,
             "add_cross_attention"),
            ({"model_type": "bert", "add_cross_attention": True}, None,
             "add_cross_attention"),
            ({"model_type": "bert", "position_embedding_type":
              "relative_key"}, None, "position_embedding_type"),
            ({"model_type": "gpt2", "pruned_heads": {"0": [1]}}, None,
             "pruned_heads"),
            ({"model_type": "gpt2", "torchscript": True}, None,
             "torchscript"),
        ]
        for cfg, architecture, words in cases:
            with self.subTest(cfg=cfg, architecture=architecture):
                with self.assertRaisesRegex(ValueError, words):
                    models.describe(cfg, architecture)

    def test_file_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(FileNotFoundError):
                models.describe(os.path.join(tmp, "absent.json"))
            broken = os.path.join(tmp, "broken.json")
            with open(broken, "w") as f:
                f.write("{\"model_type\": ")
            with self.assertRaisesRegex(ValueError, "not JSON"):
                models.describe(broken)
            listed = os.path.join(tmp, "list.json")
            with open(listed, "w") as f:
                f.write("[]")
            with self.assertRaisesRegex(ValueError, "not a JSON object"):
                models.describe(listed)


class CommandLineTest(unittest.TestCase):
    """models_oracle.py, the oracle for tests in other languages."""
    COMMAND = [sys.executable, os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "models_oracle.py")]

    def run_oracle(self, args, text=""):
        return subprocess.run(self.COMMAND + args, input=text, check=True,
                              capture_output=True, text=True).stdout

    def test_describe_lines(self):
        with open(data("mistral-7b-v0.1.json")) as f:
            text = f.read()
        requests = [{"hf_config_json": text},
                    {"config": {"model_type": "t5"}},
                    {"hf_config_json": text, "architecture": "MistralModel"}]
        out = self.run_oracle(["--jsonl"], "".join(
            json.dumps(r) + "\n" for r in requests)).splitlines()
        first, second, third = (json.loads(line) for line in out)
        self.assertEqual(first["total"], 7_241_732_096)
        self.assertEqual(first["numels"], numels(data("mistral-7b-v0.1.json")))
        self.assertEqual(len(first["names"]), len(first["numels"]))
        self.assertIn("model_type", second["error"])
        self.assertEqual(third["total"], 7_241_732_096 - 32000 * 4096)

    def test_random_configs_and_families(self):
        families = self.run_oracle(["--families"]).split()
        self.assertEqual(families, models.FAMILIES)
        out = self.run_oracle(["--random", "qwen2_moe", "--seed", "7",
                               "--count", "3"]).splitlines()
        self.assertEqual(len(out), 3)
        for line in out:
            self.assertEqual(json.loads(line)["model_type"], "qwen2_moe")


if __name__ == "__main__":
    unittest.main()
