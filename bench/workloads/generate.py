#!/usr/bin/python3
"""Writes the benchmark workloads: chunkplan.v1 ChunkSearchRequests in
protobuf's JSON form, one file per workload, into bench/workloads/.

Every parameter list comes from a published Hugging Face config.json (the
copies in tests/python/data/hf_configs/) through the C++ command line's
`chunkplan describe --local` (the server's model families, server/models):
the numels in model.parameters() order.
The search parameters are GeminiPlugin's defaults -- search_range_m 32,
min_chunk_size_m 32, search_interval the model's hidden size (GeminiPlugin's
hidden_dim) -- with every parameter at data-parallel degree 8, except where
a workload says otherwise.

One workload is no HF model at GeminiPlugin's defaults: the ColossalAI GPT-2
test (gpt2-colossalai-test.json) is examples/gpt2_colossalai.json, the
request of ColossalAI's own search test, copied field for field and written
in the same style as the others.

  /usr/bin/python3 bench/workloads/generate.py [--chunkplan build/bin/chunkplan]
  /usr/bin/python3 bench/workloads/generate.py --check

--check writes nothing and exits 1 (naming the files) where a committed
workload differs from what the configs and the model code give now.
"""

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from typing import Callable, List, Optional

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.join(_HERE, "..", "..")
_CONFIGS = os.path.join(_ROOT, "tests", "python", "data", "hf_configs")
_EXAMPLES = os.path.join(_ROOT, "examples")

# The chunkplan binary that describes the models (--chunkplan).
_DEFAULT_CLI = os.path.join(_ROOT, "build", "bin", "chunkplan")


@dataclasses.dataclass(frozen=True)
class Model:
    """A model as `chunkplan describe` lists it."""
    hidden_size: int
    numels: List[int]


def describe(cli, config_path):
    """The Model of a config.json, from `cli describe --local`. Raises
    RuntimeError with the command's error line where it fails."""
    result = subprocess.run([cli, "describe", "--local", "--hf-config",
                             config_path], capture_output=True, text=True,
                            timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"{config_path}: {result.stderr.strip()}")
    description = json.loads(result.stdout)
    return Model(int(description["hidden_size"]),
                 [int(n) for n in description["numels"]])


# ChunkSearchRequest's fields in the order the workloads write them (the
# proto's field order; engine is never set).
_FIELDS = ("numels", "dp_degrees", "search_range_m", "search_interval",
           "min_chunk_size_m", "filter_exlarge_params")

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
    one degree shared by every parameter). example: instead of a config, a
    request file in examples/ to copy as it is (the other fields unused)."""
    name: str
    config: Optional[str] = None
    range_m: int = _RANGE_M
    interval: Optional[int] = None
    degrees: Optional[Callable[[Model], List[int]]] = None
    example: Optional[str] = None


def _mixtral_expert_degrees(model):
    """_EXPERT_DP for every expert weight (w1, w2, w3 of each expert: the
    only Mixtral parameters of hidden_size x intermediate_size elements),
    _DP for the rest. Raises ValueError unless exactly layers x experts x 3
    parameters match."""
    with open(os.path.join(_CONFIGS, "mixtral-8x7b-v0.1.json"),
              encoding="utf-8") as f:
        raw = json.load(f)
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
    # ColossalAI's own search test: 28 params, dp 1, range 1, interval 128,
    # minimum 0, filter on.
    Workload("gpt2-colossalai-test", example="gpt2_colossalai.json"),
)


def _number_lines(values, per_line):
    """A JSON array of integers, `per_line` to a line, indented for a
    top-level field."""
    rows = [", ".join(str(v) for v in values[i:i + per_line])
            for i in range(0, len(values), per_line)]
    return "[\n    " + ",\n    ".join(rows) + "\n  ]"


def _render_request(request):
    """`request`, {proto field name: value}, as protobuf JSON text in the
    workloads' style: the fields in _FIELDS order, numels 8 to a line,
    dp_degrees 32 to a line (on the key's line when there is one), scalars
    as JSON writes them. Raises ValueError for a field not in _FIELDS."""
    unknown = sorted(set(request) - set(_FIELDS))
    if unknown:
        raise ValueError(f"fields the workloads do not write: {unknown}")
    fields = []
    for key in (k for k in _FIELDS if k in request):
        value = request[key]
        if key == "numels":
            text = _number_lines(value, 8)
        elif key == "dp_degrees":
            text = (_number_lines(value, 32) if len(value) > 1
                    else f"[{value[0]}]")
        else:
            text = json.dumps(value)
        fields.append(f'  "{key}": {text}')
    return "{\n" + ",\n".join(fields) + "\n}\n"


def render(workload, cli):
    """The workload's request as protobuf JSON text (proto field names),
    its model described by `cli` (chunkplan describe)."""
    if workload.example:
        with open(os.path.join(_EXAMPLES, workload.example),
                  encoding="utf-8") as f:
            return _render_request(json.load(f))
    model = describe(cli, os.path.join(_CONFIGS, workload.config))
    degrees = workload.degrees(model) if workload.degrees else [_DP]
    return _render_request({
        "numels": model.numels,
        "dp_degrees": degrees,
        "search_range_m": workload.range_m,
        "search_interval": workload.interval or model.hidden_size,
        "min_chunk_size_m": _MIN_CHUNK_M,
        "filter_exlarge_params": True,
    })


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files; write none")
    parser.add_argument("--chunkplan", default=_DEFAULT_CLI, metavar="BIN",
                        help="the chunkplan command line (default: "
                        "build/bin/chunkplan)")
    args = parser.parse_args(argv)
    stale = []
    for workload in WORKLOADS:
        path = os.path.join(_HERE, workload.name + ".json")
        text = render(workload, args.chunkplan)
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
