"""The server's verdict (chunkplan.v1.Verdict) as a Python value, rendered
as it comes: every field is the server's, nothing is recomputed here
(docs/plan.md, "The verdict"). Plan's options and a Layout asked with a
cluster carry one.
"""

import dataclasses

from chunkplan.v1 import chunk_search_pb2

GIB = 2**30


@dataclasses.dataclass(frozen=True)
class Verdict:
    """Whether a configuration fits, as the server judged it.

    device_need_bytes: what the most loaded rank needs (worst chunk order,
    + the gathered chunk + the reserve + the activation estimate) against
    device_memory_bytes; reserve_bytes, its share of it; margin, the share
    of device memory kept free (0.05 unless the cluster said otherwise),
    margin_bytes in bytes; headroom_bytes, memory less need (0 beyond it);
    device_excess_bytes, need beyond memory less margin; host_bytes_per_node
    against host_memory_bytes (0: not checked) and host_excess_bytes.
    fits: the need leaves the margin free and the node holds the host
    bytes; tight: it does not fit only because it eats into the margin;
    why_not: the server's words ("" when it fits)."""
    device_need_bytes: int
    device_memory_bytes: int
    reserve_bytes: int
    margin: float
    margin_bytes: int
    headroom_bytes: int
    device_excess_bytes: int
    host_bytes_per_node: int
    host_memory_bytes: int
    host_excess_bytes: int
    fits: bool
    tight: bool
    why_not: str
    response: chunk_search_pb2.Verdict = dataclasses.field(
        repr=False, compare=False)

    @property
    def words(self):
        """"fits", "does not fit (tight): <why_not>" or "does not fit:
        <why_not>", as every client prints it."""
        if self.fits:
            return "fits"
        return ("does not fit (tight): " if self.tight else
                "does not fit: ") + self.why_not

    @property
    def margin_words(self):
        """"margin 5% (4.00 GiB)": the margin applied, as a percentage (up
        to 4 significant digits) and in GiB."""
        return "margin %.4g%% (%.2f GiB)" % (100 * self.margin,
                                             self.margin_bytes / GIB)

    def lines(self):
        """The verdict as a table's lines: device need, device memory with
        the margin, headroom, host bytes per node and host memory where
        counted, then the words."""
        lines = ["device need     %.2f GiB (the most loaded rank's device "
                 "total, worst chunk order, + the gathered chunk + the "
                 "reserve %.2f GiB + the activations)" % (
                     self.device_need_bytes / GIB, self.reserve_bytes / GIB),
                 "device memory   %.2f GiB, %s kept free" % (
                     self.device_memory_bytes / GIB, self.margin_words),
                 "headroom        %.2f GiB" % (self.headroom_bytes / GIB)]
        if self.host_bytes_per_node:
            lines.append("host per node   %.2f GiB" %
                         (self.host_bytes_per_node / GIB))
        if self.host_memory_bytes:
            lines.append("host memory     %.2f GiB per node" %
                         (self.host_memory_bytes / GIB))
        lines.append("verdict         " + self.words)
        return lines

    @classmethod
    def from_response(cls, verdict):
        """The Verdict of a chunkplan.v1.Verdict message."""
        return cls(
            **{f.name: _value(f, getattr(verdict, f.name))
               for f in dataclasses.fields(cls) if f.name != "response"},
            response=verdict)


def _value(field, value):
    """A message field's value as the dataclass field's type."""
    if field.type is int:
        return int(value)
    if field.type is float:
        return float(value)
    if field.type is bool:
        return bool(value)
    return value
