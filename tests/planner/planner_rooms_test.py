"""The planner's rooms include one way (docs/architecture.md): each of
candidate/, plan/, layout/, engines/ and fit/ includes only from itself, the
rooms before it in that order, and the front's plain types (search_types.h,
objective.h, workload_types.h, verdict_types.h); those types include no room. Fails naming
every include that points the other way."""

import pathlib
import re
import sys

ORDER = ["candidate", "plan", "layout", "engines", "fit"]
TYPES = {"search_types.h", "objective.h", "workload_types.h",
         "verdict_types.h"}
INCLUDE = re.compile(r'#include "server/planner/([^"]+)"')


def room_of(path):
    """The room of a path relative to server/planner ('' for the front)."""
    parts = pathlib.PurePosixPath(path).parts
    return parts[0] if len(parts) > 1 else ""


def wrong_way(planner_dir):
    """Every (file, include) that points against the order."""
    found = []
    for f in sorted(planner_dir.rglob("*")):
        if f.suffix not in (".h", ".cc", ".cu"):
            continue
        rel = f.relative_to(planner_dir).as_posix()
        room = room_of(rel)
        for target in INCLUDE.findall(f.read_text()):
            to = room_of(target)
            if room == "" and rel not in TYPES:
                continue  # planner.{h,cc}: the front sees every room
            if to == "" and target in TYPES and rel not in TYPES:
                continue
            if rel in TYPES and to == "" and target in TYPES:
                continue
            if room in ORDER and to in ORDER and (
                    ORDER.index(to) <= ORDER.index(room)):
                continue
            found.append(f"{rel} includes server/planner/{target}")
    return found


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    found = wrong_way(root / "server" / "planner")
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} includes point against "
              f"{' -> '.join(reversed(ORDER))}")
        return 1
    print("the planner's rooms include one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
