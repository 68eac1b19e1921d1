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
from .case import Case
from .tensors import Tensors
from .verdict import Verdict, check, expected, run
from . import _capi


def profiles():
    """The names of the known profiles (conventions the oracle can follow)."""
    return _capi.text("qcheck_profile_names").split(",")


__all__ = ["API_VERSION", "Case", "QcheckError", "Tensors", "Verdict", "check", "expected", "library_path",
           "profiles", "run"]
