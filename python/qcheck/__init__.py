"""qcheck: bit-exact checks of fused_q kernels (DeepSeek Sparse Attention's
query preparation) from Python. Pure Python over libqcheck (ctypes): nothing
to compile; numpy always, torch where it is installed.

    case = qcheck.Case.from_seed(1, size="tiny")
    tensors = case.numpy_inputs()        # or case.torch_inputs(device="cuda")
    my_kernel(tensors)                   # writes the outputs in place
    verdict = qcheck.check(case, tensors)
    assert verdict.passed, verdict.text
"""

from ._capi import API_VERSION, QcheckError, library_path
from ._capi import VERSION as __version__
from .case import Case
from .domain import Domain, kernel
from .known import Known
from .tensors import Tensors
from .verdict import Against, Verdict, against, check, expected, run
from .plugin import Plugin
from .fuzz import FuzzResult, fuzz
from .minimize import Minimized, minimize
from . import _capi


def assert_passes(case, kernel, device=None, profile=None):
    """pytest: runs the kernel on the case twice and fails with the verdict
    and a replay command unless it passes (qcheck.pytest_plugin)."""
    from .pytest_plugin import assert_passes as check_passes
    return check_passes(case, kernel, device=device, profile=profile)


def profiles():
    """The names of the known profiles (conventions the oracle can follow)."""
    return _capi.text("qcheck_profile_names").split(",")


__all__ = ["__version__", "API_VERSION", "Against", "Case", "Domain", "FuzzResult", "Known", "Minimized", "Plugin", "QcheckError", "Tensors",
           "Verdict", "against", "assert_passes", "check", "expected", "fuzz", "kernel", "library_path", "minimize",
           "profiles", "run"]
