"""The layout oracle's sweep over every candidate chunk size at once.

The same next-fit rules as layout_oracle._place and the seed's waste as
layout_oracle._seed_waste, stepped parameter by parameter with one numpy
entry per candidate chunk size instead of one Python loop per candidate.
Only the totals a sweep needs are kept (not the chunks). The caller keeps
every figure below 2^62 (int64 arithmetic); layout_sweep_test.py holds
these equal to layout_oracle's per-candidate reference on random cases.
"""

import collections

import numpy as np

Totals = collections.namedtuple("Totals", "padding shards real_first largest")
# Per candidate, over the chunks of one non-gathered group of degree P:
# padding: sum of size - used; shards: sum of size / P; real_first: real
# elements of rank 0's shards (sum of min(used, size / P)); largest: the
# largest chunk size (0 without chunks).


def next_fit(numels, sizes, degree):
    """Totals of layout_oracle._place(params, C, degree) for every chunk
    size C in `sizes` (int64 array), the params' numels in visit order:
    a tensor joins the open chunk when used + numel <= size, else it opens
    a chunk of C, or of numel rounded up to the degree when numel > C."""
    zeros = np.zeros(len(sizes), dtype=np.int64)
    padding, shards, real_first, largest = (zeros.copy() for _ in range(4))
    size = used = None
    for numel in numels:
        opened = np.where(numel > sizes, numel + (-numel % degree), sizes)
        if size is None:  # the first tensor always opens a chunk
            size, used = opened, np.full(len(sizes), numel, dtype=np.int64)
        else:
            closed = used + numel > size
            shard = size // degree
            padding += np.where(closed, size - used, 0)
            shards += np.where(closed, shard, 0)
            real_first += np.where(closed, np.minimum(used, shard), 0)
            size = np.where(closed, opened, size)
            used = np.where(closed, numel, used + numel)
        largest = np.maximum(largest, size)
    if size is not None:  # the last chunk
        shard = size // degree
        padding += size - used
        shards += shard
        real_first += np.minimum(used, shard)
    return Totals(padding, shards, real_first, largest)


def seed_waste(swept, chunks):
    """layout_oracle._seed_waste at every chunk size in `chunks` (int64
    array): the seed's _get_unused_byte summed over the swept groups'
    sizes (`swept`: one list of sizes per group), as a list of ints."""
    total = np.zeros(len(chunks), dtype=np.int64)
    for sizes in swept:
        acc = np.zeros(len(chunks), dtype=np.int64)
        left = np.zeros(len(chunks), dtype=np.int64)
        for s in sizes:
            opens = s > left
            acc += np.where(opens, left, 0)
            left = np.where(opens, chunks, left) - s
        total += left + acc
    return [int(v) for v in total]
