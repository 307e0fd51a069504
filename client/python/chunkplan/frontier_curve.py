"""The candidates behind a Frontier, for its picture: the real padding and
the most loaded rank's bytes (with the gathered buffer) at a sample of the
search's grid, each asked of Layout with given configs.

A Frontier holds only its points (the new strict minima), so a frontier of
one point says nothing of the curve it is the minimum of. Every candidate
C's two layout measures depend on C' alone (C rounded up to the lcm of the
degrees): they are Layout's layout_padding and most_loaded_rank.device_bytes
+ gathered_chunk_bytes for the search's configs with every group that is
not kept gathered at C' (docs/layout.md, tests/oracle/layout_oracle.py
objective_values). The kept-gathered groups are the search's own (Search's
configs), so nothing of the grid's rules is restated here.
For a request that names its model, Layout's gathered_chunk_bytes follows
the model's operations (docs/plan.md, "Gathered chunks") while the
frontier's points keep the objective's largest chunk: the sampled columns
then sit at or above the points' curve.

The grid's start is not in the answer: candidate i is start + i * interval
with start a multiple of the interval, and each point (i, C') bounds it.
Where the points leave more than one start (an interval below the lcm), a
candidate whose C' differs between them is left out of the sample.
"""

import dataclasses
import math
from typing import Tuple

from chunkplan.layout_result import Layout
from chunkplan.v1 import chunk_search_pb2

# Candidates sampled evenly over the grid (the frontier's points come too).
DEFAULT_SAMPLES = 200
# search_interval 0 with a `model`: GeminiPlugin's interval without a
# hidden_dim (chunkplan.v1.ChunkSearchRequest).
_MODEL_DEFAULT_INTERVAL = 1024


@dataclasses.dataclass(frozen=True)
class Curve:
    """Candidates of a Frontier's grid in grid order, one per distinct C':
    `candidate` the index, `chunk_size` C', `layout_padding` (elements) and
    `peak_rank_bytes` at C'. `sampled` candidates of the grid's
    `candidates` were asked for (equal: every candidate is drawn)."""
    candidate: Tuple[int, ...]
    chunk_size: Tuple[int, ...]
    layout_padding: Tuple[int, ...]
    peak_rank_bytes: Tuple[int, ...]
    sampled: int
    candidates: int

    @property
    def complete(self):
        """Whether every candidate of the grid is represented."""
        return self.sampled == self.candidates


def _round_up(size, step):
    return -(-size // step) * step


def _start_bounds(points, interval, lcm):
    """The least and the greatest grid start (a multiple of `interval`)
    that puts every point's candidate i at its C' (round_up(start + i *
    interval, lcm) == C'). Raises ValueError when none does."""
    above = max(p.chunk_size - lcm - p.candidate * interval for p in points)
    at_most = min(p.chunk_size - p.candidate * interval for p in points)
    least = (above // interval + 1) * interval
    greatest = at_most // interval * interval
    if least > greatest:
        raise ValueError("the frontier's points fit no grid of interval "
                         f"{interval} and degree lcm {lcm}")
    return least, greatest


def sample_indices(candidates, samples, points):
    """Up to `samples` candidate indices spread evenly over 0 ..
    candidates - 1 (both ends included; all when candidates <= samples),
    with every point's candidate, sorted."""
    if candidates <= samples:
        chosen = set(range(candidates))
    else:
        step = (candidates - 1) / max(samples - 1, 1)
        chosen = {round(k * step) for k in range(samples)}
    return sorted(chosen | {p.candidate for p in points})


def _request_at(frontier_request, search_configs, chunk_size):
    """The LayoutRequest of the frontier's at C' = chunk_size: its
    parameters, frozen flags and settings, the search's kept-gathered
    configs as they are and every other group at C'."""
    request = chunk_search_pb2.LayoutRequest()
    request.CopyFrom(frontier_request)
    request.objective = chunk_search_pb2.OBJECTIVE_SEED_WASTE
    request.search.search_range_m = 0  # given configs: nothing is swept
    request.search.search_interval = 1
    del request.configs[:]
    for config in search_configs:
        request.configs.add(
            dp_degree=config.dp_degree, keep_gathered=config.keep_gathered,
            chunk_size=(config.chunk_size if config.keep_gathered
                        else chunk_size))
    return request


def _pinned(frontier, samples):
    """(candidate, C') of sample_indices's candidates whose C' every grid
    start the points allow agrees on, in grid order, and the grid's
    search part."""
    search = frontier.request.search
    interval = search.search_interval or _MODEL_DEFAULT_INTERVAL
    lcm = math.lcm(*search.dp_degrees) if search.dp_degrees else 1
    least, greatest = _start_bounds(frontier.points, interval, lcm)
    pinned = []
    for i in sample_indices(frontier.candidates, samples, frontier.points):
        size = _round_up(least + i * interval, lcm)
        if size == _round_up(greatest + i * interval, lcm):
            pinned.append((i, size))
    return pinned


def sample(client, frontier, samples=DEFAULT_SAMPLES, timeout=None):
    """The Curve of `frontier` (a Frontier that carries its request) at
    sample_indices's candidates: one Search (the kept-gathered configs) and
    one Layout per distinct C' that is not a frontier point, through
    `client` (Client or LocalClient). Raises ValueError for a Frontier
    without its request, and the client's ChunkplanError."""
    if frontier.request is None:
        raise ValueError("the curve: needs a Frontier that carries its "
                         "request (from Client.frontier)")
    pinned = _pinned(frontier, samples)
    known = {p.chunk_size: p for p in frontier.points}
    configs = client.search_request(frontier.request.search,
                                    timeout=timeout).configs
    columns = {}
    for i, size in pinned:
        if size in columns:
            continue  # candidates sharing one C' share its values
        if size in known:
            columns[size] = (i, known[size].layout_padding,
                             known[size].peak_rank_bytes)
            continue
        layout = Layout.from_response(client.layout_request(
            _request_at(frontier.request, configs, size), timeout=timeout))
        columns[size] = (i, layout.layout_padding,
                         layout.most_loaded_rank.device_bytes +
                         layout.gathered_chunk_bytes)
    sizes = sorted(columns)
    return Curve(candidate=tuple(columns[s][0] for s in sizes),
                 chunk_size=tuple(sizes),
                 layout_padding=tuple(columns[s][1] for s in sizes),
                 peak_rank_bytes=tuple(columns[s][2] for s in sizes),
                 sampled=len(pinned), candidates=frontier.candidates)
