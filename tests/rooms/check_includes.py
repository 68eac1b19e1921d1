#!/usr/bin/env python3
"""Every #include of every C, C++ and CUDA file follows the room table.

The table is cmake/rooms.txt, the one the build reads. A file belongs to the
room whose path is the longest prefix of its own; a file in no room is an
error (a new folder must be given a room). An include that names a file of the
repository (by its repository path, or relative to the including file) must
land in the file's own room or in a room it may use, directly or through the
rooms those may use. Includes of outside headers (the standard library, hwy,
gtest, CUDA) are not ours and are skipped.

usage: check_includes.py REPO_ROOT [FILE...]
  With FILEs, only those are checked (paths relative to REPO_ROOT); without,
  every tracked source under REPO_ROOT. Exit 0 when all follow the table,
  1 with one line per forbidden include, 2 on a broken table.
"""
import os
import re
import subprocess
import sys

SOURCE = re.compile(r"\.(h|cc|cu|cuh|hpp|cpp|c)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_table(root):
    rooms = {}  # name -> (paths, uses)
    with open(os.path.join(root, "cmake", "rooms.txt")) as table:
        for number, line in enumerate(table, 1):
            if not re.match(r"^[a-z]", line):
                continue
            fields = [f.strip() for f in line.split("|")]
            if len(fields) != 4:
                sys.exit(f"cmake/rooms.txt:{number}: a room line has 4 fields separated by |")
            name, _target, paths, uses = fields
            rooms[name] = (paths.split(), uses.split())
    for name, (_, uses) in rooms.items():
        for used in uses:
            if used != "*" and used not in rooms:
                print(f"cmake/rooms.txt: room {name} may use '{used}', which is no room", file=sys.stderr)
                sys.exit(2)
    return rooms


def reachable(rooms, name):
    """The rooms `name` may include: itself and the closure of its uses."""
    seen, todo = {name}, list(rooms[name][1])
    while todo:
        used = todo.pop()
        if used == "*":
            return set(rooms)
        if used not in seen:
            seen.add(used)
            todo.extend(rooms[used][1])
    return seen


def room_of(rooms, path):
    best, best_length = None, -1
    for name, (paths, _) in rooms.items():
        for prefix in paths:
            if (path == prefix or path.startswith(prefix + "/")) and len(prefix) > best_length:
                best, best_length = name, len(prefix)
    return best


def resolve(root, including, spelled):
    """The repository path an include names, or None for an outside header."""
    candidates = [os.path.normpath(os.path.join(os.path.dirname(including), spelled)), spelled,
                  os.path.join("include", spelled)]
    for candidate in candidates:
        if not candidate.startswith("..") and os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def tracked_sources(root):
    try:
        listed = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True, text=True).stdout
        files = listed.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: walk it
        files = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith((".", "build", "bundle"))]
            files += [os.path.relpath(os.path.join(folder, n), root) for n in names]
    return sorted(f for f in files if SOURCE.search(f) and os.path.isfile(os.path.join(root, f)))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    rooms = read_table(root)
    files = argv[2:] or tracked_sources(root)
    problems = []
    for path in files:
        room = room_of(rooms, path)
        if room is None:
            problems.append(f"{path}: in no room of cmake/rooms.txt")
            continue
        allowed = reachable(rooms, room)
        with open(os.path.join(root, path), errors="replace") as source:
            for number, line in enumerate(source, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = resolve(root, path, match.group(2))
                if target is None:
                    continue
                target_room = room_of(rooms, target)
                if target_room not in allowed:
                    problems.append(f"{path}:{number}: room {room} includes {match.group(2)} of room "
                                    f"{target_room}, which cmake/rooms.txt does not let it use")
    for problem in problems:
        print(problem)
    print(f"check_includes: {len(files)} files, {len(problems)} forbidden includes")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
