"""The planner's rooms include one way (docs/architecture.md): each of
candidate/, request/, layout/, engines/ and plan_search/ includes only from
itself, the rooms before it in that order, and the public front
(include/chunkplan/planner/); the front includes nothing but itself. Fails
naming every include that points the other way."""

import pathlib
import re
import sys

ORDER = ["candidate", "request", "layout", "engines", "plan_search"]
ROOM_INCLUDE = re.compile(r'#include "server/planner/([^"]+)"')
SOURCES = (".h", ".cc", ".cu")


def room_of(path):
    """The room of a path relative to server/planner ('' for the front)."""
    parts = pathlib.PurePosixPath(path).parts
    return parts[0] if len(parts) > 1 else ""


def wrong_way(planner_dir, front_dir):
    """Every (file, include) that points against the order."""
    found = []
    for f in sorted(front_dir.glob("*.h")):
        for target in ROOM_INCLUDE.findall(f.read_text()):
            found.append(f"include/chunkplan/planner/{f.name} includes "
                         f"server/planner/{target}")
    for f in sorted(planner_dir.rglob("*")):
        if f.suffix not in SOURCES:
            continue
        rel = f.relative_to(planner_dir).as_posix()
        room = room_of(rel)
        if room == "":
            continue  # planner.cc, search_types.cc: the front sees every room
        for target in ROOM_INCLUDE.findall(f.read_text()):
            to = room_of(target)
            if room in ORDER and to in ORDER and (
                    ORDER.index(to) <= ORDER.index(room)):
                continue
            found.append(f"{rel} includes server/planner/{target}")
    return found


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    found = wrong_way(root / "server" / "planner",
                      root / "include" / "chunkplan" / "planner")
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
