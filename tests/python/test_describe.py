"""chunkplan.models and Client.describe: the model's parameters as the
server describes them (its Describe call), held to the oracle
(tests/oracle/models, written from transformers' classes); and the same
model sent as ChunkSearchRequest.model answering as its numels do."""

import json

import pytest

import chunkplan
from chunkplan import models
from oracle_cases import HF_CONFIGS
import models as oracle_models  # noqa: E402  (tests/oracle/models)

GPT2_TEST = HF_CONFIGS / "colossalai-gpt2-test.json"
# The configs whose families the server has (more as server/models grows).
CONFIGS = ["colossalai-gpt2-test.json", "gpt2-xl.json", "llama-2-7b.json",
           "mixtral-8x7b-v0.1.json"]


@pytest.mark.parametrize("name", CONFIGS)
def test_describe_matches_the_oracle(server, name):
    with chunkplan.Client(server.target) as client:
        got = models.describe(HF_CONFIGS / name, client=client, timeout=60)
    want = oracle_models.describe(HF_CONFIGS / name)
    assert (got.model_type, got.architecture, got.hidden_size) == (
        want.model_type, want.architecture, want.hidden_size)
    assert got.numels == want.numels
    assert got.names == want.names


def test_dict_file_directory_and_target(server, tmp_path):
    raw = json.loads(GPT2_TEST.read_text())
    (tmp_path / "config.json").write_text(json.dumps(raw))
    want = oracle_models.describe(raw).numels
    assert models.from_hf_config(raw, target=server.target) == want
    assert models.from_hf_config(tmp_path, target=server.target) == want
    assert models.from_hf_config(str(tmp_path / "config.json"),
                                 target=server.target) == want
    model = models.describe(raw, "GPT2Model", target=server.target)
    assert model.architecture == "GPT2Model"
    assert model.summary() == ("gpt2 (GPT2Model), %d parameters, hidden "
                               "size 128" % len(model.numels))


@pytest.mark.parametrize("config, words", [
    ({"model_type": "t5"}, "model_type"),
    ({"model_type": "gpt2", "n_embd": "128"}, "n_embd"),
    ({"model_type": "gpt2", "add_cross_attention": True},
     "add_cross_attention"),
])
def test_bad_configs_are_the_servers_invalid_argument(server, config, words):
    with pytest.raises(chunkplan.InvalidArgumentError, match=words):
        models.describe(config, target=server.target)


def test_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        models.config_text(tmp_path / "absent.json")
    with pytest.raises(TypeError):
        models.config_text(42)


def test_model_in_the_request_answers_as_its_numels(server):
    """ChunkSearchRequest.model: the same answer as the oracle's numels at
    interval 1024 (search_interval 0 with a model)."""
    pb = chunkplan.client.chunk_search_pb2
    text = GPT2_TEST.read_text()
    by_model = pb.ChunkSearchRequest(
        model=pb.ModelConfig(hf_config_json=text), dp_degrees=[2],
        search_range_m=2, min_chunk_size_m=0)
    by_numels = pb.ChunkSearchRequest(
        numels=oracle_models.describe(GPT2_TEST).numels, dp_degrees=[2],
        search_range_m=2, search_interval=1024, min_chunk_size_m=0)
    with chunkplan.Client(server.target) as client:
        a = client.search_request(by_model, timeout=60)
        b = client.search_request(by_numels, timeout=60)
    a.search_nanos = b.search_nanos = 0
    # The model's answer names its model; the rest is the numels'.
    assert (a.model_report.model_type, a.model_report.architecture) == (
        "gpt2", "GPT2LMHeadModel")
    a.model_report.model_type = a.model_report.architecture = ""
    assert a == b


# PEFT's published print_trainable_parameters() figures (tests/oracle/models/
# lora.py, PEFT_PUBLISHED, each cited there).
from models.lora import PEFT_PUBLISHED  # noqa: E402

ORACLE_DATA = HF_CONFIGS.parents[2] / "oracle" / "models" / "data"


@pytest.mark.parametrize("case", PEFT_PUBLISHED, ids=lambda c: c[0])
def test_model_config_with_lora_is_pefts_count(server, case):
    config, rank, targets, trainable, total, _ = case
    request = models.model_config(ORACLE_DATA / config, lora_rank=rank,
                                  lora_targets=targets)
    with chunkplan.Client(server.target) as client:
        got = client.describe_request(request, timeout=60)
    assert (got.trainable, got.total) == (trainable, total)
    assert sum(n for n, f in zip(got.numels, got.frozen) if not f) == \
        trainable


def test_model_config_freeze_and_train_reach_the_server(server):
    request = models.model_config(GPT2_TEST, freeze=r"wte\.",
                                  train="nothing_matches_this")
    with chunkplan.Client(server.target) as client:
        with pytest.raises(chunkplan.InvalidArgumentError,
                           match="train: .*matches no parameter"):
            client.describe_request(request, timeout=60)
        got = client.describe_request(
            models.model_config(GPT2_TEST, freeze=r"wte\."), timeout=60)
    assert got.frozen[0] and not any(got.frozen[1:])
