"""Any model by its parameter list: what `chunkplan ... --params FILE`
reads, written from a torch nn.Module in one call.

    import chunkplan.params
    chunkplan.params.write_params(model, "params.json")   # meta device fine
    # chunkplan plan --params params.json --local --gpu H100-80GB ...

One {"name", "numel"} per parameter ColossalAI's search visits, in
named_parameters() order (request.named_module_parameters: a shared or
tied parameter once; those GeminiDDP.set_params_to_ignore marks left out,
as the search leaves them out), with "requires_grad": false on a parameter
that needs no gradient (the search counts it; GeminiDDP gives it no chunk:
the command line sends it as frozen). Nothing here imports torch: any
object with named_parameters() serves.
"""

import json

from chunkplan import request as _request

__all__ = ["param_list", "write_params"]


def param_list(module):
    """The list of `module`'s parameters as write_params writes it: dicts
    with "name" and "numel", and "requires_grad": False where a parameter
    needs no gradient."""
    out = []
    for name, param in _request.named_module_parameters(module):
        entry = {"name": name, "numel": int(param.numel())}
        if not param.requires_grad:
            entry["requires_grad"] = False
        out.append(entry)
    return out


def write_params(module, path):
    """Writes param_list(module) to `path` (a file name, or an open text
    file) as JSON; returns the list. Raises OSError for a file that cannot
    be written."""
    params = param_list(module)
    if hasattr(path, "write"):
        json.dump(params, path)
    else:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(params, f)
    return params
