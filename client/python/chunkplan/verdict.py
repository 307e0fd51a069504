"""Whether a layout fits a device and a node: the figures every command
names the same way, with Plan's definitions (docs/plan.md, "The search,
exactly").

    device need   = the most loaded rank's device bytes (its worst chunk
                    order) + the gathered chunk + the reserve
                    (+ the activation ESTIMATE, where the request has a
                    workload: Layout's activation_bytes, Plan's)
    host per node = min(gpus_per_node, world size) x the most loaded rank's
                    host bytes, the larger over the two extreme chunk orders

A device fits when its need is within the device memory; a node when its
host bytes are within the host memory. `why_not` is worded as Plan's.
"""

import dataclasses
from typing import Optional

from chunkplan.layout_result import GIB


def gib(nbytes):
    """Bytes in GiB (2**30) with 2 decimals, as every table prints them."""
    return "%.2f" % (nbytes / GIB)


def device_need_bytes(layout, reserve_bytes=0):
    """The device need of a Layout: most_loaded_rank.device_bytes +
    gathered_chunk_bytes + reserve_bytes + activation_bytes (0 without a
    workload)."""
    return (layout.most_loaded_rank.device_bytes +
            layout.gathered_chunk_bytes + reserve_bytes +
            layout.activation_bytes)


def host_bytes_per_node(layout, gpus_per_node, world_size):
    """min(gpus_per_node, world_size) x the larger of the most loaded
    rank's host bytes under its worst and its best chunk order."""
    best = layout.most_loaded_rank_least or layout.most_loaded_rank
    return min(gpus_per_node, world_size) * max(
        layout.most_loaded_rank.host_bytes, best.host_bytes)


@dataclasses.dataclass(frozen=True)
class Verdict:
    """The figures of a fit: device_need_bytes (reserve_bytes and
    activation_bytes included) and, where known, the device memory, host
    bytes per node and host memory (None where not given)."""
    device_need_bytes: int
    reserve_bytes: int = 0
    device_memory_bytes: Optional[int] = None
    host_bytes_per_node: Optional[int] = None
    host_memory_bytes: Optional[int] = None
    # The activation ESTIMATE of a workload (0: none given).
    activation_bytes: int = 0

    @property
    def checked(self):
        """True when there is a budget to hold a figure against."""
        return (self.device_memory_bytes is not None or
                self.host_memory_bytes is not None)

    @property
    def device_headroom_bytes(self):
        """device memory - device need (negative: the shortfall), or
        None without a device memory."""
        if self.device_memory_bytes is None:
            return None
        return self.device_memory_bytes - self.device_need_bytes

    @property
    def host_headroom_bytes(self):
        """host memory - host per node (negative: the shortfall), or None
        without both."""
        if self.host_memory_bytes is None or self.host_bytes_per_node is None:
            return None
        return self.host_memory_bytes - self.host_bytes_per_node

    @property
    def why_not(self):
        """"" when every given budget holds its figure; else the failing
        parts, device first, joined by "; ", as Plan words them:
        "device: NEED > MEMORY by EXCESS" (decimal bytes)."""
        parts = []
        for name, need, budget in (
                ("device", self.device_need_bytes, self.device_memory_bytes),
                ("host", self.host_bytes_per_node, self.host_memory_bytes)):
            if budget is not None and need is not None and need > budget:
                parts.append("%s: %d > %d by %d" % (name, need, budget,
                                                    need - budget))
        return "; ".join(parts)

    @property
    def fits(self):
        """Every given budget holds its figure (True with none given)."""
        return not self.why_not

    def to_json(self):
        """The verdict for --format json, in protobuf JSON's style (64-bit
        integers as strings): device_need_bytes and reserve_bytes always;
        activation_bytes with a workload; each budget, its headroom, `fits`
        and `why_not` where given."""
        out = {"device_need_bytes": str(self.device_need_bytes),
               "reserve_bytes": str(self.reserve_bytes)}
        if self.activation_bytes:
            out["activation_bytes"] = str(self.activation_bytes)
        if self.host_bytes_per_node is not None:
            out["host_bytes_per_node"] = str(self.host_bytes_per_node)
        if self.device_memory_bytes is not None:
            out["device_memory_bytes"] = str(self.device_memory_bytes)
            out["device_headroom_bytes"] = str(self.device_headroom_bytes)
        if self.host_headroom_bytes is not None:
            out["host_memory_bytes"] = str(self.host_memory_bytes)
            out["host_headroom_bytes"] = str(self.host_headroom_bytes)
        if self.checked:
            out["fits"] = self.fits
            out["why_not"] = self.why_not
        return out


