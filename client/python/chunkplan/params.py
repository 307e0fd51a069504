"""Any model by its parameter list: what `chunkplan ... --params FILE`
reads, written from a torch nn.Module in one call.

    import chunkplan.params
    chunkplan.params.write_params(model, "params.json")   # meta device fine
    # chunkplan plan --params params.json --local --gpu H100-80GB ...

One {"name", "numel"} per parameter ColossalAI's search visits, in
named_parameters() order (request.named_module_parameters: a shared or
tied parameter once; those GeminiDDP.set_params_to_ignore marks left out,
as the search leaves them out), with "requires_grad": false on a parameter
that needs no gradient (the search counts it; GeminiDDP gives it no chunk).
The command line sends the list as the model's param_list_json, and the
server describes it: `--freeze REGEX` / `--train REGEX` match its names
there, as for a model family. In Python, model_config(module, freeze=...)
is the same model for Client.layout, frontier and plan. Nothing here
imports torch: any object with named_parameters() serves.
"""

import json

from chunkplan import request as _request
from chunkplan.v1 import chunk_search_pb2

__all__ = ["model_config", "param_list", "write_params"]


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


def model_config(module_or_list, *, freeze="", train=""):
    """The chunkplan.v1.ModelConfig of a parameter list: `module_or_list`
    is a module (param_list(module)) or a list as param_list returns it (or
    of [name, shape]), sent as param_list_json for the server to describe.
    Client.layout, Client.frontier and Client.plan take it in place of
    numels. freeze / train: RE2 patterns over the names that the server
    matches (found anywhere in a name, as re.search): a parameter trains
    when it does by default (requires_grad; every one when the list marks
    none and train is empty) or matches train, and does not match freeze
    (docs/lora.md). The server refuses a pattern that matches no name."""
    params = (param_list(module_or_list) if _request.is_module(module_or_list)
              else list(module_or_list))
    return chunk_search_pb2.ModelConfig(param_list_json=json.dumps(params),
                                        freeze=freeze, train=train)
