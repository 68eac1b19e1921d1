"""qcheck.minimize: the C++ minimizer (tools/minimize) over a kernel called
from Python. libqcheck shrinks the case; every candidate it proposes comes
back here through a callback that runs the kernel twice and returns the
verdict, so the result keeps the same failure on this very kernel. A
kernel that raises shrinks while it raises the same type of exception (the
message's first line compared with its digits masked); the kernel's domain
keeps every candidate inside it."""

import ctypes
import re
import traceback
from pathlib import Path

from ..model import _capi
from ..model.case import Case, encode
from ..model.domain import domain_of, outside
from ..model.tensors import make_tensors
from ..model.verdict import raised_failure, run
from ..reports.result import replay_command


def _observation(case, kernel, device, profile):
    """(exit code, failure lines) as libqcheck's Observation wants them."""
    verdict = run(case, kernel, device=device, profile=profile)
    if verdict.passed:
        return 0, ""
    if verdict.exit_code >= 2:  # outside the domain, or the kernel raised: its reason, digits masked
        return verdict.exit_code, re.sub(r"[0-9]+", "#", verdict.json.get("reason", "").splitlines()[0])
    lines = [verdict.signature or verdict.json.get("reason", "")]
    lines += [f"{c['tensor']}/{c['part']}/{c['class']}" for c in verdict.json.get("counts", [])]
    return verdict.exit_code, "\n".join(lines)


class Minimized:
    """case (the minimized Case), report (report.txt), pytest
    (test_regression.py), out (the folder written), nondeterministic,
    outside (why the case is outside the kernel's domain, else None: then
    nothing was minimized)."""

    def __init__(self, case, report, pytest, out, nondeterministic=False, outside=None):
        self.case, self.report, self.pytest, self.out = case, report, pytest, out
        self.nondeterministic, self.outside = nondeterministic, outside


def _one_run(case, kernel, device):
    """The bytes one run from poison 0 leaves, or what the kernel raised."""
    tensors = make_tensors(case, 0, device)
    try:
        kernel(tensors)
    except _capi.QcheckError:
        raise
    except Exception as e:
        return raised_failure(e)
    return [a.tobytes() for a in tensors.host_raw()]


def _same_runs(case, kernel, device):
    """The determinism gate: two runs from the same bytes write the same
    bytes, or raise the same exception."""
    return _one_run(case, kernel, device) == _one_run(case, kernel, device)


def _failure_holds(case, kernel, device, profile):
    """Bytes that differ from run to run, with a failure that does not (the
    C++ minimizer's rule, failure_holds_across_runs): three runs fail alike,
    and the failure is not runs-that-differ."""
    seen = [(code, lines.split("\n")[0]) for code, lines in
            (_observation(case, kernel, device, profile) for _ in range(3))]
    return seen[0][0] != 0 and not seen[0][1].endswith("/nondeterministic") and all(o == seen[0] for o in seen)


def minimize(case, kernel, device=None, profile=None, budget=60.0, out=None, adapter=None, explain=True):
    """Shrinks `case`, which fails on `kernel`, to the smallest case that fails
    the same way, and writes into `out` (default minimized-DIGEST):
    minimized.json, minimized.case, report.txt, test_regression.py (a
    pytest test for `adapter`, "MODULE:FUNCTION", default the kernel's own)
    and replay.txt. A kernel whose runs differ is reported and not shrunk."""
    adapter = adapter or f"{kernel.__module__}:{kernel.__qualname__}"
    out = Path(out or f"minimized-{case.digest}")
    out.mkdir(parents=True, exist_ok=True)
    why = outside(kernel, case)
    if why is not None:
        report = f"qcheck.minimize: OUTSIDE THE DOMAIN of {adapter}: {why}; not minimized (not a finding)\n"
        (out / "report.txt").write_text(report)
        return Minimized(case, report, "", out, outside=why)
    if not _same_runs(case, kernel, device) and not _failure_holds(case, kernel, device, profile):
        report = (f"qcheck.minimize: NONDETERMINISTIC on {adapter}: two runs of the same inputs wrote different "
                  f"bytes and did not fail alike; not minimized (a race is not a fixed bug)\ncase: {case}\n")
        (out / "report.txt").write_text(report)
        return Minimized(case, report, "", out, nondeterministic=True)

    errors = []

    def evaluate(candidate, user, failure, size):
        try:
            # The candidate belongs to libqcheck: a case of our own from its bytes.
            own = Case.from_bytes(encode(ctypes.c_void_p(candidate), _capi.FORM_BINARY))
            code, lines = _observation(own, kernel, device, profile)
            encoded = lines.encode()[:size - 1] + b"\0"
            ctypes.memmove(failure, encoded, len(encoded))
            return code
        except BaseException:  # never let an exception cross into C++
            errors.append(traceback.format_exc())
            return 3

    callback = _capi.EVALUATE(evaluate)
    domain = domain_of(kernel)
    options = _capi.MinimizeOptions(ctypes.sizeof(_capi.MinimizeOptions), float(budget), 1 if explain else 0,
                                    domain._handle if domain is not None else None)
    handle = ctypes.c_void_p()
    _capi.call("qcheck_minimize", case._handle, callback, None, ctypes.byref(options), ctypes.byref(handle))
    try:
        if errors:
            raise RuntimeError("qcheck.minimize: the evaluation failed:\n" + errors[0])
        minimized_handle = ctypes.c_void_p()
        _capi.lib().qcheck_minimized_case(handle, ctypes.byref(minimized_handle))
        minimized = Case(minimized_handle.value)
        verdict = run(minimized, kernel, device=device, profile=profile)
        replay = replay_command(out / "minimized.json", adapter, profile, device)
        report = _capi.text("qcheck_minimized_report", handle, adapter.encode(), verdict.text.encode(), replay.encode())
        pytest = _capi.text("qcheck_minimized_pytest", handle, adapter.encode(),
                            None if profile is None else profile.encode(), None if device is None else str(device).encode())
    finally:
        _capi.lib().qcheck_minimized_free(handle)
    minimized.save(out / "minimized.json")
    minimized.save(out / "minimized.case")
    for name, text in (("report.txt", report), ("test_regression.py", pytest), ("replay.txt", replay + "\n")):
        partial = out / (name + ".partial")
        partial.write_text(text)
        partial.replace(out / name)
    return Minimized(minimized, report, pytest, out)
