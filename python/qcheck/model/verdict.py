"""The verdict on a kernel's outputs (qcheck.check), the oracle's outputs
(qcheck.expected), two runs of a kernel (qcheck.run, with graph=True a third
replayed from a CUDA graph), and two kernels against each other
(qcheck.against). A case outside the kernel's domain is a verdict of exit
2 with the reason, and a kernel that raises one of exit 3 whose signature
names the exception's type: no entry point lets the kernel's exception
through."""

import contextlib
import ctypes
import json
import re
import time
import traceback

from . import _capi
from .domain import outside
from .out_of_memory import is_out_of_memory, measuring
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
        self.notes = []  # what the run could not see (qcheck.model.allocator), in words
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


def outside_verdict(case, why, kernel=None):
    """The verdict on a case the kernel does not support: exit 2, never a finding."""
    reason = f"outside the domain of {kernel or 'the kernel'}: {why}"
    report = {"verdict": "invalid input", "exit_code": 2, "reason": reason, "backend": kernel or "",
              "case": str(case)}
    return Verdict(2, "", f"INVALID INPUT: {reason}\n", report, [])


def raised_signature(error):
    """The signature of a kernel's exception: its type, and for a compiler's
    error (Triton's CompilationError and its kin) a class of its own."""
    kind = type(error).__name__
    if "Compil" in kind:
        return f"kernel failed to compile ({kind})"
    return f"kernel raised {kind}"


def raised_failure(error):
    """What must stay the same while a raising case shrinks: the signature
    and the message's first line, digits masked."""
    first = str(error).splitlines()[0] if str(error) else ""
    return re.sub(r"[0-9]+", "#", f"{raised_signature(error)}: {first}")


def raised_verdict(case, error, kernel=None):
    """The verdict on a run where the kernel raised: exit 3, the exception's
    type as the signature, the traceback's last lines in the text."""
    first = str(error).splitlines()[0] if str(error) else ""
    tail = "".join(traceback.format_exception(type(error), error, error.__traceback__)).splitlines()[-12:]
    reason = f"{raised_signature(error)}: {first}"
    report = {"verdict": "runtime error", "exit_code": 3, "reason": reason, "backend": kernel or "",
              "exception": type(error).__name__, "case": str(case), "traceback": tail,
              "out_of_memory": is_out_of_memory(error)}
    return Verdict(3, raised_signature(error), "RUNTIME ERROR: " + reason + "\n" + "\n".join(tail) + "\n",
                   report, [])


def _profile(profile):
    return None if profile is None else profile.encode()


def check(case, outputs, outputs_b=None, profile=None, kernel=None, max_listed=20, phases=None, outputs_graph=None,
          domain=None):
    """The verdict on the tensors a kernel wrote into: `outputs` from
    case.numpy_inputs() or case.torch_inputs() (run A, poison 0), and
    optionally `outputs_b` from a second run on poison 1, which tells an
    element never written from one written with the poison's bits and finds
    runs that differ. profile: None for the case's, a name of
    qcheck.profiles(), NAME+any-fma (any contraction pattern per row), or
    "auto" (every named profile). phases: a dict whose "transfers" and
    "verdict" get the seconds spent (qcheck.fuzz's time split).
    outputs_graph: a third run on poison 0, the launch replayed from a CUDA
    graph; every byte that differs from outputs' is graph-replay-differs.
    domain: the kernel's qcheck.Domain; a case outside it is exit 2."""
    why = domain.outside(case) if domain is not None else None
    if why is not None:
        return outside_verdict(case, why, kernel)
    if outputs.poison != 0 or (outputs_b is not None and outputs_b.poison != 1):
        raise ValueError("outputs must come from a run on poison 0 and outputs_b from one on poison 1")
    run_a = outputs.host_raw(phases)  # the host copies stay alive until the judge has read them
    run_b = None
    if outputs_b is not None:
        host_b = outputs_b.host_raw(phases)
        run_b = pointer_array(host_b)
    run_graph = None
    if outputs_graph is not None:
        if outputs_graph.poison != 0:
            raise ValueError("outputs_graph must come from a run on poison 0")
        host_graph = outputs_graph.host_raw(phases)
        run_graph = ctypes.cast(pointer_array(host_graph), ctypes.POINTER(ctypes.c_void_p))
    start = time.monotonic()
    options = _capi.VerdictOptions(ctypes.sizeof(_capi.VerdictOptions), _profile(profile),
                                   None if kernel is None else kernel.encode(), max_listed, run_graph)
    verdict = ctypes.c_void_p()
    _capi.call("qcheck_judge", case._handle, ctypes.byref(options), pointer_array(run_a), run_b, len(run_a),
               ctypes.byref(verdict))
    try:
        result = _read_verdict(verdict)
    finally:
        _capi.lib().qcheck_verdict_free(verdict)
        if phases is not None:
            phases["verdict"] += time.monotonic() - start
    notes = [n for t in (outputs, outputs_b) if t is not None for n in getattr(t, "notes", [])]
    if notes:
        result.notes = sorted(set(notes))
        result.text += "".join(f"note: {n}\n" for n in result.notes)
        result.json["notes"] = result.notes
    return result


