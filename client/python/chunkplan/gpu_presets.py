"""--gpu NAME: a card's total memory as nvidia-smi reports it, read from
gpu_presets.inc (the tree's common/gpu_presets.inc, copied beside this
module by the build), the one table the C++ command line also includes.
docs/gpu-presets.md lists the cards and where each figure comes from.
"""

import argparse
import dataclasses
import pathlib
import re

# The data file, beside this module in the built package.
PRESETS_FILE = pathlib.Path(__file__).resolve().parent / "gpu_presets.inc"
_ENTRY = re.compile(
    r'^CHUNKPLAN_GPU\("([a-z0-9-]+)", ([0-9]+), "([^"]*)", "([^"]*)"\)$')
MIB = 2**20


@dataclasses.dataclass(frozen=True)
class GpuPreset:
    """One card: `name` as --gpu takes it, `mib` its total memory in MiB as
    nvidia-smi reports it, `smi_name` the card as nvidia-smi names it,
    `source` where the figure was published."""
    name: str
    mib: int
    smi_name: str
    source: str

    @property
    def bytes(self):
        """mib * 2**20."""
        return self.mib * MIB


def load(path=PRESETS_FILE):
    """Every preset of the data file at `path`, in its order. Raises
    ValueError naming the line for an entry not in the documented form,
    OSError when the file cannot be read."""
    presets = []
    for number, line in enumerate(pathlib.Path(path).read_text().splitlines(),
                                  1):
        if not line.startswith("CHUNKPLAN_GPU("):
            continue
        match = _ENTRY.match(line)
        if match is None:
            raise ValueError(f"{path}:{number}: not a CHUNKPLAN_GPU entry")
        name, mib, smi_name, source = match.groups()
        presets.append(GpuPreset(name, int(mib), smi_name, source))
    return presets


def preset_bytes(name):
    """The total bytes of preset `name` (any case); for argparse: raises
    argparse.ArgumentTypeError listing the names for an unknown one."""
    presets = {p.name: p for p in load()}
    preset = presets.get(name.strip().lower())
    if preset is None:
        raise argparse.ArgumentTypeError(
            f"{name!r} is not a preset: one of {', '.join(presets)} (or give "
            "--device-memory)")
    return preset.bytes


def add_device_memory_arguments(parser, parse_memory, required=False):
    """--device-memory SIZE (parsed by `parse_memory`) or --gpu NAME, one
    of them (one is needed when `required`), both into args.device_memory
    (bytes, None when neither)."""
    group = parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--device-memory", type=parse_memory, metavar="SIZE",
                       help="memory of one device, e.g. 80GiB (units TiB, "
                       "GiB, MiB: 2**40, 2**30, 2**20 bytes; TB, GB, MB: "
                       "10**12, 10**9, 10**6)")
    group.add_argument("--gpu", type=preset_bytes, dest="device_memory",
                       metavar="NAME",
                       help="the device memory of a card as nvidia-smi "
                       "reports it: " + ", ".join(p.name for p in load()))
