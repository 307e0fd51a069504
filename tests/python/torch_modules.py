"""Real torch.nn.Modules for the client's tests (Debian's python3-torch):
a module of given parameter sizes, and a small language model whose head
is tied to its embedding and some of whose parameters are frozen. Tests
that need torch skip, saying "torch not installed", where it is missing.
"""

import pytest


def require_torch():
    """The torch module, or a skip where it is not installed."""
    return pytest.importorskip(
        "torch", reason="torch not installed (Debian: python3-torch)")


def module_of_numels(numels, ignored=(), frozen=()):
    """A torch.nn.Module whose parameters() yields one 1-D parameter per
    numel, in order; the i-th carries ColossalAI's `_ddp_to_ignore` flag
    where i is in `ignored`, and requires_grad=False where i is in
    `frozen`. Storage is uninitialised: only the sizes matter."""
    torch = require_torch()
    parameters = []
    for i, numel in enumerate(numels):
        parameter = torch.nn.Parameter(torch.empty(numel),
                                       requires_grad=i not in frozen)
        if i in ignored:
            parameter._ddp_to_ignore = True
        parameters.append(parameter)
    module = torch.nn.Module()
    module.params = torch.nn.ParameterList(parameters)
    return module


# TiedLM(vocab=1000, hidden=48) by hand, in parameters() order, which yields
# a module's own parameters before its submodules': position (frozen)
# 64 x 48; embed.weight 1000 x 48; block.weight 48 x 48; block.bias 48;
# norm.weight and norm.bias (both frozen) 48 each; head.weight is
# embed.weight, so parameters() does not yield it again.
TIED_LM_NUMELS = [3_072, 48_000, 2_304, 48, 48, 48]
TIED_LM_FROZEN = [True, False, False, False, True, True]


def tied_lm(vocab=1000, hidden=48):
    """A small language model: an embedding, a frozen position table, a
    linear block, a frozen LayerNorm and a head tied to the embedding
    (TIED_LM_NUMELS and TIED_LM_FROZEN at the defaults)."""
    torch = require_torch()

    class TiedLM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(vocab, hidden)
            self.position = torch.nn.Parameter(torch.zeros(64, hidden),
                                               requires_grad=False)
            self.block = torch.nn.Linear(hidden, hidden)
            self.norm = torch.nn.LayerNorm(hidden)
            self.norm.requires_grad_(False)
            self.head = torch.nn.Linear(hidden, vocab, bias=False)
            self.head.weight = self.embed.weight

        def forward(self, tokens):
            x = self.embed(tokens) + self.position[:tokens.shape[-1]]
            return self.head(self.norm(torch.relu(self.block(x))))

    return TiedLM()
