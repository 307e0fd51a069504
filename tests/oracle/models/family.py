"""What the oracle knows of one Hugging Face model type."""

import dataclasses
from typing import Callable, Dict, Tuple


@dataclasses.dataclass(frozen=True)
class Family:
    """A model type ("gpt2", "llama", ...) and the classes built from it.

    architectures: the class names supported, the default first (the one a
    trainer instantiates: the language-model head). params(cfg,
    architecture): the (name, numel) of each parameter in that class's
    model.parameters() order, a tied weight once (its first registration).
    defaults: the config class's defaults for the keys it reads.
    hidden_size_key: the config key of the hidden size.
    """
    model_type: str
    architectures: Tuple[str, ...]
    defaults: Dict[str, object]
    hidden_size_key: str
    params: Callable
