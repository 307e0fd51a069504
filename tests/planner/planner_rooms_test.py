"""The planner's rooms include one way (docs/architecture.md): each of
candidate/, request/, layout/, engines/ and plan_search/ includes only from
itself, the rooms before it in that order, and the public front
(include/chunkplan/planner/); the front includes nothing but itself. And
nothing outside the planner but its tests, bench/ and testing/ reaches into
it: the service, the CLI and the server's other parts include only the
public front and never link chunkplan_planner_internal. Fails naming every
include (or link) that points the other way."""

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


# Where the planner's users live (its tests, bench/ and testing/ may reach
# in): what they include and link is checked.
USERS = ("server", "client")


def reaching_in(root):
    """Every (file, include or link) of the planner's users that reaches
    past its public front."""
    found = []
    for top in USERS:
        for f in sorted((root / top).rglob("*")):
            rel = f.relative_to(root).as_posix()
            if rel.startswith("server/planner/") or not f.is_file():
                continue
            if f.suffix in SOURCES:
                for target in ROOM_INCLUDE.findall(f.read_text()):
                    found.append(f"{rel} includes server/planner/{target}")
            elif f.name == "CMakeLists.txt":
                if "chunkplan_planner_internal" in f.read_text():
                    found.append(f"{rel} links chunkplan_planner_internal")
    return found


def main():
    root = pathlib.Path(__file__).resolve().parents[2]
    found = wrong_way(root / "server" / "planner",
                      root / "include" / "chunkplan" / "planner")
    found += reaching_in(root)
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} includes point against "
              f"{' -> '.join(reversed(ORDER))} or past the public front")
        return 1
    print("the planner's rooms include one way, and its users see its "
          "public front only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
