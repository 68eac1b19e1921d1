#!/usr/bin/env python3
"""How op-specific each room is: per room of cmake/rooms.txt (C++ and CUDA
sources, tracked files), its lines, the lines that name an op's own
vocabulary, and the files that do. An op's vocabulary is what libqcheck
lists for it (qcheck.ops(): its field and tensor names) plus its own name
in C++ spelling (fused_q, FusedQ). A room under ops/<op>/ counts whole.

The line share is a floor (a line inside an op's rule that names none of
its words is not counted); the file share shows the spread (files that an
op's vocabulary reaches). Issue 37's note quotes both, room by room.

usage: PYTHONPATH=python QCHECK_LIBRARY=build/default/capi/libqcheck.so \
       python3 tools/op_share/op_share.py [REPO]
"""

import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "rooms"))
from check_includes import read_table, room_of, tracked_sources  # noqa: E402  (the one reader of the table)

import qcheck  # noqa: E402


def vocabulary_pattern():
    words = set()
    for op in qcheck.ops().values():
        words.add(op.name)
        words.add("".join(part.capitalize() for part in op.name.split("_")))  # FusedQ
        words.update(f["name"] for f in op.fields)
        words.update(t["name"] for t in op.tensors)
    words.discard("seed")  # a generic word every room has
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True)) + r")")


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(here, "..", "..")
    rooms = read_table(root)
    pattern = vocabulary_pattern()
    totals = {}  # room -> [lines, op lines, files, op files]
    for path in tracked_sources(root):
        room = room_of(rooms, path)
        if room is None or room in ("tests",):
            continue
        with open(os.path.join(root, path), errors="replace") as f:
            lines = f.read().splitlines()
        whole = path.startswith("ops/") and not path.startswith("ops/registry/")
        named = len(lines) if whole else sum(1 for line in lines if pattern.search(line))
        t = totals.setdefault(room, [0, 0, 0, 0])
        t[0] += len(lines)
        t[1] += named
        t[2] += 1
        t[3] += 1 if named else 0
    print(f"{'room':<20} {'lines':>7} {'op lines':>9} {'share':>6} {'files':>6} {'naming':>7}")
    sums = [0, 0, 0, 0]
    for room in rooms:
        if room not in totals:
            continue
        t = totals[room]
        sums = [a + b for a, b in zip(sums, t)]
        print(f"{room:<20} {t[0]:>7} {t[1]:>9} {100 * t[1] / max(t[0], 1):>5.0f}% {t[2]:>6} {t[3]:>7}")
    print(f"{'all':<20} {sums[0]:>7} {sums[1]:>9} {100 * sums[1] / max(sums[0], 1):>5.0f}% {sums[2]:>6} {sums[3]:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
