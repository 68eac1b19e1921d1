"""qcheck.fuzzing.compile: the compile-aware fuzz loop against a kernel that
"compiles" (sleeps) on each new compile key, with no hook (timing alone
tells the loop), and Triton's hook where Triton is loaded."""

import sys
import types

import qcheck
from qcheck.fuzzing.compile import CompileWatch

import adapters


def fuzz_fake(tmp_path, aware, seconds=3.0, explore_share=0.2):
    adapters._compiled.clear()
    return qcheck.fuzz(adapters.compiles_per_key, minutes=seconds / 60, case_size="tiny", seed=5,
                       findings=tmp_path / f"findings-{aware}-{explore_share}", progress=False, compile_aware=aware,
                       explore_share=explore_share)


def test_compile_aware_runs_most_cases_on_warm_keys_and_learns_compiles_from_timing(tmp_path):
    aware = fuzz_fake(tmp_path, True)
    compiled_aware = len(adapters._compiled)
    plain = fuzz_fake(tmp_path, False)
    compiled_plain = len(adapters._compiled)
    print(aware.summary(), plain.summary(), sep="\n")
    assert not aware.findings and not plain.findings
    a, p = aware.compile, plain.compile
    # No hook fired (Triton is not loaded, or loaded by another test but not
    # compiling here): the kernel's time against the warm median found the
    # compiles the kernel made (a loaded machine may slow a warm run past
    # the threshold now and then).
    assert a["source"] == "timing" and p["source"] == "timing"
    assert abs(a["compiles"] - compiled_aware) <= max(2, compiled_aware // 10)
    assert abs(p["compiles"] - compiled_plain) <= max(2, compiled_plain // 10)
    # The plain loop compiles on most cases and spends most of its time
    # compiling; the compile-aware one runs most cases on keys it has
    # compiled, exploring new keys for about explore_share (20 %) of its time.
    assert p["warm_executions"] < 0.6 * plain.executions and p["compile_seconds"] > 0.6 * plain.seconds
    assert a["warm_executions"] > 0.8 * aware.executions
    assert 0.1 * aware.seconds < a["explore_seconds"] < 0.3 * aware.seconds
    assert aware.exec_per_second > 4 * plain.exec_per_second
    assert "compiles: " in aware.summary() and "% of executions on warm keys" in aware.summary()


def test_the_exploration_budget_follows_explore_share(tmp_path):
    wide = fuzz_fake(tmp_path, True, seconds=2.0, explore_share=0.6)
    narrow = fuzz_fake(tmp_path, True, seconds=2.0, explore_share=0.1)
    assert 0.45 < wide.compile["explore_seconds"] / wide.seconds < 0.75
    assert narrow.compile["explore_seconds"] / narrow.seconds < 0.2
    assert wide.compile["compiles"] > 3 * narrow.compile["compiles"]


def test_a_kernel_given_compile_key_is_scheduled_by_it(tmp_path):
    def coarse_key(case):
        fields = case.fields
        return (fields["mqa_heads"], fields["query_path"])

    def kernel(tensors):
        adapters.correct(tensors)

    kernel.compile_key = coarse_key
    result = qcheck.fuzz(kernel, executions=150, case_size="tiny", progress=False, findings=tmp_path / "f")
    # Few coarse keys: nearly everything runs on warm ones after the first of each.
    assert result.compile["warm_executions"] > 0.8 * result.executions


def test_the_triton_hook_counts_compiles_and_is_restored(monkeypatch):
    calls = []
    runtime = types.SimpleNamespace(jit_post_compile_hook=lambda **kw: calls.append(kw))
    previous = runtime.jit_post_compile_hook
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(knobs=types.SimpleNamespace(runtime=runtime)))
    watch = CompileWatch()
    assert watch.count == 0 and watch.source.endswith("jit_post_compile_hook")
    runtime.jit_post_compile_hook(key="k1")
    runtime.jit_post_compile_hook(key="k2")
    assert watch.count == 2 and calls == [{"key": "k1"}, {"key": "k2"}]  # the previous hook still runs
    watch.close()
    assert runtime.jit_post_compile_hook is previous


def test_warm_mutations_keep_the_compile_key():
    case = qcheck.Case.from_seed(11, "usual")
    changed = 0
    for seed in range(40):
        child = case.mutate_warm(seed, "usual")
        assert child.compile_key == case.compile_key
        changed += child.fields != dict(case.fields, seed=child["seed"])
    assert changed > 20


def test_timing_decides_where_triton_is_loaded_but_the_kernel_does_not_compile_through_it(tmp_path, monkeypatch):
    runtime = types.SimpleNamespace(jit_post_compile_hook=None)
    monkeypatch.setitem(sys.modules, "triton", types.SimpleNamespace(knobs=types.SimpleNamespace(runtime=runtime)))
    result = fuzz_fake(tmp_path, True, seconds=1.5)
    compiled = len(adapters._compiled)
    assert result.compile["source"] == "timing" and compiled > 0
    assert abs(result.compile["compiles"] - compiled) <= max(2, compiled // 10)
    assert runtime.jit_post_compile_hook is None  # restored
