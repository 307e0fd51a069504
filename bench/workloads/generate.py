#!/usr/bin/python3
"""Writes the benchmark workloads: chunkplan.v1 ChunkSearchRequests in
protobuf's JSON form, one file per workload, into bench/workloads/.

Every parameter list comes from a published Hugging Face config.json (the
copies in tests/python/data/hf_configs/) through the client package's model
code, chunkplan.models.describe: the numels in model.parameters() order.
The search parameters are GeminiPlugin's defaults -- search_range_m 32,
min_chunk_size_m 32, search_interval the model's hidden size (GeminiPlugin's
hidden_dim) -- with every parameter at data-parallel degree 8, except where
a workload says otherwise.

  PYTHONPATH=<build>/python /usr/bin/python3 bench/workloads/generate.py
  PYTHONPATH=<build>/python /usr/bin/python3 bench/workloads/generate.py --check

--check writes nothing and exits 1 (naming the files) where a committed
workload differs from what the configs and the model code give now.
"""

import argparse
import dataclasses
import os
import sys
from typing import Callable, List, Optional

from chunkplan import models

_HERE = os.path.dirname(os.path.abspath(__file__))
_CONFIGS = os.path.join(_HERE, "..", "..", "tests", "python", "data",
                        "hf_configs")

# GeminiPlugin's defaults.
_RANGE_M = 32
_MIN_CHUNK_M = 32
_DP = 8

# Mixtral under expert parallelism: 8 ranks, the experts split 4 ways, so
# each expert's weights are replicated over (and reduced across) 2 ranks
# while everything else is replicated over all 8.
_EXPERT_DP = 2


@dataclasses.dataclass(frozen=True)
class Workload:
    """One request: `name`.json from the config `config`. interval: None for
    the hidden size. degrees(model): the dp_degrees field (default: [_DP],
    one degree shared by every parameter)."""
    name: str
    config: str
    range_m: int = _RANGE_M
    interval: Optional[int] = None
    degrees: Optional[Callable[[models.HfModel], List[int]]] = None


def _mixtral_expert_degrees(model):
    """_EXPERT_DP for every expert weight (w1, w2, w3 of each expert: the
    only Mixtral parameters of hidden_size x intermediate_size elements),
    _DP for the rest. Raises ValueError unless exactly layers x experts x 3
    parameters match."""
    raw = models.load_config(os.path.join(_CONFIGS,
                                          "mixtral-8x7b-v0.1.json"))
    expert_numel = raw["hidden_size"] * raw["intermediate_size"]
    want = raw["num_hidden_layers"] * raw["num_local_experts"] * 3
    degrees = [_EXPERT_DP if n == expert_numel else _DP for n in model.numels]
    found = degrees.count(_EXPERT_DP)
    if found != want:
        raise ValueError(f"mixtral: {found} parameters of {expert_numel} "
                         f"elements; expected {want} expert weights")
    return degrees


WORKLOADS = (
    Workload("gpt2-xl", "gpt2-xl.json"),
    Workload("bert-large", "bert-large-uncased.json"),
    Workload("llama-2-7b", "llama-2-7b.json"),
    Workload("llama-2-13b", "llama-2-13b.json"),
    Workload("llama-2-70b", "llama-2-70b.json"),
    Workload("opt-30b", "opt-30b.json"),
    Workload("mixtral-8x7b", "mixtral-8x7b-v0.1.json"),
    Workload("mixtral-8x7b-experts-dp2", "mixtral-8x7b-v0.1.json",
             degrees=_mixtral_expert_degrees),
    # The stress sweep: 1024 * 2**20 / 128 + 1 = 8,388,609 candidates.
    Workload("stress-llama-2-70b", "llama-2-70b.json", range_m=1024,
             interval=128),
)


def _number_lines(values, per_line):
    """A JSON array of integers, `per_line` to a line, indented for a
    top-level field."""
    rows = [", ".join(str(v) for v in values[i:i + per_line])
            for i in range(0, len(values), per_line)]
    return "[\n    " + ",\n    ".join(rows) + "\n  ]"


def render(workload):
    """The workload's request as protobuf JSON text (proto field names)."""
    model = models.describe(os.path.join(_CONFIGS, workload.config))
    interval = workload.interval or model.hidden_size
    degrees = workload.degrees(model) if workload.degrees else [_DP]
    fields = [
        ("numels", _number_lines(model.numels, 8)),
        ("dp_degrees", _number_lines(degrees, 32)
         if len(degrees) > 1 else f"[{degrees[0]}]"),
        ("search_range_m", str(workload.range_m)),
        ("search_interval", str(interval)),
        ("min_chunk_size_m", str(_MIN_CHUNK_M)),
        ("filter_exlarge_params", "true"),
    ]
    body = ",\n".join(f'  "{key}": {value}' for key, value in fields)
    return "{\n" + body + "\n}\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files; write none")
    args = parser.parse_args(argv)
    stale = []
    for workload in WORKLOADS:
        path = os.path.join(_HERE, workload.name + ".json")
        text = render(workload)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    current = f.read()
            except OSError:
                current = None
            if current != text:
                stale.append(path)
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(path)
    for path in stale:
        print(f"stale or missing: {path} (rerun bench/workloads/generate.py)",
              file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
