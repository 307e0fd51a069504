"""Plan's answer as Python values: Plan and its PlanOptions, ranked (the
ones that fit first), every count an int (docs/plan.md).

    plan = client.plan(chunkplan.models.model_config("config.json"),
                       device_memory_bytes=80 << 30, world_sizes=[8, 16],
                       gpus_per_node=8, host_memory_bytes=1 << 40)
    print(plan.table())                            # one row per option
    GeminiPlugin(**plan.options[0].colossalai_kwargs())
"""

import ast
import dataclasses
from typing import Optional, Tuple

from chunkplan import model_report as _model_report
from chunkplan.layout_result import RankMemory, gib_text, rank_memory
from chunkplan.v1 import chunk_search_pb2
from chunkplan.verdict_result import Verdict


def colossalai_kwargs(text):
    """The keyword arguments of `text` (GeminiPlugin's, as Python source:
    'placement_policy="static", ..., chunk_config_dict={8: {...}}') as a
    dict, in their order; every value a literal (ast.literal_eval: nothing
    is executed). Raises ValueError for text that is not keyword arguments
    of literals."""
    try:
        call = ast.parse("f(%s)" % text, mode="eval").body
    except SyntaxError as error:
        raise ValueError(f"not keyword arguments: {text!r}") from error
    if not isinstance(call, ast.Call) or call.args or any(
            k.arg is None for k in call.keywords):
        raise ValueError(f"not keyword arguments only: {text!r}")
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def _placement(gemini):
    """"static" or "auto", GeminiPlugin's placement_policy."""
    return chunk_search_pb2.Placement.Name(gemini.placement).removeprefix(
        "PLACEMENT_").lower()


@dataclasses.dataclass(frozen=True)
class PlanOption:
    """One configuration Plan weighed: a world size on `nodes` nodes (the
    server's ceil(world size / GPUs per node)), its chunk configs
    (config_dict, chosen by `objective` over the grid `chunk_size_from`:
    "colossalai_search", "peak_rank_bytes" or "peak_rank_bytes_wide") and a
    placement ("static" with its three fractions, or "auto"); the most
    loaded rank (worst chunk order), the gathered chunk, the activation
    ESTIMATE (0 without a workload), device_need_bytes (their sum with the
    reserve: what the verdict holds against the device), host_bytes_per_node,
    layout_padding; `verdict`, the server's (fits, tight, headroom, margin,
    why_not: Verdict), with `fits` and `why_not` ("" when it fits) its
    own; `colossalai`, GeminiPlugin's keyword arguments as Python text;
    `notes` in words."""
    world_size: int
    nodes: int
    placement: str
    shard_param_frac: float
    offload_optim_frac: float
    offload_param_frac: float
    config_dict: dict
    objective: str
    chunk_size_from: str
    most_loaded_rank: RankMemory
    gathered_chunk_bytes: int
    activation_bytes: int
    device_need_bytes: int
    host_bytes_per_node: int
    layout_padding: int
    fits: bool
    why_not: str
    colossalai: str
    notes: Tuple[str, ...]
    verdict: Verdict
    response: chunk_search_pb2.PlanOption = dataclasses.field(
        repr=False, compare=False)
    # The chunk buffers held at gathered_chunk_bytes' peak.
    gathered_chunks: int = 0
    # The ESTIMATE of backward's largest transient above activation_bytes
    # (0 without a workload), counted in device_need_bytes.
    transient_bytes: int = 0

    @property
    def tight(self):
        """Whether it does not fit only because it eats into the margin
        (the server's verdict.tight)."""
        return self.verdict.tight

    def colossalai_kwargs(self):
        """GeminiPlugin's keyword arguments of this option, parsed from its
        `colossalai` text: placement_policy, the fractions (static),
        precision, master_weights, enable_gradient_accumulation,
        pin_memory and chunk_config_dict, so that
        GeminiPlugin(**option.colossalai_kwargs()) is the option. Raises
        ValueError for a text that is not keyword arguments of literals."""
        return colossalai_kwargs(self.colossalai)

    @property
    def placement_text(self):
        """The placement in a few words: "auto", "static", or "static,
        optim 0.25" / "static, optim 1, param 0.5" with the fractions that
        move something (shard_param_frac where not 1)."""
        if self.placement != "static":
            return self.placement
        parts = ["static"]
        for name, value, idle in (("shard", self.shard_param_frac, 1.0),
                                  ("optim", self.offload_optim_frac, 0.0),
                                  ("param", self.offload_param_frac, 0.0)):
            if value != idle:
                parts.append("%s %.6g" % (name, value))
        return ", ".join(parts)

    @classmethod
    def from_response(cls, option):
        """The PlanOption of a chunkplan.v1.PlanOption."""
        gemini = option.gemini
        verdict = _verdict(option)
        return cls(
            world_size=int(option.world_size), nodes=int(option.nodes),
            placement=_placement(gemini),
            shard_param_frac=(gemini.shard_param_frac
                              if gemini.HasField("shard_param_frac")
                              else 1.0),
            offload_optim_frac=gemini.offload_optim_frac,
            offload_param_frac=gemini.offload_param_frac,
            config_dict={int(c.dp_degree): {
                "chunk_size": int(c.chunk_size),
                "keep_gathered": bool(c.keep_gathered)}
                for c in option.configs},
            objective=chunk_search_pb2.Objective.Name(
                option.objective).removeprefix("OBJECTIVE_").lower(),
            chunk_size_from=option.chunk_size_from,
            most_loaded_rank=rank_memory(option.most_loaded_rank),
            gathered_chunk_bytes=int(option.gathered_chunk_bytes),
            activation_bytes=int(option.activation_bytes),
            transient_bytes=int(option.transient_bytes),
            device_need_bytes=int(option.device_need_bytes),
            host_bytes_per_node=int(option.host_bytes_per_node),
            layout_padding=int(option.layout_padding),
            fits=verdict.fits, why_not=verdict.why_not,
            colossalai=option.colossalai, notes=tuple(option.notes),
            verdict=verdict, response=option,
            gathered_chunks=int(option.gathered_chunks))


