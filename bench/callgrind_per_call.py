#!/usr/bin/python3
"""Instructions per call from a callgrind profile: repeatable under load.

    callgrind_per_call.py FILE [--fn REGEX ...] [--per N]

For each --fn REGEX, the functions whose (demangled) names match it, summed
over every call site in FILE: the calls, their inclusive instructions (Ir)
and Ir per call. --per N also prints the profile's total Ir divided by N
(the calls a driver sent while the profile was collected: a server under
callgrind, zeroed with `callgrind_control -z` after a warm-up and dumped
with `callgrind_control -d` after N calls). Inclusive costs are read from
the `calls=` lines, so a function inlined into its caller has no calls of
its own: match an out-of-line function, and a recursive one is counted once
per level.

    valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        build/bin/chunkplan_bench --benchmark_filter='^INTAKE/llama-2-70b$'
    bench/callgrind_per_call.py cg.out --fn 'service::ParseAndCheck\\('
"""

import argparse
import re
import sys

# fn=(12) name, or fn=(12) once the name was given; the same for cfn=.
NAMED = re.compile(r"^(c?fn)=(?:\((\d+)\))?\s*(.*)$")


def read_profile(path):
    """{callee name: [calls, inclusive Ir]} and the total Ir of `path`."""
    names = {}
    callees = {}
    total = None
    callee = None
    pending_calls = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = NAMED.match(line)
            if m:
                kind, ident, name = m.groups()
                if ident is not None and name:
                    names[ident] = name
                elif ident is not None:
                    name = names.get(ident, ident)
                if kind == "cfn":
                    callee = name
                continue
            if line.startswith("calls="):
                pending_calls = int(line[len("calls="):].split()[0])
                continue
            if pending_calls is not None:
                # The line after calls=: position, then the inclusive Ir.
                fields = line.split()
                inclusive = int(fields[1]) if len(fields) > 1 else 0
                entry = callees.setdefault(callee, [0, 0])
                entry[0] += pending_calls
                entry[1] += inclusive
                pending_calls = None
                continue
            if line.startswith("summary:") or line.startswith("totals:"):
                total = int(line.split()[1])
    return callees, total


def read_totals(path):
    """{event: total} from the `events:` and `summary:`/`totals:` lines."""
    names, values = [], []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith(("summary:", "totals:")):
                values = [int(v) for v in line.split()[1:]]
    return dict(zip(names, values))


def matching(callees, pattern):
    """(calls, inclusive Ir, names) summed over the callees whose names
    match the regular expression `pattern`."""
    regex = re.compile(pattern)
    calls = inclusive = 0
    names = []
    for name, (n, ir) in callees.items():
        if regex.search(name):
            calls += n
            inclusive += ir
            names.append(name)
    return calls, inclusive, names


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("profile", help="a callgrind.out file")
    parser.add_argument("--fn", action="append", default=[],
                        help="a regular expression over function names "
                        "(repeatable)")
    parser.add_argument("--per", type=int,
                        help="divide the profile's total Ir by this count")
    args = parser.parse_args()
    callees, total = read_profile(args.profile)
    if args.per:
        if total is None:
            print("no summary/totals line in the profile", file=sys.stderr)
            return 2
        print(f"total Ir {total:,} / {args.per:,} = "
              f"{total / args.per:,.0f} Ir per call")
    status = 0
    for pattern in args.fn:
        calls, inclusive, names = matching(callees, pattern)
        if calls == 0:
            print(f"{pattern}: no calls found", file=sys.stderr)
            status = 1
            continue
        print(f"{pattern}: {calls:,} calls, {inclusive:,} Ir inclusive, "
              f"{inclusive / calls:,.0f} Ir per call "
              f"({len(names)} function(s): {'; '.join(names)[:300]})")
    return status


if __name__ == "__main__":
    sys.exit(main())
