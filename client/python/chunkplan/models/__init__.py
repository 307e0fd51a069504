"""Parameter lists of Hugging Face models from their config.json, as the
server describes them.

Schedulers know a model by its config.json, not by its parameters.
describe(config) asks a chunkplan server (its Describe call) for the numel
and name of every parameter, in the order the model's model.parameters()
yields them (a tied weight once): what ColossalAI's search visits, so the
search can run without building the model. The model families live in the
server, once, for every client in every language; a request may also send
the config itself (ChunkSearchRequest.model).

    from chunkplan import Client, models
    with Client("localhost:50051") as client:
        model = models.describe("config.json", client=client)
        model.numels, model.names, model.hidden_size
"""

import json
import os

from chunkplan.client import DEFAULT_TARGET, Client
from chunkplan.hf_model import HfModel
from chunkplan.v1 import chunk_search_pb2

__all__ = ["HfModel", "config_text", "describe", "from_hf_config",
           "model_config"]


def config_text(config):
    """The text of a config.json: `config` is a dict (written as JSON), a
    path to a config.json, or a directory that holds one. Raises OSError for
    a file that cannot be read, TypeError for anything else."""
    if isinstance(config, dict):
        return json.dumps(config)
    if not isinstance(config, (str, os.PathLike)):
        raise TypeError("config: expected a dict or a path, got "
                        f"{type(config).__name__}")
    path = os.fspath(config)
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    with open(path, encoding="utf-8") as f:
        return f.read()


def describe(config, architecture=None, *, client=None, target=None,
             timeout=None):
    """The HfModel of a config (a dict, a config.json path, or a directory
    holding config.json), as the server at `client` (a chunkplan.Client) or
    else `target` (default: chunkplan.DEFAULT_TARGET) describes it.
    architecture: the class to list; default: the config's
    "architectures" entry, else the language-model head class. Raises
    InvalidArgumentError (a ChunkplanError) for an unsupported model type,
    architecture or option, or a malformed value, naming it; OSError for a
    file that cannot be read; the call's ChunkplanError otherwise."""
    text = config_text(config)
    if client is not None:
        return client.describe(text, architecture, timeout=timeout)
    with Client(target or DEFAULT_TARGET) as own:
        return own.describe(text, architecture, timeout=timeout)


def from_hf_config(config, architecture=None, **call):
    """The numels of the model's parameters, in model.parameters() order:
    a list of ints to pass to chunkplan.search_chunk_configuration. See
    describe() for the arguments (client=, target=, timeout=) and errors."""
    return describe(config, architecture, **call).numels


def model_config(config, architecture=None, *, lora_rank=0,
                 lora_targets=(), lora_dropout=0.0, freeze="", train=""):
    """The chunkplan.v1.ModelConfig of a config (a dict, a config.json path,
    or a directory holding config.json): what a request sends as
    search.model, for the server to describe (Client.plan takes it in place
    of numels, and needs it to estimate activations). lora_rank (with
    lora_targets, e.g. ("q_proj", "v_proj"), and lora_dropout): PEFT's
    LoRA adapters, added by the server, the base frozen; freeze / train:
    RE2 patterns over the parameter names that the server matches
    (docs/lora.md). Raises as config_text; the server refuses a target or
    pattern that matches nothing."""
    config = chunk_search_pb2.ModelConfig(
        hf_config_json=config_text(config), architecture=architecture or "",
        freeze=freeze, train=train)
    if lora_rank or lora_targets or lora_dropout:
        config.lora.rank = lora_rank
        config.lora.targets.extend(lora_targets)
        config.lora.dropout = lora_dropout
    return config
