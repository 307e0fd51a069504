#!/usr/bin/python3
"""The verdict oracle: one configuration judged against a cluster.

An independent Python statement of docs/plan.md, "The verdict" (issue 41),
written from that text, never from the C++ side. The plan oracle judges
every option with it and the layout oracle a Layout with a cluster; the
end-to-end tests of the command lines read their expected verdicts here.

    margin        the cluster's, or 0.05 where unset; a fraction in [0, 1)
    margin_bytes  min(D, ceil(margin * D)), the product in IEEE doubles
                  (D, the device memory, rounded to the nearest double)
    budget        D - margin_bytes
    fits          need <= budget, and the host holds its bytes per node
                  (host memory 0: not checked)
    tight         does not fit, need <= D, and the host holds: only the
                  margin is missing
    headroom      D - need, 0 when need > D
    why_not       "device: NEED > BUDGET by EXCESS" (+ " (device memory D
                  less margin M)" when M > 0), then "host: H > HM by E",
                  joined by "; "
"""

import collections
import math

DEFAULT_MARGIN = 0.05


class VerdictError(ValueError):
    """A margin the verdict refuses; the message names cluster.margin."""


def margin_of(margin):
    """The margin applied: `margin`, or DEFAULT_MARGIN for None."""
    return DEFAULT_MARGIN if margin is None else margin


def check_margin(margin):
    """Raises VerdictError unless margin is None or 0 <= margin < 1."""
    if margin is None:
        return
    if not (margin >= 0.0 and margin < 1.0):  # NaN fails both
        raise VerdictError(f"cluster.margin: {margin!r} is not in [0, 1)")


def margin_bytes(margin, memory):
    """min(memory, ceil(margin * memory)) with Python floats' product."""
    return min(memory, math.ceil(margin * float(memory)))


def judge(need, host, memory, reserve=0, margin=None, host_memory=0):
    """The Verdict message (proto field names, protobuf JSON: 64-bit
    integers as decimal strings) for a configuration that needs `need`
    device bytes a rank and `host` bytes a node."""
    applied = margin_of(margin)
    kept = margin_bytes(applied, memory)
    budget = memory - kept
    device_excess = max(0, need - budget)
    host_excess = max(0, host - host_memory) if host_memory else 0
    why = []
    if device_excess:
        part = f"device: {need} > {budget} by {device_excess}"
        if kept:
            part += f" (device memory {memory} less margin {kept})"
        why.append(part)
    if host_excess:
        why.append(f"host: {host} > {host_memory} by {host_excess}")
    fits = not why
    return collections.OrderedDict([
        ("device_need_bytes", str(need)),
        ("device_memory_bytes", str(memory)),
        ("reserve_bytes", str(reserve)),
        ("margin", applied),
        ("margin_bytes", str(kept)),
        ("headroom_bytes", str(max(0, memory - need))),
        ("device_excess_bytes", str(device_excess)),
        ("host_bytes_per_node", str(host)),
        ("host_memory_bytes", str(host_memory)),
        ("host_excess_bytes", str(host_excess)),
        ("fits", fits),
        ("tight", not fits and not host_excess and need <= memory),
        ("why_not", "; ".join(why)),
    ])


def rank_key(verdict):
    """(class, device excess, host excess): class 0 fits, 1 tight, 2 does
    not fit; the excesses order only the last class."""
    if verdict["fits"]:
        return (0, 0, 0)
    if verdict["tight"]:
        return (1, 0, 0)
    return (2, int(verdict["device_excess_bytes"]),
            int(verdict["host_excess_bytes"]))