def _read_verdict(verdict):
    lib = _capi.lib()
    code = lib.qcheck_verdict_exit_code(verdict)
    signature = _capi.text("qcheck_verdict_signature", verdict)
    text = _capi.text("qcheck_verdict_text", verdict)
    report = json.loads(_capi.text("qcheck_verdict_json", verdict))
    listed = _capi.text("qcheck_verdict_profiles", verdict)
    return Verdict(code, signature, text, report, listed.split(",") if listed else [])


def expected(case, profile=None):
    """The oracle's outputs under `profile` (None: the case's), as numpy
    arrays in the case's layout: a Tensors whose outputs hold the expected
    values (its inputs are the case's inputs)."""
    return make_tensors(case, 0, device=None, expected_profile=profile or "")  # "": the case's


def _on_cuda(device):
    return device is not None and str(device).startswith("cuda")


def _synchronize(device):
    if _on_cuda(device):
        import torch
        torch.cuda.synchronize()


def kernel_runs(case, kernel, device=None, phases=None, graph=False, poison_allocator=True, memory=None):
    """([run A, run B], graph run or None): `kernel(tensors)` on poison 0 and
    on poison 1, and with graph=True once more on poison 0, captured in a
    torch.cuda.CUDAGraph and replayed (the kernel must be capturable: no
    synchronization or host copy inside). phases["kernel"] gets the seconds
    of the eager runs, phases["allocator"] those of the poisoning. On a CUDA
    device, poison_allocator runs the kernel with its allocations in a pool
    filled with the run's poison first (qcheck.model.allocator), so outputs
    a wrapper allocates itself start poisoned; each run's .notes say what
    that could not reach. memory: a
    dict that gets what the kernel allocated (qcheck.model.out_of_memory.measuring)."""
    runs = []
    for poison in (0, 1):
        tensors = make_tensors(case, poison, device, phases=phases)
        watch = None
        if poison_allocator and _on_cuda(device):
            from .allocator import poison_allocator as poison_pool
            start = time.monotonic()
            watch = poison_pool(device, poison, 2 * tensors.block.numel())
            if phases is not None:
                phases["allocator"] = phases.get("allocator", 0.0) + time.monotonic() - start
        start = time.monotonic()
        routing = watch.routing() if watch is not None else contextlib.nullcontext()
        if memory is None:
            with routing:
                kernel(tensors)
            _synchronize(device)
        else:
            with measuring(device, memory), routing:
                kernel(tensors)
                _synchronize(device)
        if phases is not None:
            phases["kernel"] += time.monotonic() - start
        tensors.notes = watch.notes() if watch is not None else []
        runs.append(tensors)
    replayed = None
    if graph:
        if not _on_cuda(device):
            raise ValueError("graph=True needs a CUDA device (torch.cuda.CUDAGraph)")
        import torch
        replayed = make_tensors(case, 0, device, phases=phases)
        before = replayed.block.clone()
        captured = torch.cuda.CUDAGraph()
        with torch.cuda.graph(captured):
            kernel(replayed)
        torch.cuda.synchronize()
        # Capturing records the launches without running them: bytes that
        # changed already were written by a launch outside the capture (on
        # another stream), which a replay would never repeat.
        if not torch.equal(before, replayed.block):
            raise RuntimeError("the kernel wrote its buffers while being captured: it launched outside the "
                               "capture stream (torch.cuda.current_stream()), so a CUDA graph would not hold it")
        captured.replay()
        torch.cuda.synchronize()
    return runs, replayed


