"""Real torch modules through the client: a tied weight counts once, frozen
parameters (requires_grad=False) travel as frozen, ColossalAI's ignored
ones not at all; the numels and flags match a hand count
(torch_modules.TIED_LM_*), and the layout the server returns for the
module equals the oracle's for those hand-counted lists."""

import pytest

import chunkplan
from chunkplan import layout_request, request
from layout_cases import (SETTINGS, gemini_json, layout_json, oracle_layout,
                          plain)
from torch_modules import (TIED_LM_FROZEN, TIED_LM_NUMELS, module_of_numels,
                           require_torch, tied_lm)

TIMEOUT_S = 60


@pytest.fixture(scope="module")
def client(server):
    with chunkplan.Client(server.target) as c:
        yield c


def test_tied_weight_once_and_frozen_from_requires_grad():
    model = tied_lm()
    assert model.head.weight is model.embed.weight
    numels, degrees = request.numels_and_degrees(model, dp_degree=4)
    assert numels == TIED_LM_NUMELS
    assert degrees == [4] * len(TIED_LM_NUMELS)
    assert layout_request.frozen_flags(model, None) == TIED_LM_FROZEN


def test_a_frozen_tied_weight_is_frozen_once():
    model = tied_lm()
    model.head.weight.requires_grad_(False)  # the embedding's, too
    assert layout_request.frozen_flags(model, None) == [
        True, True, False, False, True, True]


def test_ignored_parameters_leave_numels_and_frozen_alike():
    model = module_of_numels([10, 20, 30, 40], ignored={1}, frozen={1, 2})
    assert request.numels_and_degrees(model)[0] == [10, 30, 40]
    assert layout_request.frozen_flags(model, None) == [False, True, False]


def _request(numels, frozen, dp, settings, configs=None, search=None):
    """The oracle's LayoutRequest for hand-counted lists."""
    body = {"search": {"numels": numels, "dp_degrees": [dp],
                       **(search or {"search_range_m": 0,
                                     "search_interval": 1})},
            "frozen": frozen, "gemini": gemini_json(settings)}
    if configs:
        body["configs"] = configs
    return body


@pytest.mark.parametrize("dp", [1, 2, 4])
@pytest.mark.parametrize("settings", SETTINGS[::5],
                         ids=lambda s: "-".join(str(v) for v in s.values()))
def test_searched_layout_of_the_tied_lm_equals_the_oracle(client, dp,
                                                          settings):
    search = {"search_range_m": 0.0625, "search_interval": 512,
              "min_chunk_size_m": 0}
    got = client.layout(tied_lm(), dp_degree=dp, timeout=TIMEOUT_S,
                        **search, **settings)
    expected = oracle_layout(_request(TIED_LM_NUMELS, TIED_LM_FROZEN, dp,
                                      settings, search=search))
    assert layout_json(got) == plain(expected)
    frozen_numel = sum(n for n, f in zip(TIED_LM_NUMELS, TIED_LM_FROZEN) if f)
    assert got.most_loaded_rank.frozen_bytes == 2 * frozen_numel


def test_given_config_with_an_oversize_embedding_equals_the_oracle(client):
    """Chunks of 4096 at dp 4, the frozen position table (parameter 0) left
    out: the 48,000-element embedding gets a chunk of its own (48,000, a
    multiple of 4), the block and its bias share one."""
    settings = SETTINGS[0]
    configs = [{"dp_degree": 4, "chunk_size": 4096, "keep_gathered": False}]
    got = client.layout(tied_lm(), configs=[(4, 4096, False)], dp_degree=4,
                        timeout=TIMEOUT_S)
    expected = oracle_layout(_request(TIED_LM_NUMELS, TIED_LM_FROZEN, 4,
                                      settings, configs=configs))
    assert layout_json(got) == plain(expected)
    assert [(c.size, c.used, c.first_param, c.num_params)
            for c in got.groups[0].chunks] == [(48_000, 48_000, 1, 1),
                                               (4096, 2304 + 48, 2, 2)]


def test_module_with_explicit_frozen_overrides_requires_grad(client):
    require_torch()
    frozen = [False, True, False, False, False, False]  # the embedding
    got = client.layout(tied_lm(), configs={1: {"chunk_size": 60_000}},
                        frozen=frozen, timeout=TIMEOUT_S)
    configs = [{"dp_degree": 1, "chunk_size": 60_000,
                "keep_gathered": False}]
    expected = oracle_layout(_request(TIED_LM_NUMELS, frozen, 1, SETTINGS[0],
                                      configs=configs))
    assert layout_json(got) == plain(expected)
    assert got.most_loaded_rank.frozen_bytes == 2 * 48_000
