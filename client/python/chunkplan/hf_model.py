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
                   list(description.names))
