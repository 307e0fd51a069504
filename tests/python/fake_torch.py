"""Stand-ins for torch.nn.Module and its parameters, as far as the client
looks at them (torch is not installed on the test machines)."""


class FakeParameter:
    """What the seed reads of a torch parameter: numel(), and ColossalAI's
    _ddp_to_ignore flag where set."""

    def __init__(self, numel, ignored=False):
        self._numel = numel
        if ignored:
            self._ddp_to_ignore = True

    def numel(self):
        return self._numel


class FakeModule:
    """A torch.nn.Module as far as the client looks: parameters() yields each
    parameter once (PyTorch drops a tied weight's second visit itself)."""

    def __init__(self, parameters):
        self._parameters = list(parameters)

    @classmethod
    def of_numels(cls, numels, ignored=()):
        """A module whose i-th parameter has numels[i] elements and is
        ddp-ignored where i is in `ignored`."""
        return cls(FakeParameter(n, i in ignored) for i, n in enumerate(numels))

    def parameters(self):
        return iter(self._parameters)
