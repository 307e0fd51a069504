"""PEFT's LoRA adapters on a described model, and which parameters train.

Written from PEFT's source (peft/tuners/lora/layer.py: LoraLayer.__init__
keeps the wrapped module as `base_layer` and registers the lora_dropout,
lora_A and lora_B ModuleDicts; update_layer adds lora_A[name] =
nn.Linear(in_features, r, bias=False) and lora_B[name] = nn.Linear(r,
out_features, bias=False); peft/tuners/tuners_utils.py:
check_target_module_exists matches a list of target_modules by the full
module name or a "." + target suffix; the wrapper replaces the module in
its parent's _modules in place, so the order is kept), never from
chunkplan's C++. The names leave out PeftModel's "base_model.model."
prefix. Stdlib only.

  adapt(description, rank, targets) -> Adapted
  trainable_mask(names, default, freeze=None, train=None) -> [bool]
"""

import dataclasses
import re
from typing import List

from .layers import LinearWeight

ADAPTER = "default"  # PEFT's adapter name when none is given


@dataclasses.dataclass(frozen=True)
class Adapted:
    """The parameters after get_peft_model: names, numels and trainable
    (requires_grad) in named_parameters() order, and the adapted modules
    as (name, in_features, out_features)."""
    names: List[str]
    numels: List[int]
    trainable: List[bool]
    modules: List[tuple]

    @property
    def total(self):
        return sum(self.numels)

    @property
    def trainable_total(self):
        return sum(n for n, t in zip(self.numels, self.trainable) if t)


def _targeted(module, targets):
    return any(module == t or module.endswith("." + t) for t in targets)


def adapt(description, rank, targets):
    """The description with an adapter on every linear module a target
    names, the base frozen. Raises ValueError naming a target that matches
    no linear module."""
    names, numels, trainable, modules = [], [], [], []
    matched = set()
    i = 0
    while i < len(description.names):
        name, numel = description.names[i], description.numels[i]
        module = name.rsplit(".", 1)[0]
        hits = [t for t in targets
                if module == t or module.endswith("." + t)]
        if not (isinstance(numel, LinearWeight) and hits):
            names.append(name)
            numels.append(int(numel))
            trainable.append(False)
            i += 1
            continue
        matched.update(hits)
        # The module's own parameters (weight, then its bias if any) move
        # under base_layer; the adapters follow.
        while (i < len(description.names) and
               description.names[i].rsplit(".", 1)[0] == module):
            leaf = description.names[i].rsplit(".", 1)[1]
            names.append("%s.base_layer.%s" % (module, leaf))
            numels.append(int(description.numels[i]))
            trainable.append(False)
            i += 1
        names += ["%s.lora_A.%s.weight" % (module, ADAPTER),
                  "%s.lora_B.%s.weight" % (module, ADAPTER)]
        numels += [rank * numel.in_features, numel.out_features * rank]
        trainable += [True, True]
        modules.append((module, numel.in_features, numel.out_features))
    for t in targets:
        if t not in matched:
            raise ValueError("lora.targets: %r matches no linear module" % t)
    return Adapted(names, numels, trainable, modules)


def trainable_mask(names, default, freeze=None, train=None):
    """requires_grad per name: trainable by default (`default`, one bool a
    name) or matching `train` (re.search), and not matching `freeze`.
    Raises ValueError for a pattern that matches no name."""
    for field, pattern in (("freeze", freeze), ("train", train)):
        if pattern and not any(re.search(pattern, n) for n in names):
            raise ValueError("%s: %r matches no parameter" % (field, pattern))
    return [(d or bool(train and re.search(train, n))) and
            not (freeze and re.search(freeze, n))
            for n, d in zip(names, default)]


_PEFT = ("huggingface/peft at 5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40, %s: "
         "model.print_trainable_parameters() prints \"%s\"")

# PEFT's own published print_trainable_parameters() figures: (config file
# in data/, r, target_modules, trainable, all params, citation).
PEFT_PUBLISHED = (
    # LoraConfig(r=16, task_type=CAUSAL_LM) on Qwen/Qwen2.5-3B-Instruct:
    # qwen2's default target_modules are ["q_proj", "v_proj"]
    # (peft/utils/constants.py).
    ("qwen2.5-3b-instruct.json", 16, ("q_proj", "v_proj"), 3_686_400,
     3_089_625_088,
     _PEFT % ("README.md", "trainable params: 3,686,400 || all params: "
              "3,089,625,088 || trainable%: 0.1193")),
    # LoraConfig(target_modules=["q_proj"], r=8, ...) on
    # meta-llama/Llama-3.2-1B.
    ("llama-3.2-1b.json", 8, ("q_proj",), 524_288, 1_236_338_688,
     _PEFT % ("docs/source/quicktour.md", "trainable params: 524,288 || "
              "all params: 1,236,338,688 || trainable%: 0.0424")),
    # LoraConfig(r=16, target_modules=["q_proj", "v_proj"], ...) on
    # facebook/opt-350m.
    ("opt-350m.json", 16, ("q_proj", "v_proj"), 1_572_864, 332_769_280,
     _PEFT % ("docs/source/guides/peft_model_config.md",
              "trainable params: 1,572,864 || all params: 332,769,280 || "
              "trainable%: 0.472659014678278")),
)
