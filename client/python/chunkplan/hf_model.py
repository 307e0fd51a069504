"""A model as the server's Describe lists it (chunkplan.models.describe;
Client.describe returns one)."""

import dataclasses
from typing import List


@dataclasses.dataclass(frozen=True)
class HfModel:
    """A model read from a config: its type, the class whose parameters are
    listed, its hidden size, and each parameter's numel and name in that
    class's model.parameters() order."""
    model_type: str
    architecture: str
    hidden_size: int
    numels: List[int]
    names: List[str] = dataclasses.field(default_factory=list)
    # The config's keys as the server's family accounted for them: read,
    # ignored, and ignored but known harmless (token ids, dtype, ...); and
    # a warning for each ignored key that looks like a known one.
    config_keys_read: List[str] = dataclasses.field(default_factory=list)
    config_keys_ignored: List[str] = dataclasses.field(default_factory=list)
    config_keys_harmless: List[str] = dataclasses.field(default_factory=list)
    warnings: List[str] = dataclasses.field(default_factory=list)
    total: int = 0  # the server's sum of the numels

    def summary(self):
        """One line for a table: "gpt2 (GPT2LMHeadModel), 28 parameters,
        hidden size 128"."""
        return "%s (%s), %d parameters, hidden size %d" % (
            self.model_type, self.architecture, len(self.numels),
            self.hidden_size)

    @classmethod
    def from_description(cls, description):
        """The HfModel of a chunkplan.v1.ModelDescription."""
        return cls(description.model_type, description.architecture,
                   description.hidden_size, list(description.numels),
                   list(description.names),
                   config_keys_read=list(description.config_keys_read),
                   config_keys_ignored=list(description.config_keys_ignored),
                   config_keys_harmless=list(
                       description.config_keys_harmless),
                   warnings=list(description.warnings),
                   total=int(description.total))
