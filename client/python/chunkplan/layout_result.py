"""Layout's answer as Python values: Layout, its GroupLayouts and Chunks,
and the RankMemory of the most and least loaded rank, every count an int.
"""

import dataclasses
from typing import Optional, Tuple

from chunkplan import colossalai_export
from chunkplan.search_result import SearchResult
from chunkplan.v1 import chunk_search_pb2

GIB = 2**30


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
    and the least loaded (rank P - 1), and the bytes of the largest
    non-gathered chunk gathered whole (0 when all are kept gathered).
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
            activation_bytes=int(response.activation_bytes))


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