def of_layout(layout, world_size, reserve_bytes=0, device_memory_bytes=None,
              gpus_per_node=None, host_memory_bytes=None):
    """The Verdict of a Layout whose parameters are all at `world_size`:
    host per node only with gpus_per_node, held against host_memory_bytes
    where given."""
    host = (None if gpus_per_node is None else
            host_bytes_per_node(layout, gpus_per_node, world_size))
    return Verdict(device_need_bytes(layout, reserve_bytes), reserve_bytes,
                   device_memory_bytes, host, host_memory_bytes,
                   layout.activation_bytes)


def verdict_word(judged):
    """"fits" or "does not fit"."""
    return "fits" if judged.fits else "does not fit"


def table_lines(judged, gathered_chunk_bytes, gpus_per_node=None,
                world_size=None):
    """The lines of one layout's table that name its figures (gathered
    chunk, reserve, device need, the budgets with their headroom, host per
    node) and, where a budget is given, the verdict with Plan's why_not."""
    lines = ["gathered chunk  %s GiB (the largest chunk not kept gathered, "
             "gathered whole while it computes)" % gib(gathered_chunk_bytes),
             "reserve         %s GiB (--reserve: the CUDA context and "
             "workspace)" % gib(judged.reserve_bytes)]
    lines += activation_lines(judged.activation_bytes)
    lines.append("device need     %s GiB (%s)" % (
        gib(judged.device_need_bytes), device_need_words(
            judged.activation_bytes)))
    if judged.device_memory_bytes is not None:
        lines.append("device memory   %s GiB, headroom %s GiB" % (
            gib(judged.device_memory_bytes),
            gib(judged.device_headroom_bytes)))
    if judged.host_bytes_per_node is not None:
        lines.append("host per node   %s GiB (%d ranks: %s)" % (
            gib(judged.host_bytes_per_node),
            min(gpus_per_node, world_size), HOST_PER_NODE))
    if judged.host_headroom_bytes is not None:
        lines.append("host memory     %s GiB per node, headroom %s GiB" % (
            gib(judged.host_memory_bytes), gib(judged.host_headroom_bytes)))
    if judged.checked:
        lines.append("verdict         " + (verdict_word(judged) if judged.fits
                                           else "does not fit: " +
                                           judged.why_not))
    return lines


# The definitions, in the words every table uses.
DEVICE_NEED = ("the most loaded rank's device total, worst chunk order, + "
               "the gathered chunk + the reserve")


def device_need_words(activation_bytes=0):
    """DEVICE_NEED, with "+ the activations" when a workload's estimate
    is counted."""
    return DEVICE_NEED + (" + the activations" if activation_bytes else "")


def activation_lines(activation_bytes):
    """The line naming a workload's activation estimate ([] without
    one)."""
    if not activation_bytes:
        return []
    return ["activations     %s GiB per rank, an ESTIMATE (docs/plan.md)" %
            gib(activation_bytes)]
HOST_PER_NODE = ("min(GPUs per node, dp) x the most loaded rank's host "
                 "total, the larger over its chunk orders")


def budget_lines(reserve_bytes, device_memory_bytes=None, gpus_per_node=None,
                 host_memory_bytes=None, activation_bytes=0):
    """The lines above a table of rows: the budgets given, a workload's
    activation estimate and what "device need" and "host per node"
    count."""
    lines = []
    if device_memory_bytes is not None:
        lines.append("device memory   %s GiB" % gib(device_memory_bytes))
    lines.append("reserve         %s GiB" % gib(reserve_bytes))
    lines += activation_lines(activation_bytes)
    lines.append("device need     " + device_need_words(activation_bytes))
    if gpus_per_node is not None:
        lines.append("host per node   " + HOST_PER_NODE.replace(
            "GPUs per node", "%d GPUs per node" % gpus_per_node))
    if host_memory_bytes is not None:
        lines.append("host memory     %s GiB per node" %
                     gib(host_memory_bytes))
    return lines


def row_columns(device_memory_bytes=None, gpus_per_node=None,
                host_memory_bytes=None):
    """[(title, cell)] of the columns a row adds for the budgets given:
    cell(Verdict) is the text, right-aligned under its title; the verdict
    column, where any budget is given, is last (see row_cells)."""
    columns = []
    if gpus_per_node is not None:
        columns.append(("host per node GiB",
                        lambda v: gib(v.host_bytes_per_node)))
    if device_memory_bytes is not None:
        columns.append(("headroom GiB",
                        lambda v: gib(v.device_headroom_bytes)))
    if host_memory_bytes is not None:
        columns.append(("host headroom GiB",
                        lambda v: gib(v.host_headroom_bytes)))
    if device_memory_bytes is not None or host_memory_bytes is not None:
        columns.append(("verdict", verdict_word))
    return columns


def row_cells(columns, judged):
    """The text row_columns' columns add to a row for `judged`: each
    right-aligned under its title, the verdict as it is (it is last)."""
    return "".join("  " + (cell(judged) if title == "verdict" else
                           cell(judged).rjust(len(title)))
                   for title, cell in columns)
