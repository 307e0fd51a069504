#!/usr/bin/python3
"""The model-family oracle (tests/oracle/models) from the command line, for
tests in other languages.

  models_oracle.py [--jsonl]      reads {"hf_config_json": TEXT or
      "config": OBJECT, "architecture": NAME (optional)}; writes
      {"model_type", "architecture", "hidden_size", "names", "numels",
      "total"} or {"error": MESSAGE}
  models_oracle.py --random FAMILY --seed N [--count K]
      writes K random small configs of FAMILY, one JSON object a line
  models_oracle.py --families     writes the family names, one a line
"""

import argparse
import json
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import models  # noqa: E402


def describe(request):
    """The answer to one request (a JSON text)."""
    try:
        request = json.loads(request)
        if not isinstance(request, dict):
            raise ValueError("request: not a JSON object")
        if "hf_config_json" in request:
            config = json.loads(request["hf_config_json"])
        else:
            config = request["config"]
        if not isinstance(config, dict):
            raise ValueError("config: not a JSON object")
        d = models.describe(config, request.get("architecture") or None)
    except (ValueError, KeyError, TypeError) as error:
        return {"error": str(error)}
    return {"model_type": d.model_type, "architecture": d.architecture,
            "hidden_size": d.hidden_size, "names": d.names,
            "numels": d.numels, "total": d.total}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jsonl", action="store_true",
                        help="one request per input line, one answer per "
                        "output line")
    parser.add_argument("--random", metavar="FAMILY",
                        help="write random configs of FAMILY instead")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--count", type=int, default=1)
    parser.add_argument("--families", action="store_true",
                        help="write the family names instead")
    args = parser.parse_args(argv)
    if args.families:
        sys.stdout.write("".join(f + "\n" for f in models.FAMILIES))
    elif args.random:
        rng = random.Random(args.seed)
        for _ in range(args.count):
            config = models.random_config(args.random, rng)
            sys.stdout.write(json.dumps(config) + "\n")
    elif args.jsonl:
        for line in sys.stdin:
            sys.stdout.write(json.dumps(describe(line),
                                        separators=(",", ":")) + "\n")
            sys.stdout.flush()
    else:
        sys.stdout.write(json.dumps(describe(sys.stdin.read())) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
