"""qcheck: bit-exact checks of the kernels that prepare DeepSeek Sparse
Attention's inputs (fused_q today: qcheck.ops() lists the ops) from Python.
Pure Python over libqcheck (ctypes): nothing to compile; numpy always,
torch where it is installed.

    case = qcheck.Case.from_seed(1, size="tiny")
    tensors = case.numpy_inputs()        # or case.torch_inputs(device="cuda")
    my_kernel(tensors)                   # writes the outputs in place
    verdict = qcheck.check(case, tensors)
    assert verdict.passed, verdict.text

The package's layers, lowest first: a module imports from its own layer
and the layers below it, never from one above, and no imports go round in
a circle (python/tests/check_python_imports.py reads this list and holds
the package to it).

    model         the case model and its C API binding (libqcheck through ctypes)
    reports       a fuzz run's result and how it is told: summary, JUnit, HTML
    parallel      runs of several processes: workers, restarts, MPS, GPU ledger, memory rules, Ray
    fuzzing       the fuzz loop of one process, its compile-aware schedule, the minimizer
    integrations  the command line and the pytest plugin

Above them, the package's own modules give the outside names: this one
(import qcheck), __main__ (python -m qcheck), pytest_plugin (the pytest11
entry point) and _tools (the console scripts).
"""

from .model._capi import API_VERSION, QcheckError, library_path
from .model._capi import VERSION as __version__
from .model.case import Case
from .model.domain import Domain, kernel
from .model.known import Known
from .model.tensors import Tensors
from .model.verdict import Against, Verdict, against, check, expected, run
from .model.plugin import Plugin
from .model.ops import Op, ops
from .reports.result import FuzzResult
from .fuzzing.loop import fuzz
from .fuzzing.minimize import Minimized, minimize
from .model import _capi


def assert_passes(case, kernel, device=None, profile=None):
    """pytest: runs the kernel on the case twice and fails with the verdict
    and a replay command unless it passes (qcheck.pytest_plugin)."""
    from .pytest_plugin import assert_passes as check_passes
    return check_passes(case, kernel, device=device, profile=profile)


def profiles():
    """The names of the known profiles (conventions the oracle can follow)."""
    return _capi.text("qcheck_profile_names").split(",")


__all__ = ["__version__", "API_VERSION", "Against", "Case", "Domain", "FuzzResult", "Known", "Minimized", "Op", "Plugin", "QcheckError", "Tensors",
           "Verdict", "against", "assert_passes", "check", "expected", "fuzz", "kernel", "library_path", "minimize",
           "ops", "profiles", "run"]
