"""Parameter lists of Hugging Face models from their config.json.

Schedulers know a model by its config.json, not by its parameters.
from_hf_config(config) gives the numel of every parameter, in the order
the model's model.parameters() yields them (a tied weight once): what
ColossalAI's search visits, so the search can run without building the model.

Supported: GPT-2, BERT, OPT, LLaMA, Mistral, Mixtral, each as its bare model
or with its language-model head, as transformers 4.x defines them. Options
that change the parameter set and that are not modelled here (GPT-2 cross
attention, BERT's relative position embeddings) are refused, not guessed.
"""

import dataclasses
from typing import List

from chunkplan.models import bert, gpt2, llama, opt
from chunkplan.models.hf_config import HfConfig, load_config

__all__ = ["HfModel", "SUPPORTED_ARCHITECTURES", "describe", "from_hf_config",
           "load_config"]

_FAMILIES = {f.model_type: f for f in (gpt2.FAMILY, bert.FAMILY, opt.FAMILY,
                                       llama.LLAMA, llama.MISTRAL,
                                       llama.MIXTRAL)}

# model_type -> the architectures supported, the default first.
SUPPORTED_ARCHITECTURES = {t: f.architectures for t, f in _FAMILIES.items()}


@dataclasses.dataclass(frozen=True)
class HfModel:
    """A model read from a config: its type, the class whose parameters are
    listed, its hidden size (the seed's advice for search_interval), and the
    numels in that class's model.parameters() order."""
    model_type: str
    architecture: str
    hidden_size: int
    numels: List[int]

    def summary(self):
        """One line for a table: "gpt2 (GPT2LMHeadModel), 28 parameters,
        hidden size 128"."""
        return "%s (%s), %d parameters, hidden size %d" % (
            self.model_type, self.architecture, len(self.numels),
            self.hidden_size)


def _architecture(family, raw, architecture):
    """The class to list: `architecture` if given, else the config's
    "architectures" entry, else the family's default."""
    if architecture is None:
        named = raw.get("architectures") or []
        if not isinstance(named, list) or not named:
            return family.architectures[0]
        architecture = named[0]
        source = "config architectures"
    else:
        source = "architecture"
    if architecture not in family.architectures:
        raise ValueError(
            f"{source}: {architecture!r} is not supported for model_type "
            f"{family.model_type!r}; choose one of "
            f"{', '.join(family.architectures)} with architecture=")
    return architecture


def describe(config, architecture=None):
    """The HfModel of a config (a dict, a config.json path, or a directory
    holding config.json). architecture: a class name from
    SUPPORTED_ARCHITECTURES; default: the config's "architectures" entry,
    else the language-model head class. Raises ValueError for an
    unsupported model type, architecture or option, or a malformed value;
    OSError for a file that cannot be read."""
    raw = load_config(config)
    model_type = raw.get("model_type")
    family = _FAMILIES.get(model_type)
    if family is None:
        raise ValueError(f"config model_type: {model_type!r} is not "
                         f"supported; supported: {', '.join(_FAMILIES)}")
    chosen = _architecture(family, raw, architecture)
    cfg = HfConfig(raw, family.defaults)
    return HfModel(model_type, chosen, cfg.size(family.hidden_size_key),
                   family.numels(cfg, chosen))


def from_hf_config(config, architecture=None):
    """The numels of the model's parameters, in model.parameters() order:
    a list of ints to pass to chunkplan.search_chunk_configuration. See
    describe() for the arguments and errors."""
    return describe(config, architecture).numels
