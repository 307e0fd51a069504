#!/usr/bin/python3
"""The test oracle: ColossalAI's search_chunk_configuration on plain data.

An independent port of the seed (seed/search_utils.py.txt, the function
search_chunk_configuration and its helpers) that takes a chunkplan.v1
ChunkSearchRequest in protobuf's JSON form instead of a torch model and prints
the answer part of a ChunkSearchResponse the same way. The seed's arithmetic is
kept literally -- Python's round on the float product, np.array / np.std /
np.mean on the gathered sizes, `x <= upper_limit` against the numpy float64,
np.lcm.reduce, math.ceil of the true quotient, range() over the candidates,
next-fit padding, strict `<`, dict insertion order -- so that whatever Python
and numpy do is by construction the expected answer. Nothing here comes from
the C++ side, and Python's unbounded ints are left unbounded.

Two modes:
  default   The service's contract: the seed plus its one documented extension
            (a group that the extra-large filter empties adds nothing to the
            start size or the waste and still gets the shared chunk size), and
            the contract's rejections the seed itself lets through: a minimum
            chunk size that rounds below 0, and numpy's floating-point
            warnings (a degree of 0 divides by zero in `-best % lcm`, which
            numpy answers with 0 and a RuntimeWarning) count as errors.
  --strict  Exactly the seed: an emptied group crashes on max([]), numpy's
            warnings stay warnings.
Where the chosen mode raises, the answer is {"error": "<what>"}.

Usage:
  /usr/bin/python3 chunk_search_oracle.py [--strict] < request.json
  /usr/bin/python3 chunk_search_oracle.py [--strict] --jsonl < requests.jsonl
With --jsonl every input line is one request and gets one answer line, in
order (an unreadable line gets an error line). Other tests may import the
module and call search(request_dict, strict=False).
"""

import argparse
import json
import math
import sys

import numpy as np

# The seed's default for min_chunk_size_m.
DEFAULT_MIN_CHUNK_SIZE_M = 32.0

# protobuf JSON accepts each field by its proto name or its lowerCamelCase
# name; the value is (proto name of the field).
_FIELD_NAMES = {
    "numels": "numels",
    "dp_degrees": "dp_degrees",
    "dpDegrees": "dp_degrees",
    "search_range_m": "search_range_m",
    "searchRangeM": "search_range_m",
    "search_interval": "search_interval",
    "searchInterval": "search_interval",
    "min_chunk_size_m": "min_chunk_size_m",
    "minChunkSizeM": "min_chunk_size_m",
    "filter_exlarge_params": "filter_exlarge_params",
    "filterExlargeParams": "filter_exlarge_params",
    "engine": "engine",
}


class RequestError(ValueError):
    """A request that is not a well-formed ChunkSearchRequest in JSON."""


# ---------------------------------------------------------------------------
# Reading the request (protobuf's JSON mapping).


def _json_int(value, where):
    """An unsigned protobuf integer: a JSON number or a decimal string."""
    if isinstance(value, bool):
        raise RequestError(f"{where}: expected an integer, got {value!r}")
    if isinstance(value, int):
        result = value
    elif isinstance(value, float) and value.is_integer():
        result = int(value)
    elif isinstance(value, str):
        try:
            result = int(value.strip(), 10)
        except ValueError:
            raise RequestError(
                f"{where}: expected an integer, got {value!r}") from None
    else:
        raise RequestError(f"{where}: expected an integer, got {value!r}")
    if result < 0:
        raise RequestError(f"{where}: {result} is negative (unsigned field)")
    return result


def _json_double(value, where):
    """A protobuf double: a JSON number, "NaN", "Infinity", "-Infinity" or a
    number as a string. Returned as a Python float, as the seed would get it
    from a double."""
    if isinstance(value, bool):
        raise RequestError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise RequestError(
                f"{where}: expected a number, got {value!r}") from None
    raise RequestError(f"{where}: expected a number, got {value!r}")


def _json_bool(value, where):
    if not isinstance(value, bool):
        raise RequestError(f"{where}: expected true or false, got {value!r}")
    return value


def _json_list(value, where):
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError(f"{where}: expected a list, got {value!r}")
    return value


