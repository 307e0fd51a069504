"""The seed's arguments as a ChunkSearchRequest, and a response as the
seed's tuple.

ColossalAI's search_chunk_configuration takes a model and visits
model.parameters(); here the parameters may also be given as numels, or as
(numel, dp_degree) pairs. Values that fit the wire are sent as they are and
judged by the server (a degree of 0, an interval of 0, NaN); values that do
not fit (negative, beyond 64 bits, not integers) raise InvalidArgumentError
here, with the field and index in the message as the server would name them.
"""

import numbers
import operator

import grpc

from chunkplan.errors import InvalidArgumentError
from chunkplan.v1 import chunk_search_pb2

UINT64_MAX = 2**64 - 1
UINT32_MAX = 2**32 - 1


def invalid_argument(message):
    """An InvalidArgumentError with `message` (which starts with the field
    at fault, as the server's do), for raising before any call."""
    return InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT, message)


def unsigned(value, limit, where):
    """`value` as a Python int in [0, limit]; InvalidArgumentError naming
    `where` otherwise. bool is refused: True is no parameter size."""
    if isinstance(value, bool):
        raise invalid_argument(f"{where}: expected an integer, got {value!r}")
    try:
        result = operator.index(value)
    except TypeError:
        raise invalid_argument(
            f"{where}: expected an integer, got {value!r}") from None
    if not 0 <= result <= limit:
        raise invalid_argument(f"{where}: {result} is outside [0, {limit}]")
    return result


def real(value, where):
    """`value` as a float (NaN and infinities included: the server judges
    them)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise invalid_argument(f"{where}: expected a number, got {value!r}")
    return float(value)


def is_module(model_or_params):
    """True for a torch.nn.Module, or anything else whose parameters() yields
    tensors: duck typing keeps torch an optional dependency."""
    parameters = getattr(model_or_params, "parameters", None)
    return callable(parameters) and not isinstance(model_or_params,
                                                   (list, tuple))


def named_module_parameters(module):
    """(name, parameter) of the parameters the seed visits, in
    named_parameters() order (model.parameters()'s): PyTorch yields a tied
    weight once, under its first name; parameters ColossalAI marks ignored
    (`_ddp_to_ignore`, what its is_ddp_ignored reads) are skipped as the
    seed skips them. A list; `module` is only read."""
    return [(name, p) for name, p in module.named_parameters()
            if not getattr(p, "_ddp_to_ignore", False)]


def module_parameters(module):
    """The parameters of named_module_parameters, without their names."""
    return [p for _, p in named_module_parameters(module)]


def numels_and_degrees(model_or_params, dp_degree=1):
    """(numels, degrees): two equal-length lists of ints, in visit order.

    model_or_params: a torch.nn.Module (every parameter at `dp_degree`), an
    iterable of numels (each at `dp_degree`), or of (numel, dp_degree)
    pairs; numels and pairs may be mixed. Raises InvalidArgumentError for a
    value that does not fit the wire (numels are uint64, degrees uint32).
    """
    default_degree = unsigned(dp_degree, UINT32_MAX, "dp_degree")
    if is_module(model_or_params):
        items = [p.numel() for p in module_parameters(model_or_params)]
    elif isinstance(model_or_params, (str, bytes)):
        raise invalid_argument(
            "model_or_params: expected a model or a list of parameter "
            f"sizes, got {type(model_or_params).__name__}")
    else:
        try:
            items = list(model_or_params)
        except TypeError:
            raise invalid_argument(
                "model_or_params: expected a model or a list of parameter "
                f"sizes, got {type(model_or_params).__name__}") from None
    numels = []
    degrees = []
    for i, item in enumerate(items):
        if isinstance(item, (tuple, list)):
            if len(item) != 2:
                raise invalid_argument(f"params[{i}]: expected numel or "
                                       f"(numel, dp_degree), got {item!r}")
            numels.append(unsigned(item[0], UINT64_MAX, f"numels[{i}]"))
            degrees.append(unsigned(item[1], UINT32_MAX,
                                     f"dp_degrees[{i}]"))
        else:
            numels.append(unsigned(item, UINT64_MAX, f"numels[{i}]"))
            degrees.append(default_degree)
    return numels, degrees


def enum_value(enum, prefix, value, where):
    """The number of `value` in the protobuf enum `enum` (an
    EnumTypeWrapper such as chunk_search_pb2.Engine): a name in any case,
    `prefix` (e.g. "ENGINE_") optional, or a number the enum defines.
    Raises InvalidArgumentError naming `where` and the lower-case names."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value not in enum.values():
            raise invalid_argument(f"{where}: no {where} numbered {value}")
        return value
    if isinstance(value, str):
        name = value.upper()
        if not name.startswith(prefix):
            name = prefix + name
        if name in enum.keys():
            return enum.Value(name)
    names = ", ".join(k.removeprefix(prefix).lower() for k in enum.keys())
    raise invalid_argument(f"{where}: expected one of {names}, got {value!r}")


def engine_value(engine):
    """The chunkplan.v1.Engine number for "auto", "cpu_sweep", "cpu_plateau"
    or "cuda" (any case, "ENGINE_" prefix optional) or an Engine number."""
    return enum_value(chunk_search_pb2.Engine, "ENGINE_", engine, "engine")


def build_request(model_or_params, search_range_m, search_interval,
                  min_chunk_size_m=32, filter_exlarge_params=True, *,
                  dp_degree=1, engine="auto"):
    """The ChunkSearchRequest for the seed's arguments (see
    numels_and_degrees for model_or_params). Degrees all equal travel as one
    value. Raises InvalidArgumentError for what does not fit the wire."""
    numels, degrees = numels_and_degrees(model_or_params, dp_degree)
    request = chunk_search_pb2.ChunkSearchRequest(
        search_range_m=real(search_range_m, "search_range_m"),
        search_interval=unsigned(search_interval, UINT64_MAX,
                                  "search_interval"),
        min_chunk_size_m=real(min_chunk_size_m, "min_chunk_size_m"),
        filter_exlarge_params=bool(filter_exlarge_params),
        engine=engine_value(engine))
    request.numels.extend(numels)
    if degrees and any(d != degrees[0] for d in degrees):
        request.dp_degrees.extend(degrees)
    elif degrees and degrees[0] != 1:
        request.dp_degrees.append(degrees[0])
    return request


def config_tuple(response):
    """The seed's return value from a ChunkSearchResponse:
    ({dp_degree: {"chunk_size": int, "keep_gathered": bool}},
    total_param_size, min_chunk_waste), the dict in the response's (the
    seed's) order."""
    config_dict = {}
    for config in response.configs:
        config_dict[int(config.dp_degree)] = dict(
            chunk_size=int(config.chunk_size),
            keep_gathered=bool(config.keep_gathered))
    return (config_dict, int(response.total_param_size),
            int(response.min_chunk_waste))

