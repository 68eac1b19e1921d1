"""The verdict on a kernel's outputs (qcheck.check), the oracle's outputs
(qcheck.expected), and two runs of a kernel (qcheck.run)."""

import ctypes
import json
import time

from . import _capi
from .tensors import make_tensors, pointer_array


class Verdict:
    """passed, exit_code (0 pass, 1 mismatch, 2 invalid input, 3 runtime
    error, as qcheck-replay), signature ("tensor/part/class" of the most
    severe mismatch), text and json (qcheck-replay's reports; json as a dict).
    Under profile="auto": profiles (every named profile that explains the
    outputs bit for bit; empty when none does, and then text says where no
    profile explains them and which comes closest per tensor) and
    judged_under (the profile the report is under)."""

    def __init__(self, exit_code, signature, text, report, profiles):
        self.exit_code = exit_code
        self.signature = signature
        self.text = text
        self.json = report
        self.passed = exit_code == 0
        self.profiles = profiles
        self.judged_under = report.get("judged_under", "")

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return f"qcheck.Verdict(exit_code={self.exit_code}, signature={self.signature!r})"


def _profile(profile):
    return None if profile is None else profile.encode()


def check(case, outputs, outputs_b=None, profile=None, kernel=None, max_listed=20, phases=None):
    """The verdict on the tensors a kernel wrote into: `outputs` from
    case.numpy_inputs() or case.torch_inputs() (run A, poison 0), and
    optionally `outputs_b` from a second run on poison 1, which tells an
    element never written from one written with the poison's bits and finds
    runs that differ. profile: None for the case's, a name of
    qcheck.profiles(), NAME+any-fma (any contraction pattern per row), or
    "auto" (every named profile). phases: a dict whose "transfers" and
    "verdict" get the seconds spent (qcheck.fuzz's time split)."""
    if outputs.poison != 0 or (outputs_b is not None and outputs_b.poison != 1):
        raise ValueError("outputs must come from a run on poison 0 and outputs_b from one on poison 1")
    run_a = outputs.host_raw(phases)  # the host copies stay alive until the judge has read them
    run_b = None
    if outputs_b is not None:
        host_b = outputs_b.host_raw(phases)
        run_b = pointer_array(host_b)
    start = time.monotonic()
    options = _capi.VerdictOptions(ctypes.sizeof(_capi.VerdictOptions), _profile(profile),
                                   None if kernel is None else kernel.encode(), max_listed)
    verdict = ctypes.c_void_p()
    _capi.call("qcheck_judge", case._handle, ctypes.byref(options), pointer_array(run_a), run_b, len(run_a),
               ctypes.byref(verdict))
    try:
        lib = _capi.lib()
        code = lib.qcheck_verdict_exit_code(verdict)
        signature = _capi.text("qcheck_verdict_signature", verdict)
        text = _capi.text("qcheck_verdict_text", verdict)
        report = json.loads(_capi.text("qcheck_verdict_json", verdict))
        listed = _capi.text("qcheck_verdict_profiles", verdict)
    finally:
        _capi.lib().qcheck_verdict_free(verdict)
        if phases is not None:
            phases["verdict"] += time.monotonic() - start
    return Verdict(code, signature, text, report, listed.split(",") if listed else [])


def expected(case, profile=None):
    """The oracle's outputs under `profile` (None: the case's), as numpy
    arrays in the case's layout: a Tensors whose outputs hold the expected
    values (its inputs are the case's inputs)."""
    return make_tensors(case, 0, device=None, expected_profile=profile or case.fields["profile"])


def run(case, kernel, device=None, profile=None, name=None):
    """Runs `kernel(tensors)` twice (on poison 0, then on poison 1) on numpy
    arrays (device None) or torch tensors on `device`, and judges both runs."""
    runs = []
    for poison in (0, 1):
        tensors = make_tensors(case, poison, device)
        kernel(tensors)
        runs.append(tensors)
    return check(case, runs[0], runs[1], profile=profile, kernel=name or getattr(kernel, "__name__", None))
