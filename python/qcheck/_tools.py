"""The console scripts of the wheel (pyproject.toml [project.scripts]):
qcheck-replay, qcheck-minimize, qcheck-case and qcheck-check run the C++
tools the wheel carries in qcheck/bin, with the arguments given."""

import os
import sys
from pathlib import Path


def _run(name):
    binary = Path(__file__).resolve().parent / "bin" / name
    if not binary.is_file():
        sys.exit(f"{name}: not in this installation ({binary} is missing): the tools come with the wheel "
                 "(./qcheck wheel DIR), or run them from a build tree")
    os.execv(str(binary), [name] + sys.argv[1:])


def replay():
    _run("qcheck-replay")


def minimize():
    _run("qcheck-minimize")


def case():
    _run("qcheck-case")


def check():
    _run("qcheck-check")
