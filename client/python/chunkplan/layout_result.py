"""Layout's answer as Python values: Layout, its GroupLayouts and Chunks,
and the RankMemory of the most and least loaded rank, every count an int;
Layout.table() lays the server's fields out for people.
"""

import dataclasses
from typing import Optional, Tuple

from chunkplan import colossalai_export
from chunkplan import model_report as _model_report
from chunkplan.search_result import SearchResult
from chunkplan.v1 import chunk_search_pb2
from chunkplan.verdict_result import Verdict

GIB = 2**30


def gib_text(nbytes):
    """Bytes in GiB (2**30) with 2 decimals, as every table prints them."""
    return "%.2f" % (nbytes / GIB)


# The parts of a RankMemory, in table order, with their row names.
_PARTS = (("params", "param_bytes"), ("master weights", "master_bytes"),
          ("gradients", "grad_bytes"), ("optimizer states", "optimizer_bytes"),
          ("frozen", "frozen_bytes"), ("device total", "device_bytes"),
          ("pinned host", "pinned_host_bytes"),
          ("offloaded host", "offloaded_host_bytes"),
          ("host total", "host_bytes"))


@dataclasses.dataclass(frozen=True)
class Chunk:
    """One chunk as ChunkManager allocates it: `size` elements, `used` of
    them by real tensors, holding tensors first_param ..
    first_param + num_params - 1 (indices into the numels sent)."""
    size: int
    used: int
    first_param: int
    num_params: int

    @property
    def padding(self):
        """Elements allocated and not used: size - used."""
        return self.size - self.used


@dataclasses.dataclass(frozen=True)
class GroupLayout:
    """The chunks of one dp-degree group, in allocation order; `padding` is
    the sum of theirs."""
    dp_degree: int
    chunk_size: int
    keep_gathered: bool
    chunks: Tuple[Chunk, ...]
    padding: int


@dataclasses.dataclass(frozen=True)
class RankMemory:
    """The bytes one rank holds, by part; device_bytes is the sum of the
    first five; pinned_host_bytes, offloaded_host_bytes (what the placement
    keeps on the host beyond the pinned copies) and their sum host_bytes
    are host memory."""
    param_bytes: int
    master_bytes: int
    grad_bytes: int
    optimizer_bytes: int
    frozen_bytes: int
    device_bytes: int
    pinned_host_bytes: int
    offloaded_host_bytes: int = 0
    host_bytes: int = 0

    def gib(self, part):
        """The bytes of `part` (a field name, e.g. "device_bytes") in GiB
        (2**30 bytes), as a float."""
        return getattr(self, part) / GIB


