"""Where a measured backward peak is: the CPU memory events of
measure_torch's peak run, each with the running total and the innermost
operations open at its time, around the peak (for a request whose estimate
and measured peak disagree, e.g. a line of the differential tests'
chunkplan_activation_measured_failures_*.jsonl).

  /usr/bin/python3 tests/oracle/peak_trace.py [--after OP] [--before N] \\
      < request.jsonl

Reads the first request line (activation_oracle.py's format, "measure"
implied). Prints the oracle's estimate, then for each peak run the rows
before the backward peak (N, default 20) and two after it: bytes allocated
(negative: freed), the running total, and the two innermost operations.
--after OP: the largest total from the first event inside an operation
whose name contains OP (after the backward marker) instead, to find the
peak of a later part of the backward (a layer's, after the head's)."""

import argparse
import json
import sys

import activation_oracle
import measure_torch


def trail(prof):
    """[(start_us, bytes, running total, innermost op, the op around it)]
    of the profile's memory events (measure_torch.memory_events), and the
    start of the backward marker."""
    ops = sorted(((e.start_us(), e.start_us() + e.duration_us(), e.name())
                  for e in prof.profiler.kineto_results.events()
                  if e.name() != "[memory]"),
                 key=lambda o: o[1] - o[0])
    memory, mark = measure_torch.memory_events(prof)
    rows, total = [], 0
    for start, nbytes in memory:
        total += nbytes
        inside = [o[2] for o in ops if o[0] <= start <= o[1]]
        rows.append((start, nbytes, total, inside[0] if inside else "?",
                     inside[1] if len(inside) > 1 else ""))
    return rows, mark


def peak_row(rows, mark, after=None):
    """The index of the largest running total at or after the backward
    marker (and, with `after`, from the first row inside such an op)."""
    first = next(i for i, r in enumerate(rows) if r[0] >= mark)
    if after is not None:
        first = next(i for i in range(first, len(rows))
                     if after in rows[i][3] or after in rows[i][4])
    return max(range(first, len(rows)), key=lambda i: rows[i][2])


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after", default=None)
    parser.add_argument("--before", type=int, default=20)
    args = parser.parse_args(argv)
    request = json.loads(sys.stdin.readline())
    shape, work = activation_oracle.read_request(request)
    estimate = activation_oracle.estimate(shape, work, request.get("adapters"),
                                          request.get("tp"))
    print(f"estimate: total_bytes {estimate['total_bytes']} + "
          f"transient_bytes {estimate['transient_bytes']} = "
          f"{estimate['total_bytes'] + estimate['transient_bytes']}")
    tp = request.get("tp") or {}

    def show(key, prof):
        rows, mark = trail(prof)
        at = peak_row(rows, mark, args.after)
        print(f"{key}: {rows[at][2]} bytes at event {at} of {len(rows)}")
        for _, nbytes, total, op, around in rows[max(0, at - args.before):
                                                  at + 3]:
            print(f"  {nbytes:+12d} {total:12d}  {op}  <  {around}")

    measure_torch.measure(shape, work, request.get("family", "llama"),
                          request.get("seed", 0), tp.get("tp_size", 1),
                          tp.get("sequence_parallel", False), show)


if __name__ == "__main__":
    main(sys.argv[1:])
