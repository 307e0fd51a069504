"""Frontier's answer as Python values: Frontier and its FrontierPoints,
every count an int; Frontier.table() lays them out for people and
Frontier.plot() draws them.
"""

import dataclasses
from typing import Optional, Tuple

from chunkplan import model_report as _model_report
from chunkplan.layout_result import gib_text
from chunkplan.search_result import engine_name
from chunkplan.v1 import chunk_search_pb2


@dataclasses.dataclass(frozen=True)
class FrontierPoint:
    """One candidate of the search's grid with all three measures:
    `candidate` its index in the grid, `chunk_size` C' (the candidate
    rounded up to the lcm of the degrees: the size Gemini allocates),
    `value` the objective's measure (one of the three repeated),
    `seed_waste` the seed's waste at the candidate itself,
    `layout_padding` the layout's real padding at C' (elements) and
    `peak_rank_bytes` the most loaded rank's device bytes at C' plus the
    largest non-gathered chunk gathered whole."""
    candidate: int
    chunk_size: int
    value: int
    seed_waste: int
    layout_padding: int
    peak_rank_bytes: int


@dataclasses.dataclass(frozen=True)
class Frontier:
    """Every grid candidate whose objective value is a new strict minimum,
    in grid order (never empty from a server that answered); the last is
    the objective's best. engine: the engine that ran ("CPU_SWEEP",
    "CPU_PLATEAU", ...); candidates: the grid's size; search_nanos: time in
    the server's planner, RPC excluded."""
    points: Tuple[FrontierPoint, ...]
    engine: str
    candidates: int
    search_nanos: int
    response: chunk_search_pb2.FrontierResponse = dataclasses.field(
        repr=False, compare=False)
    # The LayoutRequest answered, where the Client kept it (for plot()).
    request: Optional[chunk_search_pb2.LayoutRequest] = dataclasses.field(
        default=None, repr=False, compare=False)
    # The server's ModelReport (the total, the model's warnings).
    model_report: Optional[_model_report.ModelReport] = None

    @property
    def best(self):
        """The objective's best candidate: the last point."""
        return self.points[-1]

    def table(self):
        """The answer for people, as text: the objective (with the request)
        and how the server searched, then one row per point: its candidate,
        chunk size C', the objective's value (elements, or bytes for
        peak_rank_bytes), ColossalAI's search's waste, the real padding and
        the most loaded rank's peak (device bytes and the gathered chunk)
        in GiB. The last row is the objective's best. Every figure is the
        server's."""
        objective = None
        if self.request is not None:
            objective = chunk_search_pb2.Objective.Name(
                self.request.objective).removeprefix("OBJECTIVE_").lower()
        unit = "bytes" if objective == "peak_rank_bytes" else "elements"
        lines = []
        if objective is not None:
            lines.append("objective       %s (the last row is its best)" %
                         objective)
        lines += ["engine          %s, %d candidates" % (self.engine,
                                                        self.candidates),
                  "",
                  "candidate  chunk size (elements)  %20s  search waste "
                  "(elements)  padding (elements)  peak rank GiB" %
                  ("value (%s)" % unit)]
        for p in self.points:
            lines.append("%9d  %21d  %20d  %23d  %18d  %13s" % (
                p.candidate, p.chunk_size, p.value, p.seed_waste,
                p.layout_padding, gib_text(p.peak_rank_bytes)))
        return "\n".join(lines) + "\n"

    def plot(self, path, pick=None, *, device_memory=None, title="",
             total_params=None, client=None, samples=None):
        """Draws this frontier to the PNG `path` (chunkplan.frontier_plot:
        padding and the most loaded rank's GiB against the chunk size in Mi
        elements) and returns the matplotlib Figure. pick: a FrontierPoint
        to mark as ColossalAI's pick (e.g. the best of a "seed_waste"
        frontier at GeminiPlugin's defaults), or None. device_memory:
        bytes of one device, drawn as a line. total_params: the parameter
        count padding is a share of (default: the numels of the request
        this answers). client: a Client or LocalClient to lay out a sample
        of the grid's candidates (`samples`, default
        frontier_curve.DEFAULT_SAMPLES, evenly spread, every point among
        them), drawn faintly under the frontier; None: the points alone.
        Raises frontier_plot.MatplotlibMissingError without matplotlib,
        ValueError without a total, OSError, and the client's
        ChunkplanError."""
        from chunkplan import frontier_curve, frontier_plot  # when drawing
        curve = None
        if client is not None:
            curve = frontier_curve.sample(
                client, self, samples or frontier_curve.DEFAULT_SAMPLES)
        if total_params is None and self.model_report is not None:
            total_params = self.model_report.total_param_size
        if total_params is None:  # a server older than model_report
            if self.request is None or not self.request.search.numels:
                raise ValueError("total_params: needed for a Frontier "
                                 "without its request's numels")
            total_params = sum(self.request.search.numels)
        return frontier_plot.plot(path, self, pick, total_params,
                                  title=title, device_memory=device_memory,
                                  curve=curve)

    @classmethod
    def from_response(cls, response, request=None):
        """The Frontier of a FrontierResponse: the engine by name without
        its "ENGINE_" prefix (an unknown number as its digits); `request`
        the LayoutRequest it answers, if known."""
        return cls(
            points=tuple(FrontierPoint(**{
                f.name: int(getattr(p, f.name))
                for f in dataclasses.fields(FrontierPoint)})
                for p in response.points),
            engine=engine_name(response.engine),
            candidates=int(response.candidates),
            search_nanos=int(response.search_nanos),
            response=response, request=request,
            model_report=_model_report.of(response))