@dataclasses.dataclass(frozen=True)
class PlacementOutcome:
    """What the placement policy did (docs/placement.md): chunks whose
    optimizer side is on the host, the least and the most over every chunk
    order; the share of the non-gathered fp16 bytes that is; chunks kept
    whole at run time (shard_param_frac) and whose fp16 shard is on the host
    (offload_param_frac); and the notes, in words."""
    offloaded_chunks: int = 0
    offloaded_chunks_max: int = 0
    effective_offload_optim_frac: float = 0.0
    gathered_at_run_time: int = 0
    param_offloaded_chunks: int = 0
    notes: Tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Layout:
    """What Gemini allocates: the groups in config order, their padding
    summed (layout_padding), the most loaded rank (rank 0 of every group)
    and the least loaded (rank P - 1), and the bytes the chunks gathered
    while the model computes add at their peak, and how many chunk buffers
    (docs/plan.md, "Gathered chunks"; 0 when all are kept gathered).
    `search` is the search's answer when the search ran, None with given
    configs."""
    groups: Tuple[GroupLayout, ...]
    layout_padding: int
    most_loaded_rank: RankMemory
    least_loaded_rank: RankMemory
    gathered_chunk_bytes: int
    search: Optional[SearchResult]
    response: chunk_search_pb2.LayoutResponse = dataclasses.field(
        repr=False, compare=False)
    # The LayoutRequest answered, where the Client kept it (its GeminiPlugin
    # settings, for colossalai_kwargs()).
    request: Optional[chunk_search_pb2.LayoutRequest] = dataclasses.field(
        default=None, repr=False, compare=False)
    # The most loaded rank under the most favourable chunk order (issue 27;
    # most_loaded_rank is the worst), and the placement's outcome.
    most_loaded_rank_least: Optional[RankMemory] = None
    placement: PlacementOutcome = PlacementOutcome()
    # The activation ESTIMATE per rank for the request's workload (0
    # without one; docs/plan.md); not in most_loaded_rank.
    activation_bytes: int = 0
    # The server's verdict on the layout against the request's cluster
    # (Client.layout(cluster=...)); None without one.
    verdict: Optional[Verdict] = None
    # The chunk buffers held at gathered_chunk_bytes' peak.
    gathered_chunks: int = 0
    # The server's ModelReport (the total, the model's warnings).
    model_report: Optional[_model_report.ModelReport] = None

    @property
    def fits(self):
        """The server's verdict.fits; None when no cluster was given."""
        return None if self.verdict is None else self.verdict.fits

    @property
    def config_dict(self):
        """The configs laid out, in the seed's config_dict shape and order:
        {dp_degree: {"chunk_size": int, "keep_gathered": bool}}."""
        return {g.dp_degree: {"chunk_size": g.chunk_size,
                              "keep_gathered": g.keep_gathered}
                for g in self.groups}

    def colossalai_kwargs(self):
        """GeminiPlugin's keyword arguments for this layout:
        chunk_config_dict (config_dict) and the settings it was computed
        with (precision, master_weights, enable_gradient_accumulation,
        pin_memory), so that GeminiPlugin(**layout.colossalai_kwargs())
        allocates what this Layout describes. Raises ValueError for a
        Layout without its request (from_response without one)."""
        if self.request is None:
            raise ValueError("colossalai_kwargs: this Layout does not carry "
                             "its request's settings")
        return colossalai_export.gemini_plugin_kwargs(self.config_dict,
                                                      self.request.gemini)

    def table(self):
        """The answer for people, as text: per group its degree, chunk size,
        keep gathered, chunks and padding; the layout's padding beside
        ColossalAI's search's waste; every part of the most loaded rank
        (worst and best chunk order) and the least loaded rank in GiB; the
        gathered chunk; the activation ESTIMATE with a workload; the
        placement's outcome and notes; with a cluster, the server's verdict
        (Verdict.lines: need, memory and margin, headroom, host, words).
        Every figure is the server's."""
        lines = ["dp degree  chunk size (elements)  keep gathered  chunks  "
                 "padding (elements)"]
        for group in self.groups:
            lines.append("%9d  %21d  %13s  %6d  %18d" % (
                group.dp_degree, group.chunk_size,
                "yes" if group.keep_gathered else "no", len(group.chunks),
                group.padding))
        lines += ["", "layout padding  %d elements (allocated as padding)" %
                  self.layout_padding]
        if self.search is not None:
            lines.append("search waste    %d elements (ColossalAI's search's "
                         "min_chunk_waste)" % self.search.min_chunk_waste)
        lines += ["", "GiB               most loaded rank  (best order)  "
                  "least loaded rank"]
        best = self.most_loaded_rank_least or self.most_loaded_rank
        for name, part in _PARTS:
            lines.append("%-16s  %16s  %12s  %17s" % (
                name, gib_text(getattr(self.most_loaded_rank, part)),
                gib_text(getattr(best, part)),
                gib_text(getattr(self.least_loaded_rank, part))))
        lines += ["", "gathered chunks %s GiB, %d chunks at the peak "
                  "(docs/plan.md, \"Gathered chunks\")" %
                  (gib_text(self.gathered_chunk_bytes), self.gathered_chunks)]
        if self.activation_bytes:
            lines.append("activations     %s GiB per rank, an ESTIMATE "
                         "(docs/plan.md)" % gib_text(self.activation_bytes))
        p = self.placement
        lines.append("offloaded       %d .. %d chunks (least .. most over "
                     "every chunk order), %.1f%% of the fp16 chunk bytes" % (
                         p.offloaded_chunks, p.offloaded_chunks_max,
                         100 * p.effective_offload_optim_frac))
        if p.gathered_at_run_time:
            lines.append("gathered        %d chunks kept whole at run time" %
                         p.gathered_at_run_time)
        if p.param_offloaded_chunks:
            lines.append("fp16 on host    %d chunks" %
                         p.param_offloaded_chunks)
        lines += ["note            %s" % note for note in p.notes]
        if self.verdict is not None:
            lines += [""] + self.verdict.lines()
        return "\n".join(lines) + "\n"

    def plot(self, path, title=""):
        """Draws this layout's device need to the PNG `path`
        (chunkplan.verdict_plot: one stacked bar, with the device memory
        and the margin where a cluster was given) and returns the
        matplotlib Figure. Raises frontier_plot.MatplotlibMissingError
        without matplotlib, OSError."""
        from chunkplan import verdict_plot  # when drawing
        return verdict_plot.plot(path, verdict_plot.layout_bars(self),
                                 self.verdict, title)

    @classmethod
    def from_response(cls, response, request=None):
        """The Layout of a LayoutResponse (search set only where the
        response carries one); `request` the LayoutRequest it answers, if
        known."""
        return cls(
            groups=tuple(_group(g) for g in response.groups),
            layout_padding=int(response.layout_padding),
            most_loaded_rank=rank_memory(response.most_loaded_rank),
            least_loaded_rank=rank_memory(response.least_loaded_rank),
            gathered_chunk_bytes=int(response.gathered_chunk_bytes),
            search=(SearchResult.from_response(response.search)
                    if response.HasField("search") else None),
            response=response, request=request,
            most_loaded_rank_least=rank_memory(
                response.most_loaded_rank_least),
            placement=_placement(response.placement),
            activation_bytes=int(response.activation_bytes),
            gathered_chunks=int(response.gathered_chunks),
            verdict=(Verdict.from_response(response.verdict)
                     if response.HasField("verdict") else None),
            model_report=_model_report.of(response))


def _placement(p):
    return PlacementOutcome(
        offloaded_chunks=int(p.offloaded_chunks),
        offloaded_chunks_max=int(p.offloaded_chunks_max),
        effective_offload_optim_frac=float(p.effective_offload_optim_frac),
        gathered_at_run_time=int(p.gathered_at_run_time),
        param_offloaded_chunks=int(p.param_offloaded_chunks),
        notes=tuple(p.notes))


def _group(group):
    return GroupLayout(
        dp_degree=int(group.dp_degree), chunk_size=int(group.chunk_size),
        keep_gathered=bool(group.keep_gathered),
        chunks=tuple(Chunk(size=int(c.size), used=int(c.used),
                           first_param=int(c.first_param),
                           num_params=int(c.num_params))
                     for c in group.chunks),
        padding=int(group.padding))


def rank_memory(rank):
    """The RankMemory of a chunkplan.v1.RankMemory message."""
    return RankMemory(**{f.name: int(getattr(rank, f.name))
                         for f in dataclasses.fields(RankMemory)})
