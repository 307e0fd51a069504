"""An independent oracle of Hugging Face model families: each parameter's
name and numel, in model.parameters() order, from a config.json.

Written from transformers' classes (4.x: one module per expert, before the
fused expert tensors of 5.0; the families of issue 43 as 4.51.3 builds
them, Llama 4's experts fused there already; DeepSeek-V2 from its published
remote code), never from chunkplan's C++. Stdlib only.

  FAMILIES           the family names random_config takes
  describe(config, architecture=None) -> Description
  random_config(family, rng) -> a small random config.json dict
  PUBLISHED          (name, config_path, architecture, published_total,
                      citation) of real models
"""

import dataclasses
from typing import List

from . import (bert, bloom, cohere, deepseek, falcon, gemma, gpt2, gpt_neox,
               gptj, llama, llama4, mistral, opt, phi3, qwen2, qwen2_moe,
               qwen3)
from .hf_config import HfConfig, load_config
from .published import PUBLISHED

__all__ = ["Description", "FAMILIES", "MODEL_TYPES", "PUBLISHED", "describe",
           "family_defaults", "random_config"]

_BY_MODEL_TYPE = {f.model_type: f for f in (
    gpt2.FAMILY, bert.FAMILY, opt.FAMILY, llama.FAMILY, mistral.MISTRAL,
    mistral.MIXTRAL, qwen2.FAMILY, gemma.GEMMA, gemma.GEMMA2, phi3.FAMILY,
    gpt_neox.FAMILY, qwen2_moe.FAMILY, qwen3.QWEN3, qwen3.QWEN3_MOE,
    deepseek.V2, deepseek.V3, llama4.FAMILY, gemma.GEMMA3, cohere.FAMILY,
    falcon.FAMILY, gptj.FAMILY, bloom.FAMILY)}

# model_type -> the architectures supported, the default first.
MODEL_TYPES = {t: f.architectures for t, f in _BY_MODEL_TYPE.items()}

# Family name -> its random small config. "llama3" is model_type "llama"
# shaped as LLaMA-3/3.x publishes its configs.
_RANDOM = {
    "gpt2": gpt2.random_config, "bert": bert.random_config,
    "opt": opt.random_config, "llama": llama.random_config,
    "mistral": mistral.random_mistral_config,
    "mixtral": mistral.random_mixtral_config,
    "llama3": llama.random_llama3_config,
    "qwen2": qwen2.random_config, "gemma": gemma.random_gemma_config,
    "gemma2": gemma.random_gemma2_config, "phi3": phi3.random_config,
    "gpt_neox": gpt_neox.random_config, "qwen2_moe": qwen2_moe.random_config,
    "qwen3": qwen3.random_config, "qwen3_moe": qwen3.random_moe_config,
    "deepseek_v2": deepseek.random_v2_config,
    "deepseek_v3": deepseek.random_v3_config,
    "llama4_text": llama4.random_config,
    "gemma3_text": gemma.random_gemma3_config,
    "cohere": cohere.random_config, "falcon": falcon.random_config,
    "gptj": gptj.random_config, "bloom": bloom.random_config,
}
FAMILIES = list(_RANDOM)

# PretrainedConfig options that change any family's parameter set and that
# the oracle does not model.
_UNMODELLED = ("pruned_heads", "torchscript")


@dataclasses.dataclass(frozen=True)
class Description:
    """A model read from a config: its type, the class whose parameters are
    listed, its hidden size, and each parameter's name and numel in that
    class's model.parameters() order (a tied weight once, under the name
    of its first registration)."""
    model_type: str
    architecture: str
    hidden_size: int
    names: List[str]
    numels: List[int]
    # The config's keys that describing it read (model_type, architectures
    # and the refused options included), sorted; the config's other keys
    # were ignored.
    keys_read: List[str] = dataclasses.field(default_factory=list)

    @property
    def total(self):
        return sum(self.numels)


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
            f"{', '.join(family.architectures)}")
    return architecture


def describe(config, architecture=None):
    """The Description of a config (a dict, a config.json path, or a
    directory holding config.json). architecture: a class name of
    MODEL_TYPES; default: the config's "architectures" entry, else the
    language-model head class. Raises ValueError naming the key for an
    unsupported model type, architecture or option, or a malformed value;
    OSError for a file that cannot be read."""
    raw = load_config(config)
    model_type = raw.get("model_type")
    family = _BY_MODEL_TYPE.get(model_type)
    if family is None:
        raise ValueError(f"config model_type: {model_type!r} is not "
                         f"supported; supported: {', '.join(_BY_MODEL_TYPE)}")
    for key in _UNMODELLED:
        if raw.get(key):
            raise ValueError(f"config {key}: {raw[key]!r} is not supported")
    chosen = _architecture(family, raw, architecture)
    cfg = HfConfig(raw, family.defaults)
    params = family.params(cfg, chosen)
    hidden_size = cfg.size(family.hidden_size_key)
    read = cfg.read | {"model_type", "architectures", *_UNMODELLED}
    return Description(model_type, chosen, hidden_size,
                       [name for name, _ in params],
                       [numel for _, numel in params],
                       sorted(k for k in raw if k in read))


def family_defaults(model_type):
    """The config class's defaults of `model_type` (a copy): the keys its
    family knows."""
    return dict(_BY_MODEL_TYPE[model_type].defaults)


def random_config(family, rng):
    """A small random config.json dict of `family` (one of FAMILIES), drawn
    from the random.Random rng: random sizes, layers, heads, tying, and the
    family's options; keys sometimes left out for their defaults."""
    if family not in _RANDOM:
        raise ValueError(f"family: {family!r} is not one of "
                         f"{', '.join(FAMILIES)}")
    return _RANDOM[family](rng)
