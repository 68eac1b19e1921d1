#!/usr/bin/env python3
"""The Python package follows its layers, and the check can fail: the
package itself must pass check_python_imports.py (exit 0); a copy of it
with planted imports must be refused (exit 1), naming each by file and
line: a function-local import that runs back up (the case model importing
the fuzz loop), a module-level `import qcheck.x` that runs back up into
the package's own modules, import circles inside one layer (the MPS rules
importing the workers, which import them; the Ray nodes' module importing,
as a script does, the module beside it that imports it) and a sub-package
the layers do not name.

usage: planted_python_import_test.py REPO_ROOT"""
import os
import shutil
import subprocess
import sys
import tempfile

repo = sys.argv[1]
# (the check lies with the package's tests: the wheel's test run and the GPU bundle run them without tests/)
check = os.path.join(repo, "python", "tests", "check_python_imports.py")
package = os.path.join(repo, "python", "qcheck")


def run(folder):
    done = subprocess.run([sys.executable, check, folder], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def plant(root, path, text):
    """Appends `text` to the package's file at `path`; the line its first line lands on."""
    with open(os.path.join(root, path)) as f:
        lines = f.read().count("\n")
    with open(os.path.join(root, path), "a") as f:
        f.write("\n\n" + text)
    return lines + 3


status, output = run(package)
print(output, end="")
if status != 0:
    sys.exit(f"FAIL: python/qcheck itself was refused ({status})")

with tempfile.TemporaryDirectory() as tmp:
    copy = os.path.join(tmp, "qcheck")
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    up = plant(copy, "model/case.py", "def _planted():\n    from ..fuzzing.loop import fuzz\n    return fuzz\n") + 1
    top = plant(copy, "reports/summary.py", "import qcheck.pytest_plugin  # noqa\n")
    circle = plant(copy, "parallel/mps.py", "from . import workers  # noqa\n")
    beside = plant(copy, "parallel/ray_nodes.py", "import ray_campaign_exchange  # noqa (as a script imports)\n")
    os.makedirs(os.path.join(copy, "stray"))
    with open(os.path.join(copy, "stray", "__init__.py"), "w") as f:
        f.write('"""A sub-package in no layer."""\n')
    status, output = run(copy)
    print(output, end="")
    wanted = [f"qcheck/model/case.py:{up}: qcheck.model.case (layer model) imports qcheck.fuzzing.loop of layer "
              "fuzzing, above it",
              f"qcheck/reports/summary.py:{top}: qcheck.reports.summary (layer reports) imports "
              "qcheck.pytest_plugin of layer (top), above it",
              f"qcheck/parallel/mps.py:{circle}: qcheck.parallel.mps imports qcheck.parallel.workers",
              "import circle qcheck.parallel.mps -> qcheck.parallel.workers -> qcheck.parallel.mps",
              f"qcheck/parallel/ray_nodes.py:{beside}: qcheck.parallel.ray_nodes imports "
              "qcheck.parallel.ray_campaign_exchange",
              "qcheck/stray/__init__.py: in sub-package qcheck.stray, which the layers"]
    missing = [w for w in wanted if w not in output]
    if status != 1 or missing:
        sys.exit(f"FAIL: exit {status}, missing {missing}")
print("PASS: python/qcheck follows its layers; the planted upward imports, the circles and the sub-package in "
      "no layer were refused")