def parse_request(request):
    """The seed's inputs from a ChunkSearchRequest dict: (numels, degrees,
    search_range_m, search_interval, min_chunk_size_m, filter_exlarge_params),
    with one degree per numel. Raises RequestError."""
    if not isinstance(request, dict):
        raise RequestError("a request is a JSON object")
    fields = {}
    for key, value in request.items():
        name = _FIELD_NAMES.get(key)
        if name is None:
            raise RequestError(f"unknown field {key!r}")
        if name in fields:
            raise RequestError(f"field {name!r} given twice")
        if value is not None:  # protobuf JSON: null means unset
            fields[name] = value

    numels = [
        _json_int(v, f"numels[{i}]")
        for i, v in enumerate(_json_list(fields.get("numels"), "numels"))
    ]
    degrees = [
        _json_int(v, f"dp_degrees[{i}]")
        for i, v in enumerate(
            _json_list(fields.get("dp_degrees"), "dp_degrees"))
    ]
    if not degrees:
        degrees = [1] * len(numels)
    elif len(degrees) == 1:
        degrees = degrees * len(numels)
    elif len(degrees) != len(numels):
        raise RequestError(
            f"dp_degrees has {len(degrees)} entries; expected 0, 1 or "
            f"{len(numels)}")
    search_range_m = _json_double(fields.get("search_range_m", 0),
                                  "search_range_m")
    search_interval = _json_int(fields.get("search_interval", 0),
                                "search_interval")
    min_chunk_size_m = _json_double(
        fields.get("min_chunk_size_m", DEFAULT_MIN_CHUNK_SIZE_M),
        "min_chunk_size_m")
    filter_exlarge = _json_bool(fields.get("filter_exlarge_params", True),
                                "filter_exlarge_params")
    # engine: accepted (name or number) and ignored.
    return (numels, degrees, search_range_m, search_interval,
            min_chunk_size_m, filter_exlarge)


# ---------------------------------------------------------------------------
# The seed, on plain data.


def _filter_exlarge_params(size_dict):
    """The seed's _filter_exlarge_params: drops, across all groups, every size
    above mean + 3 * std of all of them (numpy float64)."""
    agg_size_list = []
    for key in size_dict:
        agg_size_list.extend(size_dict[key])

    if len(agg_size_list) == 0:
        return

    params_size_arr = np.array(agg_size_list)

    std = np.std(params_size_arr)
    mean = np.mean(params_size_arr)
    upper_limit = mean + 3 * std

    for key in size_dict:
        org_list = size_dict[key]
        size_dict[key] = list(filter(lambda x: x <= upper_limit, org_list))


def _get_unused_byte(size_list, chunk_size):
    """The seed's _get_unused_byte: next-fit padding, the last chunk's tail
    included."""
    acc = 0
    left = 0
    for s in size_list:
        if s > left:
            acc += left
            left = chunk_size
        left -= s
    return left + acc


# Chunk sizes per block of _unused_bytes: 65536 int64 values a row. Below
# _VECTOR_FROM chunk sizes numpy's per-call cost outweighs the loop's.
_BLOCK = 1 << 16
_VECTOR_FROM = 512


def _unused_bytes(size_list, chunk_sizes):
    """_get_unused_byte(size_list, c) for every c of `chunk_sizes` (an int64
    array) at once: the same next-fit steps over size_list, each applied to
    every chunk size together. Exact where no value leaves int64
    (_fits_int64 says when)."""
    acc = np.zeros_like(chunk_sizes)
    left = np.zeros_like(chunk_sizes)
    for s in size_list:
        new = s > left
        acc += np.where(new, left, 0)
        left = np.where(new, chunk_sizes, left)
        left -= s
    return left + acc


def _fits_int64(size_dict, largest_chunk):
    """Whether every value _unused_bytes computes for chunk sizes up to
    `largest_chunk` stays inside int64: left lies in [-max size, chunk],
    acc adds one left a parameter, and the groups' wastes are summed."""
    bound = 0
    for size_list in size_dict.values():
        largest = max(size_list, default=0)
        bound += (len(size_list) + 2) * (largest_chunk + largest)
    return bound < 2**62


def _classify_by_degree(numels, degrees):
    """The seed's classify_params_by_dp_degree: degree -> sizes, degrees in
    first-seen order, visit order inside each."""
    params_dict = dict()
    for numel, degree in zip(numels, degrees):
        if degree not in params_dict:
            params_dict[degree] = []
        params_dict[degree].append(numel)
    return params_dict


