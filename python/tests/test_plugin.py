"""The plugin door from Python (qcheck.Plugin over libqcheck's plugin
functions) with the host-memory example plugins around the CPU model
(ops/fused_q/plugins/host_model_plugin.cc), and kernel against kernel and the graph
check's comparison on the numpy path."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import qcheck

import adapters
from adapters import correct

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = Path(os.environ.get("QCHECK_PLUGIN_DIR", HERE.parent.parent / "build" / "default" / "capi" / "plugins"))


def plugin(variant):
    path = PLUGIN_DIR / f"libqcheck_host_plugin_{variant}.so"
    if not path.is_file():
        pytest.skip(f"{path} is not built (QCHECK_PLUGIN_DIR names the folder of the example plugins)")
    return qcheck.Plugin(path)


def interleaved_case(seed):
    """A tiny case with the indexer and its interleaved rope (where the swapped-rope bug shows)."""
    for s in range(seed, seed + 500):
        case = qcheck.Case.from_seed(s, size="tiny")
        f = case.fields
        if f["has_indexer"] and f["indexer_rope"] == "interleaved" and f["rope_dim"] > 2 and f["num_tokens"] > 0:
            return case
    raise AssertionError("no such case")


def test_a_plugin_describes_itself():
    p = plugin("correct")
    assert (p.name, p.profile, p.memory) == ("host model", "qcheck", "host")
    assert qcheck.Plugin(p.path).path == p.path
    narrow = plugin("narrow")
    declared = json.loads(narrow.domain.json)
    assert declared["dims"]["rope_dim"] == {"values": [64]} and "index_weights" in declared["contiguous"]


def test_refusals_name_the_file():
    with pytest.raises(qcheck.QcheckError, match="cannot load it"):
        qcheck.Plugin("/no/such/plugin.so")
    path = PLUGIN_DIR / "libqcheck_host_plugin_newer-abi.so"
    if path.is_file():
        with pytest.raises(qcheck.QcheckError, match="abi_version 2 is not the ABI version 1"):
            qcheck.Plugin(path)


def test_the_correct_plugin_passes_and_the_planted_one_fails():
    good, bug = plugin("correct"), plugin("bug")
    for seed in range(1, 21):
        case = qcheck.Case.from_seed(seed, size="tiny")
        verdict = qcheck.run(case, good)
        assert verdict.passed, verdict.text
    case = interleaved_case(1)
    verdict = qcheck.run(case, bug)
    # (the swap moves the codes; where it also moves a row's amax past a power of two, the weights'
    # row-power-of-two is the primary signature)
    assert verdict.exit_code == 1 and "index_q_fp8/rope part/" in verdict.text, verdict.text


def test_an_error_status_raises_with_the_plugins_message():
    failing = plugin("failing")
    for seed in range(1, 2000):
        case = qcheck.Case.from_seed(seed, size="tiny")
        if case["num_tokens"] % 16 == 7:
            break
    with pytest.raises(qcheck.QcheckError, match="planted error status: T % 16 == 7") as raised:
        qcheck.run(case, failing)
    assert raised.value.status == 3


def test_fuzzing_a_plugin_stays_inside_its_domain(tmp_path):
    narrow = plugin("narrow")
    result = qcheck.fuzz(narrow, executions=40, corpus=tmp_path / "corpus", findings=tmp_path / "findings",
                         progress=False)
    assert result.executions == 40 and not result.findings, result.summary()
    kept = [qcheck.Case.load(p) for p in (tmp_path / "corpus").iterdir()]
    assert kept
    for case in kept:
        f = case.fields
        assert (f["rope_dim"], f["nope_dim"], f["query_path"]) == (64, 512, "bf16-packed")
        assert f["mqa_heads"] % 2 == 0 and f["num_tokens"] <= 64
    assert result.outside_domain > 0  # odd H, which only the supports callback refuses


def test_fuzzing_the_planted_plugin_finds_it(tmp_path):
    result = qcheck.fuzz(plugin("bug"), executions=200, findings=tmp_path / "findings", progress=False)
    assert any(g.startswith("index_q_fp8/") for g in result.groups), result.summary()


def test_kernel_against_kernel():
    good, bug = plugin("correct"), plugin("bug")
    case = interleaved_case(1)
    same = qcheck.against(case, good, correct)
    assert same.passed, same.text
    assert "qcheck" in same.first.profiles and "qcheck" in same.second.profiles
    differ = qcheck.against(case, good, bug)
    assert not differ.passed
    assert "index_q_fp8/rope part/" in differ.difference.text, differ.text
    assert differ.first.passed and not differ.second.passed
    assert "in the oracle's place" in differ.difference.text


def test_a_graph_run_that_differs_is_its_own_signature():
    case = qcheck.Case.from_seed(3, size="tiny")
    runs = []
    for poison in (0, 1, 0):
        t = case.numpy_inputs(poison=poison)
        correct(t)
        runs.append(t)
    assert qcheck.check(case, runs[0], runs[1], outputs_graph=runs[2]).passed
    runs[2]["query_out"][0, 0, 0] ^= 1
    verdict = qcheck.check(case, runs[0], runs[1], outputs_graph=runs[2])
    assert verdict.signature.endswith("/graph-replay-differs"), verdict.text
    assert verdict.json["total"] == 1 and verdict.json["graph"]
    with pytest.raises(ValueError, match="graph=True needs a CUDA device"):
        qcheck.run(case, correct, graph=True)


def test_the_command_line_takes_plugins(tmp_path):
    path = tmp_path / "case.json"
    interleaved_case(1).save(path)
    env = adapters.child_env()
    cli = [sys.executable, "-m", "qcheck", "replay", str(path)]
    good = "plugin:" + str(PLUGIN_DIR / "libqcheck_host_plugin_correct.so")
    bug = "plugin:" + str(PLUGIN_DIR / "libqcheck_host_plugin_bug.so")
    plugin("correct")  # (skips where the plugins are not built)
    assert subprocess.run(cli + [good], env=env, capture_output=True).returncode == 0
    assert subprocess.run(cli + [bug], env=env, capture_output=True).returncode == 1
    done = subprocess.run(cli + [good, "--against", bug], env=env, capture_output=True, text=True)
    assert done.returncode == 1 and "they differ: " in done.stdout and "index_q_fp8/rope part/" in done.stdout, \
        done.stdout + done.stderr
    done = subprocess.run(cli + ["plugin:/no/such.so"], env=env, capture_output=True, text=True)
    assert done.returncode == 2 and "cannot load it" in done.stderr


def cuda_plugins():
    """The CUDA plugins at hand: the blocked kernel's (QCHECK_PLUGIN_DIR) and
    the nvcc-only example (QCHECK_NVCC_PLUGIN, which the GPU gate builds)."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    paths = [PLUGIN_DIR / "libqcheck_blocked_plugin.so", Path(os.environ.get("QCHECK_NVCC_PLUGIN", "/nonexistent"))]
    found = [qcheck.Plugin(p) for p in paths if p.is_file()]
    if not found:
        pytest.skip("no CUDA plugin built here")
    return found