def _verdict(option):
    """The option's Verdict as the server sent it; from its own fits and
    why_not where a server before issue 41 sent none (no margin then)."""
    if option.HasField("verdict"):
        return Verdict.from_response(option.verdict)
    return Verdict.from_response(chunk_search_pb2.Verdict(
        device_need_bytes=option.device_need_bytes,
        host_bytes_per_node=option.host_bytes_per_node, fits=option.fits,
        why_not=option.why_not))


# The table's first columns: (title, the cell of the i-th option); the
# device need, host per node and verdict follow (Plan.table). The columns
# in _LEFT are left-aligned.
_COLUMNS = (
    ("option", lambda i, o: "%d" % i),
    ("world size", lambda i, o: "%d" % o.world_size),
    ("nodes", lambda i, o: "%d" % o.nodes),
    ("placement", lambda i, o: o.placement_text),
    ("chunk size (elements)", lambda i, o: ", ".join(
        "%d%s" % (c["chunk_size"], " kept" if c["keep_gathered"] else "")
        for c in o.config_dict.values())),
    ("chunk size from", lambda i, o: o.chunk_size_from),
)
_LEFT = (3, 5)


@dataclasses.dataclass(frozen=True)
class Plan:
    """Plan's ranked options (at most the request's max_options), how many
    it weighed (options_considered) and its time in the server's planner
    (plan_nanos, RPC excluded). `request`: the PlanRequest answered, where
    the client kept it (its cluster and workload, for table())."""
    options: Tuple[PlanOption, ...]
    options_considered: int
    plan_nanos: int
    response: chunk_search_pb2.PlanResponse = dataclasses.field(
        repr=False, compare=False)
    request: Optional[chunk_search_pb2.PlanRequest] = dataclasses.field(
        default=None, repr=False, compare=False)
    # The server's ModelReport (the total, the model's warnings).
    model_report: Optional[_model_report.ModelReport] = None

    @property
    def best(self):
        """The first option (the one to take when it fits), or None when
        there is none."""
        return self.options[0] if self.options else None

    def colossalai_kwargs(self):
        """GeminiPlugin's keyword arguments of the first option
        (PlanOption.colossalai_kwargs), whether or not it fits (best.fits
        says). Raises ValueError when the plan has no option."""
        if self.best is None:
            raise ValueError("colossalai_kwargs: the plan has no option")
        return self.best.colossalai_kwargs()

    def table(self):
        """The answer for people, as text: the cluster (with the request)
        and the margin the server applied, one row per option (rank, world
        size, placement and fractions, chunk size and where it came from,
        device need / device memory, headroom and host bytes per node in
        GiB, and the server's verdict in words: Verdict.words), a line
        saying the activation bytes are an ESTIMATE when a workload was
        given, the notes once each with the options they hold for, and the
        first option's GeminiPlugin(...) line."""
        lines = _cluster_lines(self.request)
        if self.options and self.options[0].response.HasField("verdict"):
            lines.append("margin          %s kept free on each device "
                         "(the server's)" % self.options[0].verdict.margin_words)
        memory = ("" if self.request is None else " / " + gib_text(
            self.request.cluster.device_memory_bytes))
        rows = [[cell(i, o) for _, cell in _COLUMNS] +
                [gib_text(o.device_need_bytes) + memory,
                 gib_text(o.verdict.headroom_bytes),
                 gib_text(o.host_bytes_per_node), o.verdict.words]
                for i, o in enumerate(self.options, 1)]
        titles = [title for title, _ in _COLUMNS] + [
            "device need%s GiB" % (memory and " / memory"), "headroom GiB",
            "host per node GiB", "verdict"]
        widths = [max([len(titles[c])] + [len(r[c]) for r in rows])
                  for c in range(len(titles) - 1)]
        lines.append("")
        for row in [titles] + rows:
            lines.append("  ".join(
                [row[c].ljust(widths[c]) if c in _LEFT else
                 row[c].rjust(widths[c]) for c in range(len(widths))] +
                [row[-1]]))
        if not self.options:
            lines.append("(no option)")
        lines += ["", "considered      %d options" % self.options_considered]
        lines += _note_lines(self.options)
        if self.options:
            lines += ["", "option 1        GeminiPlugin(%s)" %
                      self.options[0].colossalai]
        return "\n".join(lines) + "\n"

    def plot(self, path, title=""):
        """Draws the options' device need to the PNG `path`
        (chunkplan.verdict_plot: one stacked bar an option, in the server's
        order, against the device memory and the margin, in GiB) and
        returns the matplotlib Figure. Raises
        frontier_plot.MatplotlibMissingError without matplotlib,
        ValueError for a plan with no option, OSError."""
        from chunkplan import verdict_plot  # when drawing
        return verdict_plot.plot(path, verdict_plot.plan_bars(self),
                                 verdict_plot.first_verdict(self.options),
                                 title)

    @classmethod
    def from_response(cls, response, request=None):
        """The Plan of a PlanResponse; `request` the PlanRequest it
        answers, if known."""
        return cls(
            options=tuple(PlanOption.from_response(o)
                          for o in response.options),
            options_considered=int(response.options_considered),
            plan_nanos=int(response.plan_nanos), response=response,
            request=request, model_report=_model_report.of(response))


