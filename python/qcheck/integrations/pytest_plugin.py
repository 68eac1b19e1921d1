"""A pytest plugin: a kernel repository adds one test file,

    def test_my_kernel(qcheck_case):
        qcheck.assert_passes(qcheck_case, my_adapter, device="cuda")

    @pytest.mark.qcheck_cuda
    def test_fuzz_my_kernel(qcheck_fuzz):
        qcheck_fuzz(my_adapter, device="cuda", cases=500)   # or seconds=60

and the test runs once per case: every case file of --qcheck-corpus DIR
(default: none) and --qcheck-cases N generated cases (default 20, sizes
--qcheck-size, seeds from --qcheck-seed, of the op --qcheck-op: fused_q, or
fused_k for a key-side kernel). The options exist when the plugin
is loaded before the command line is read (installed, qcheck registers it
through the pytest11 entry point; else `-p qcheck.pytest_plugin`, or
pytest_plugins in the root conftest.py); otherwise the environment gives
them (QCHECK_CORPUS, QCHECK_CASES, QCHECK_CASE_SIZE, QCHECK_SEED, QCHECK_OP).

The marker qcheck_cuda skips a test, with the reason, where torch is not
installed or sees no CUDA device. The fixture qcheck_fuzz is a function:
qcheck_fuzz(kernel, cases=N or seconds=S, device=..., **qcheck.fuzz's
options) fuzzes the kernel in this process (findings under the test's
tmp_path) and fails the test with the first finding's verdict and replay
command; it returns the FuzzResult. Defaults: --qcheck-fuzz-cases (200) or
--qcheck-fuzz-seconds (QCHECK_FUZZ_CASES, QCHECK_FUZZ_SECONDS). A failure
prints the verdict and the command that replays the case. A kernel with a
domain (qcheck.Domain) gets a generated case outside it repaired or
regenerated, and a corpus file outside it skipped with the reason.
"""

import os
from pathlib import Path

import pytest

from ..fuzzing.loop import fuzz
from ..model.case import Case
from ..model.domain import fit, outside
from ..model.verdict import run
from ..reports.result import replay_command


def pytest_addoption(parser):
    group = parser.getgroup("qcheck")
    group.addoption("--qcheck-corpus", default=None, help="a folder of case files to test")
    group.addoption("--qcheck-cases", type=int, default=None, help="generated cases to test (20)")
    group.addoption("--qcheck-size", default=None, choices=["tiny", "usual", "default"])
    group.addoption("--qcheck-seed", type=int, default=None)
    group.addoption("--qcheck-op", default=None, help="the op of the generated cases (fused_q; python -m qcheck ops)")
    group.addoption("--qcheck-fuzz-cases", type=int, default=None, help="cases per qcheck_fuzz call (200)")
    group.addoption("--qcheck-fuzz-seconds", type=float, default=None,
                    help="seconds per qcheck_fuzz call (instead of a number of cases)")


def pytest_configure(config):
    config.addinivalue_line("markers", "qcheck_cuda: needs torch and a CUDA device; skipped with the reason "
                                       "where there is none")


def _cuda_missing():
    """Why CUDA tests cannot run here, or None."""
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device is visible (torch.cuda.is_available() is False)"
    return None


def pytest_runtest_setup(item):
    if item.get_closest_marker("qcheck_cuda") is not None:
        why = _cuda_missing()
        if why is not None:
            pytest.skip(f"qcheck_cuda: {why}")


def _option(config, name, variable, default, kind=str):
    value = config.getoption(name, default=None)
    if value is None:
        value = os.environ.get(variable, default)
    return None if value is None else kind(value)


def pytest_generate_tests(metafunc):
    if "qcheck_case" not in metafunc.fixturenames:
        return
    config = metafunc.config
    params, ids = [], []
    corpus = _option(config, "--qcheck-corpus", "QCHECK_CORPUS", None)
    if corpus:
        for path in sorted(Path(corpus).iterdir()):
            if path.is_file() and not path.name.startswith("README") and path.suffix != ".md":
                params.append(("file", str(path)))
                ids.append(path.name)
    seed = _option(config, "--qcheck-seed", "QCHECK_SEED", 1, int)
    for i in range(_option(config, "--qcheck-cases", "QCHECK_CASES", 20, int)):
        params.append(("seed", seed + i))
        ids.append(f"seed{seed + i}")
    metafunc.parametrize("qcheck_case", params, ids=ids, indirect=True)


@pytest.fixture
def qcheck_case(request):
    kind, value = request.param
    if kind == "file":
        return Case.load(value)
    size = _option(request.config, "--qcheck-size", "QCHECK_CASE_SIZE", "tiny")
    op = _option(request.config, "--qcheck-op", "QCHECK_OP", "fused_q")
    case = Case.from_seed(value, size, op=op)
    case.generated = (value, size, op)  # assert_passes may regenerate it inside a kernel's domain
    return case


@pytest.fixture
def qcheck_fuzz(request, tmp_path):
    def fuzz_kernel(kernel, cases=None, seconds=None, **options):
        if cases is None and seconds is None:
            seconds = _option(request.config, "--qcheck-fuzz-seconds", "QCHECK_FUZZ_SECONDS", None, float)
            cases = None if seconds is not None else _option(request.config, "--qcheck-fuzz-cases",
                                                             "QCHECK_FUZZ_CASES", 200, int)
        options.setdefault("findings", tmp_path / "qcheck-findings")
        options.setdefault("workers", 1)
        options.setdefault("progress", False)
        result = fuzz(kernel, executions=cases, minutes=(seconds or 0) / 60, **options)
        if result.findings:
            pytest.fail(f"qcheck_fuzz: {len(result.findings)} findings in {result.executions} cases "
                        f"({len(result.groups)} groups); the first:\n{result.findings[0].saved_text()}\n"
                        f"{result.summary()}", pytrace=False)
        return result
    return fuzz_kernel


def _inside(case, kernel):
    """A generated case moved into the kernel's domain: repaired, else one of
    64 fresh cases from seeds derived from its own; None when none is."""
    seed, size, op = case.generated
    for k in range(65):
        candidate = fit(kernel, case if k == 0 else Case.from_seed(seed * 1000003 + k, size, op=op))
        if candidate.is_valid() and outside(kernel, candidate) is None:
            return candidate
    return None


def assert_passes(case, kernel, device=None, profile=None):
    """Runs the kernel on the case twice (poison A and B) and fails the test
    with the verdict and a replay command unless every byte is as expected.
    A case outside the kernel's domain is skipped with the reason (a
    generated one is first repaired or regenerated inside it)."""
    target = f"{getattr(kernel, '__module__', 'MODULE')}:{getattr(kernel, '__qualname__', 'FUNCTION')}"
    why = outside(kernel, case)
    if why is not None and getattr(case, "generated", None) is not None:
        case = _inside(case, kernel) or case
        why = outside(kernel, case)
    if why is not None:
        pytest.skip(f"outside the domain of {target}: {why}")
    verdict = run(case, kernel, device=device, profile=profile)
    if not verdict.passed:
        path = Path(f"qcheck-failure-{case.digest}.json")
        case.save(path)
        pytest.fail(f"{verdict.text}\nthe case is saved as {path}; replay it with:\n"
                    f"  {replay_command(path, target, profile, device)}", pytrace=False)
    return verdict
