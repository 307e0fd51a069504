"""Any model by its parameter list: what `chunkplan ... --params FILE`
reads, written from a torch nn.Module in one call.

    import chunkplan.params
    chunkplan.params.write_params(model, "params.json")   # meta device fine
    # chunkplan plan --params params.json --local --gpu H100-80GB ...

The list holds {"name", "numel"} per parameter in named_parameters() order
(a shared or tied parameter once, as named_parameters() yields it), what
ColossalAI's search visits. Like GeminiDDP, it leaves out the parameters
set to be ignored (GeminiDDP.set_params_to_ignore: `_ddp_to_ignore`,
which the search skips too), and marks "requires_grad": false on the
parameters that need no gradient (the search counts them; GeminiDDP gives
them no chunk: the command line sends them as frozen). Nothing here imports
torch: any object with named_parameters() serves.
"""

import json

__all__ = ["param_list", "write_params"]


def param_list(module):
    """The list of `module`'s parameters (dicts with "name" and "numel",
    and "requires_grad": False where a parameter needs no gradient), in
    named_parameters() order, without those GeminiDDP ignores."""
    out = []
    for name, param in module.named_parameters():
        if getattr(param, "_ddp_to_ignore", False):
            continue
        entry = {"name": name, "numel": int(param.numel())}
        if not param.requires_grad:
            entry["requires_grad"] = False
        out.append(entry)
    return out


def write_params(module, path):
    """Writes param_list(module) to `path` (a file name, or an open text
    file) as JSON; returns the list."""
    params = param_list(module)
    if hasattr(path, "write"):
        json.dump(params, path)
    else:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(params, f)
    return params
