"""Expected frontiers for the client's tests: tests/oracle/layout_oracle.py's
frontier() (brute force over every candidate, an independent statement of
issue 13's rules), and fresh random small Frontier cases, each as the
client's arguments and as the LayoutRequest dict the oracle takes. Nothing
here comes from chunkplan's own output.

A case is (args, kwargs, request): Client.frontier(*args, **kwargs) and
layout_oracle.frontier(request) describe the same frontier, and
Client.layout(*args, **kwargs) layout_oracle.layout(request).
"""

from layout_cases import (SETTINGS, _degrees, _frozen, _params,
                          gemini_json, layout_oracle, oracle_answer)

# Client.frontier's objective names, in chunkplan.v1.Objective order.
OBJECTIVES = ("seed_waste", "layout_padding", "peak_rank_bytes")


def objective_json(objective):
    """An objective keyword as the oracle's enum name."""
    return "OBJECTIVE_" + objective.upper()


def oracle_frontier(request):
    """The oracle's FrontierResponse dict (points and candidates, uint64 as
    strings); raises AssertionError carrying the oracle's error."""
    return oracle_answer(layout_oracle.frontier, request)


def oracle_frontier_error(request):
    """The oracle's error text for a Frontier request it rejects, else
    None."""
    return layout_oracle.frontier(request).get("error")


def frontier_json(frontier):
    """A typed Frontier in the oracle's shape (no engine, no nanos),
    asserting on the way that every count is a plain int."""
    def count(value):
        assert type(value) is int, value
        return str(value)
    return {"points": [{"candidate": count(p.candidate),
                        "chunk_size": count(p.chunk_size),
                        "value": count(p.value),
                        "seed_waste": count(p.seed_waste),
                        "layout_padding": count(p.layout_padding),
                        "peak_rank_bytes": count(p.peak_rank_bytes)}
                       for p in frontier.points],
            "candidates": count(frontier.candidates)}


def _numel(rng):
    """Mostly below the chunk sizes swept, so that the groups fill several
    chunks and the measures move with the size; a few zeros and larger
    tensors."""
    roll = rng.random()
    if roll < 0.05:
        return 0
    if roll < 0.08:
        return rng.randint(200_000, 400_000)
    if roll < 0.25:
        return rng.randint(1, 64)
    return rng.randint(1, 120_000)


def random_case(rng, objective):
    """One random searched case (args, kwargs, request) for `objective`,
    small for the brute-force oracle: at most 40 parameters and 257
    candidates (about 10,000 placements). The engine is "auto",
    "cpu_sweep" or "cpu_plateau": each serves every objective."""
    n = rng.randint(1, 40)
    numels = [_numel(rng) for _ in range(n)]
    if not any(numels):
        numels[0] = 1  # the search refuses a total of 0
    degrees, shared = _degrees(rng, n)
    # Mostly several candidates and groups that are swept (a grid of one,
    # or every group kept gathered, has a frontier of one point).
    search = dict(search_range_m=rng.choice([0, 0.0625, 0.125, 0.125]),
                  search_interval=rng.choice([512, 777, 1024]),
                  min_chunk_size_m=rng.choice([0, 0, 0.01, 0.05, 0.05, 32]),
                  filter_exlarge_params=rng.random() < 0.7)
    engines = ["auto", "cpu_sweep", "cpu_plateau"]
    settings = rng.choice(SETTINGS)
    frozen = _frozen(rng, n)
    kwargs = dict(search, dp_degree=shared, frozen=frozen,
                  objective=objective, engine=rng.choice(engines), **settings)
    request = {"search": {"numels": numels, "dp_degrees": degrees, **search},
               "frozen": frozen or [], "gemini": gemini_json(settings),
               "objective": objective_json(objective)}
    return (_params(numels, degrees, shared),), kwargs, request