def _search_chunk_configuration(numels, degrees, search_range_m,
                                search_interval, min_chunk_size_m,
                                filter_exlarge_params, strict):
    """The seed's search_chunk_configuration with the sizes given directly.
    Returns (config_dict, total_param_size, min_chunk_waste); raises where the
    mode raises."""
    search_range = round(search_range_m * 1024**2)
    min_chunk_size = round(min_chunk_size_m * 1024**2)
    if not search_range >= 0:  # the seed's assert
        raise AssertionError(
            f"search_range = {search_range}: assert search_range >= 0")
    if not strict and min_chunk_size < 0:
        raise ValueError(f"min_chunk_size = {min_chunk_size}: the contract "
                         "rejects a minimum that rounds below 0")

    params_dict = _classify_by_degree(numels, degrees)
    size_lcm = np.lcm.reduce(list(params_dict.keys()))
    config_dict = dict()
    total_param_size = 0

    size_dict = dict()
    for dp_degree in params_dict:
        size_list = list(params_dict[dp_degree])
        group_acc_size = sum(size_list)
        total_param_size += group_acc_size

        # let small parameters keep gathered in CUDA all the time
        if group_acc_size < min_chunk_size:
            config_dict[dp_degree] = dict(chunk_size=group_acc_size,
                                          keep_gathered=True)
        else:
            size_dict[dp_degree] = size_list

    if filter_exlarge_params:
        _filter_exlarge_params(size_dict)

    max_size = min_chunk_size
    for key in size_dict:
        if strict or size_dict[key]:  # the extension skips emptied groups
            max_size = max(max_size, max(size_dict[key]))
    start_size = int(math.ceil(max_size / search_interval) * search_interval)

    min_chunk_waste = float('+inf')
    best_chunk_size = start_size

    sizes = range(start_size, start_size + search_range + 1, search_interval)
    if len(sizes) >= _VECTOR_FROM and _fits_int64(size_dict, sizes[-1]):
        # The loop below, a block of chunk sizes at a time: argmin takes the
        # first of equal wastes, and a later block must be strictly less.
        for first in range(0, len(sizes), _BLOCK):
            block = np.array(sizes[first:first + _BLOCK], dtype=np.int64)
            waste = np.zeros_like(block)
            for key in size_dict:
                waste += _unused_bytes(size_dict[key], block)
            j = int(np.argmin(waste))
            if int(waste[j]) < min_chunk_waste:
                min_chunk_waste = int(waste[j])
                best_chunk_size = int(block[j])
    else:
        for chunk_size in sizes:
            temp_waste = 0
            for key in size_dict:
                temp_waste += _get_unused_byte(size_dict[key], chunk_size)
            if temp_waste < min_chunk_waste:
                min_chunk_waste = temp_waste
                best_chunk_size = chunk_size

    # the chunk size needs to be divided by each groups sizes
    best_chunk_size = best_chunk_size + (-best_chunk_size % size_lcm)
    for dp_degree in params_dict:
        if dp_degree in config_dict:
            continue
        config_dict[dp_degree] = dict(chunk_size=best_chunk_size,
                                      keep_gathered=False)

    return config_dict, total_param_size, min_chunk_waste


# ---------------------------------------------------------------------------
# The answer.


def _answer(config_dict, total_param_size, min_chunk_waste):
    """The answer part of a ChunkSearchResponse in protobuf's JSON mapping
    (64-bit integers as decimal strings)."""
    return {
        "configs": [{
            "dp_degree": int(degree),
            "chunk_size": str(int(config["chunk_size"])),
            "keep_gathered": bool(config["keep_gathered"]),
        } for degree, config in config_dict.items()],
        "total_param_size": str(int(total_param_size)),
        "min_chunk_waste": str(int(min_chunk_waste)),
    }


def _error(exc):
    return {"error": f"{type(exc).__name__}: {exc}"}


def search(request, strict=False):
    """The oracle's answer to one ChunkSearchRequest (a dict in protobuf's JSON
    form): {"configs": [...], "total_param_size": "N", "min_chunk_waste": "N"},
    or {"error": "..."} where the request is malformed or the chosen mode
    (the seed with --strict, else the contract) raises."""
    try:
        args = parse_request(request)
        if strict:
            result = _search_chunk_configuration(*args, strict=True)
        else:
            with np.errstate(divide="raise", over="raise", invalid="raise"):
                result = _search_chunk_configuration(*args, strict=False)
    except (ArithmeticError, AssertionError, ValueError, TypeError) as exc:
        return _error(exc)
    return _answer(*result)


def _search_line(line, strict):
    try:
        request = json.loads(line)
    except ValueError as exc:
        return _error(exc)
    return search(request, strict=strict)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--strict", action="store_true",
                        help="exactly the seed: no extension for emptied "
                        "groups, numpy warnings stay warnings")
    parser.add_argument("--jsonl", action="store_true",
                        help="one request per input line, one answer per "
                        "output line")
    args = parser.parse_args(argv)
    if args.jsonl:
        for line in sys.stdin:
            answer = _search_line(line, args.strict)
            sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
            sys.stdout.flush()
        return 0
    answer = _search_line(sys.stdin.read(), args.strict)
    sys.stdout.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
