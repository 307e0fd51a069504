"""A search's answer as Python values: SearchResult, from a
ChunkSearchResponse (Search's answer, or the search part of Layout's)."""

import dataclasses
from typing import Optional

from chunkplan import model_report as _model_report
from chunkplan import request as _request
from chunkplan.v1 import chunk_search_pb2


def engine_name(number):
    """An Engine number's name without its "ENGINE_" prefix ("CPU_PLATEAU",
    "CUDA", ...); a number the enum does not define, as its digits."""
    if number in chunk_search_pb2.Engine.values():
        return chunk_search_pb2.Engine.Name(number).removeprefix("ENGINE_")
    return str(number)


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """One search's answer. The first three fields are the seed's tuple
    (as_tuple()); the others say how the server found it."""
    config_dict: dict
    total_param_size: int
    min_chunk_waste: int
    engine: str          # the engine that ran: "CPU_PLATEAU", "CUDA", ...
    candidates: int      # chunk sizes in the sweep
    search_nanos: int    # time in the server's planner, RPC excluded
    response: chunk_search_pb2.ChunkSearchResponse = dataclasses.field(
        repr=False, compare=False)
    # The server's ModelReport (the total, the model's warnings); None
    # where the response has none.
    model_report: Optional[_model_report.ModelReport] = None

    def as_tuple(self):
        """(config_dict, total_param_size, min_chunk_waste), as the seed."""
        return self.config_dict, self.total_param_size, self.min_chunk_waste

    @classmethod
    def from_response(cls, response):
        """The SearchResult of a ChunkSearchResponse: the seed's tuple as
        request.config_tuple reads it, the engine by name without its
        "ENGINE_" prefix (an unknown number as its digits), counts as
        ints."""
        config_dict, total, waste = _request.config_tuple(response)
        return cls(config_dict=config_dict, total_param_size=total,
                   min_chunk_waste=waste,
                   engine=engine_name(response.engine),
                   candidates=int(response.candidates),
                   search_nanos=int(response.search_nanos),
                   response=response,
                   model_report=_model_report.of(response))
