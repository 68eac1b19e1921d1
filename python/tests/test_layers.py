"""The package's imports follow its layers (the list in qcheck/__init__.py)
with no circle: check_python_imports.py over the package these tests import
(the source tree's, or an installed wheel's). Its planted failures:
tests/rooms/planted_python_import_test.py."""

import subprocess
import sys
from pathlib import Path

import qcheck

CHECK = Path(__file__).resolve().parent / "check_python_imports.py"


def test_the_package_follows_its_layers():
    package = Path(qcheck.__file__).resolve().parent
    done = subprocess.run([sys.executable, str(CHECK), str(package)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 problems" in done.stdout
