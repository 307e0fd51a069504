"""chunkplan.models: parameter lists from Hugging Face config.json files.

The expected lists come from the model-family oracle (tests/oracle/models,
written from transformers' classes; its own tests hold it to published
parameter counts and to orders written out by hand): every published config
of the families the client supports, and fresh random configs of each.
"""

import json
import random

import pytest

from chunkplan import models
from oracle_cases import HF_CONFIGS, random_seed
import models as oracle  # tests/oracle/models, on the path via oracle_cases

# The oracle's random families whose model types the client supports.
CLIENT_FAMILIES = ["gpt2", "bert", "opt", "llama", "llama3", "mistral",
                   "mixtral"]


def supported(path):
    return oracle.describe(path).model_type in models.SUPPORTED_ARCHITECTURES


@pytest.mark.parametrize("entry", [e for e in oracle.PUBLISHED
                                   if supported(e[1])],
                         ids=lambda e: e[0])
def test_published_configs_match_the_oracle(entry):
    _, path, architecture, total, _ = entry
    numels = models.from_hf_config(path, architecture)
    assert numels == oracle.describe(path, architecture).numels
    assert sum(numels) == total


@pytest.mark.parametrize("family", CLIENT_FAMILIES)
def test_random_configs_match_the_oracle(family):
    seed = random_seed()
    rng = random.Random(seed)
    for _ in range(50):
        config = oracle.random_config(family, rng)
        expected = oracle.describe(config)
        got = models.describe(config)
        assert (got.model_type, got.architecture, got.hidden_size,
                got.numels) == (expected.model_type, expected.architecture,
                                expected.hidden_size, expected.numels), (
            f"seed {seed}: {config}")


def test_summary():
    model = models.describe(HF_CONFIGS / "mixtral-8x7b-v0.1.json")
    assert model.summary() == ("mixtral (MixtralForCausalLM), 995 "
                               "parameters, hidden size 4096")


def test_loads_dict_file_and_directory(tmp_path):
    raw = json.loads((HF_CONFIGS / "llama-2-13b.json").read_text())
    (tmp_path / "config.json").write_text(json.dumps(raw))
    expected = models.from_hf_config(raw)
    assert models.from_hf_config(str(tmp_path / "config.json")) == expected
    assert models.from_hf_config(tmp_path) == expected


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