def _cluster_lines(request):
    """The lines above the table: the cluster and the workload asked
    about (none without the request)."""
    if request is None:
        return ["device need     " + PLAN_DEVICE_NEED]
    cluster = request.cluster
    lines = ["cluster         %s GiB per device, reserve %s GiB, %d GPUs per "
             "node, host memory %s, world sizes %s" % (
                 gib_text(cluster.device_memory_bytes),
                 gib_text(cluster.reserve_bytes), cluster.gpus_per_node,
                 ("%s GiB per node" % gib_text(cluster.host_memory_bytes)
                  if cluster.host_memory_bytes else "not checked"),
                 ("whole nodes, up to %d" % cluster.max_nodes
                  if cluster.whole_nodes else
                  ", ".join(str(w) for w in cluster.world_sizes))),
             "device need     " + PLAN_DEVICE_NEED]
    if request.HasField("workload"):
        w = request.workload
        lines.append(
            "activations     ESTIMATE (docs/plan.md): micro batch %d, "
            "sequence length %d, activation checkpointing %s, attention "
            "%s; activation and transient bytes are estimates, not "
            "counts" % (
                w.micro_batch, w.sequence_length,
                "on" if w.activation_checkpointing else "off",
                "flash_attention_2" if w.flash_attention else
                chunk_search_pb2.Attention.Name(w.attention).removeprefix(
                    "ATTENTION_").lower()))
    return lines


# What Plan counts in an option's device_need_bytes (docs/plan.md).
PLAN_DEVICE_NEED = ("the most loaded rank's device total, worst chunk order, "
                    "+ the gathered chunk + the reserve + the activation "
                    "estimate + the backward transient estimate")


def _note_lines(options):
    """Each distinct note once, with the options (1-based) it holds for;
    an option's activation bytes where any is non-zero."""
    holders = {}
    for i, option in enumerate(options, 1):
        for note in option.notes:
            holders.setdefault(note, []).append(str(i))
    lines = ["note            option%s %s: %s" % (
        "s" if len(who) > 1 else "", ",".join(who), note)
        for note, who in holders.items()]
    estimates = sorted({o.activation_bytes for o in options})
    if estimates and estimates[-1]:
        lines.append("activations     %s GiB per rank (an ESTIMATE, counted "
                     "in the device need)" % ", ".join(
                         gib_text(e) for e in estimates))
        transients = sorted({o.transient_bytes for o in options})
        lines.append("transient       %s GiB per rank in backward (an "
                     "ESTIMATE, counted in the device need)" % ", ".join(
                         gib_text(e) for e in transients))
    return [""] + lines if lines else []