def test_cuda_plugins_through_torch_eager_and_replayed_from_a_graph(tmp_path):
    plugins = cuda_plugins()
    for p in plugins:
        assert p.memory == "cuda"
        for seed in range(1, 31):
            case = qcheck.Case.from_seed(seed, size="tiny")
            verdict = qcheck.run(case, p, device="cuda", graph=True)
            assert verdict.passed, verdict.text
            assert verdict.json["graph"]
        result = qcheck.fuzz(p, executions=200, device="cuda", graph=True, findings=tmp_path / "findings",
                             progress=False)
        assert not result.findings, result.summary()
    if len(plugins) == 2:
        case = qcheck.Case.from_seed(7, size="usual")
        both = qcheck.against(case, plugins[0], plugins[1], device="cuda")
        assert both.passed, both.text


class DeviceCopy:
    """A capturable "kernel": the oracle's outputs, moved to the device on
    its first (eager) call per case, copied into the outputs device to
    device (bit views, so no value is converted)."""

    def __init__(self):
        self.cache = {}

    def __call__(self, tensors):
        import torch
        key = tensors.case.digest
        if key not in self.cache:
            want = qcheck.expected(tensors.case)
            self.cache[key] = {n: torch.from_numpy(want[n].copy()).to(tensors.device)
                               for n, info in tensors.info.items() if info.role == 1}
        for name, source in self.cache[key].items():
            tensors[name].view(source.dtype).copy_(source)


def test_a_kernel_that_runs_outside_the_capture_is_refused():
    """A kernel launched on a stream of its own is not in the graph: its
    bytes change during the capture, which the run reports as the kernel's
    runtime error (exit 3); the same copy on the current stream passes."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    side, copy = torch.cuda.Stream(), DeviceCopy()

    def on_its_own_stream(tensors):
        with torch.cuda.stream(side):
            copy(tensors)

    case = next(c for c in (qcheck.Case.from_seed(s, size="tiny") for s in range(1, 50)) if c["num_tokens"] > 0)
    verdict = qcheck.run(case, copy, device="cuda", graph=True)
    assert verdict.passed, verdict.text
    refused = qcheck.run(case, on_its_own_stream, device="cuda", graph=True)
    assert refused.exit_code == 3 and "launched outside the capture stream" in refused.text, refused.text


def test_a_plugin_fuzzes_with_workers(tmp_path):
    plugin("bug")  # (skips where the plugins are not built)
    env = adapters.child_env()
    bug = "plugin:" + str(PLUGIN_DIR / "libqcheck_host_plugin_bug.so")
    done = subprocess.run([sys.executable, "-m", "qcheck", "fuzz", bug, "--workers", "2", "--executions", "200", "--findings", str(tmp_path / "f")], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "workers: 2, none restarted" in done.stderr, done.stderr
    assert "FINDINGS: " in done.stderr and list((tmp_path / "f").glob("*.json"))