def _name(kernel, name=None):
    return name or getattr(kernel, "__name__", None)


def run(case, kernel, device=None, profile=None, name=None, graph=False, phases=None, poison_allocator=True,
        memory=None):
    """Runs `kernel(tensors)` twice (on poison 0, then on poison 1) on numpy
    arrays (device None) or torch tensors on `device`, and judges both runs
    (profile None: the kernel's .profile if it has one, as a qcheck.Plugin
    or @qcheck.kernel says, else the case's). graph=True also compares a
    replay from a CUDA graph with the eager run. A case outside the kernel's
    domain is not run (exit 2); a kernel that raises gives exit 3 (its
    report's out_of_memory says whether memory ran out). memory: a dict
    that gets what the kernel allocated (qcheck.model.out_of_memory)."""
    why = outside(kernel, case)
    if why is not None:
        return outside_verdict(case, why, _name(kernel, name))
    if graph and not _on_cuda(device):
        raise ValueError("graph=True needs a CUDA device (torch.cuda.CUDAGraph)")
    try:
        runs, replayed = kernel_runs(case, kernel, device, phases=phases, graph=graph,
                                     poison_allocator=poison_allocator, memory=memory)
    except _capi.QcheckError:
        raise  # the library refused the case: not the kernel's doing
    except Exception as e:  # the kernel raised, or the device faulted
        return raised_verdict(case, e, _name(kernel, name))
    profile = profile or getattr(kernel, "profile", None)
    return check(case, runs[0], runs[1], profile=profile, kernel=_name(kernel, name), outputs_graph=replayed,
                 phases=phases)


class Against:
    """Two kernels on the same case: first and second (each one's Verdict,
    under auto unless a profile was given: .profiles names what each
    follows), difference (a Verdict whose report is where second's outputs
    differ from first's, first in the oracle's place; None when a kernel did
    not run to a verdict), passed (both ran and agree bit for bit), text."""

    def __init__(self, first, second, difference):
        self.first, self.second, self.difference = first, second, difference
        self.passed = difference is not None and difference.passed

    def __bool__(self):
        return self.passed

    @property
    def text(self):
        head = ("the outputs agree bit for bit" if self.passed else
                "not compared (a kernel did not run)" if self.difference is None else
                f"they differ: {self.difference.signature}")
        parts = [f"AGAINST: {head}", "== first\n" + self.first.text, "== second\n" + self.second.text]
        if self.difference is not None and not self.passed:
            parts.append("== differences\n" + self.difference.text)
        return "\n".join(parts)


def against(case, first, second, device=None, profile="auto", names=None):
    """Kernel against kernel (qcheck-replay --against): both on the same
    inputs, each judged (under auto by default), and their outputs compared
    element by element."""
    first_name, second_name = names or (_name(first) or "first kernel", _name(second) or "second kernel")
    verdicts, runs = [], []
    for kernel, name in ((first, first_name), (second, second_name)):
        why = outside(kernel, case)
        if why is not None:
            verdicts.append(outside_verdict(case, why, name))
            runs.append(None)
            continue
        try:
            r, _ = kernel_runs(case, kernel, device)
        except _capi.QcheckError:
            raise
        except Exception as e:
            verdicts.append(raised_verdict(case, e, name))
            runs.append(None)
            continue
        verdicts.append(check(case, r[0], r[1], profile=profile, kernel=name))
        runs.append(r)
    if any(v.exit_code >= 2 for v in verdicts):
        return Against(verdicts[0], verdicts[1], None)
    runs_first, runs_second = runs
    host_first, host_second = runs_first[0].host_raw(), runs_second[0].host_raw()
    out = ctypes.c_void_p()
    _capi.call("qcheck_differ", case._handle, first_name.encode(), pointer_array(host_first), second_name.encode(),
               pointer_array(host_second), len(host_first), 20, ctypes.byref(out))
    try:
        difference = _read_verdict(out)
    finally:
        _capi.lib().qcheck_verdict_free(out)
    return Against(verdicts[0], verdicts[1], difference)
