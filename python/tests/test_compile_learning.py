"""qcheck.fuzzing.compile learns the key from what compiled: a kernel whose wrapper
passes what qcheck's tensors do not show (a densified argument) compiles on
keys qcheck took as warm; after the first such compile a key is scheduled by
the case's geometry, and the summary names the argument that differed. The
kernel is a stand-in for Triton (fake_triton) reporting its compiles through
Triton's post-compile hook."""

import collections
import json

import numpy as np

import qcheck
from qcheck.fuzzing import compile as compile_module
from qcheck.reports import summary

import adapters
from fake_triton import FakeJit, install, next_power_of_2

TENSORS = ("positions", "q_pe", "ql_nope", "mqa_cache", "indexer_cache", "index_q", "index_weights", "query_out",
           "index_q_fp8", "index_weights_out")
PARAMS = [f"{n}_{p}" for n in TENSORS for p in ("ptr", "s0", "s1", "s2", "D1", "D2")] + \
    ["T", "n_rows", "BLOCK_ROWS", "PATH", "ROPE", "ALIAS"]
CONSTEXPRS = {p for p in PARAMS if p.endswith(("_D1", "_D2"))} | {"BLOCK_ROWS", "PATH", "ROPE", "ALIAS"}


def launch_arguments(tensors, q_pe):
    """Every tensor as a production wrapper passes it (pointer, strides, the
    dims but the first as constexprs), q_pe being `q_pe`; None where absent."""
    args = {}
    for name in TENSORS:
        a = q_pe if name == "q_pe" else tensors.get(name)
        strides = [] if a is None else [s // a.itemsize for s in a.strides]
        dims = [] if a is None else list(a.shape[1:])
        args[f"{name}_ptr"] = a
        for d in range(3):
            args[f"{name}_s{d}"] = strides[d] if d < len(strides) else None
        for d in (1, 2):
            args[f"{name}_D{d}"] = dims[d - 1] if d - 1 < len(dims) else None
    case = tensors.case
    args.update(T=case["num_tokens"], PATH=case["query_path"], ROPE=case["indexer_rope"], ALIAS=tensors.aliased)
    return args


def densifying_wrapper(jit, skip_empty=False):
    """A kernel whose wrapper densifies q_pe (q_pe.contiguous().view(-1, R))
    and launches one program per block of rows: the row count T * H and its
    next power of two reach the compiler, which qcheck's key (T's class, H)
    does not tell apart. skip_empty: no launch at T = 0, as the production
    example's wrapper returns early."""

    def kernel(tensors):
        q_pe = tensors["q_pe"]
        T, H, R = q_pe.shape
        rows = np.ascontiguousarray(q_pe).reshape(-1, R)
        if not (skip_empty and T == 0):
            jit.run(**launch_arguments(tensors, rows.reshape(T, H, R)), n_rows=T * H,
                    BLOCK_ROWS=next_power_of_2(T * H))
        adapters.correct(tensors)

    return kernel


def fuzz_logged(monkeypatch, tmp_path, kernel, executions=1500):
    """qcheck.fuzz of `kernel`, with every execution's (predicted key, taken as warm, compiled) as the loop saw it."""
    log = []
    record = compile_module.CompileSchedule.record

    def logged(self, case, key, count_before, kernel_seconds, seconds):
        was_warm = key in self.warm
        compiled = record(self, case, key, count_before, kernel_seconds, seconds)
        log.append((case.compile_key, was_warm, compiled))
        return compiled

    monkeypatch.setattr(compile_module.CompileSchedule, "record", logged)
    result = qcheck.fuzz(kernel, executions=executions, case_size="tiny", seed=3, progress=False,
                         findings=tmp_path / "findings")
    return result, log


def misses_per_key(log):
    return collections.Counter(key for key, was_warm, compiled in log if was_warm and compiled)


def test_a_densifying_wrapper_compiles_once_on_a_key_taken_as_warm_and_the_summary_names_the_argument(
        monkeypatch, tmp_path):
    install(monkeypatch)
    jit = FakeJit("_rows_kernel", PARAMS, CONSTEXPRS)
    result, log = fuzz_logged(monkeypatch, tmp_path, densifying_wrapper(jit))
    summary = result.summary()
    print(summary)
    c = result.compile
    misses = misses_per_key(log)
    assert not result.findings and c["source"].endswith("jit_post_compile_hook")
    assert c["compiles"] == len(jit.compiled)  # every compile the kernel made, through the hook
    # The wrapper's specialization differs from the key's on some keys taken
    # as warm: each compiles once there, and never again on a case the loop
    # takes as warm (its key is scheduled by the case's geometry since).
    assert sum(misses.values()) >= 5
    assert max(misses.values()) == 1, misses.most_common(3)
    assert c["warm_compiles"] == c["keys_missed"] == len(misses) and c["geometry_compiles"] == 0
    assert c["warm_executions"] > 0.5 * result.executions
    # The summary says which argument differed, predicted against compiled.
    assert f"{c['warm_compiles']} compiled on a key taken as warm, on {len(misses)} keys" in summary
    assert "_rows_kernel argument BLOCK_ROWS" in summary and "BLOCK_ROWS predicted =" in summary
    assert f"{c['keys_by_geometry']} keys scheduled by the case's geometry since" in summary


def with_tokens(case, tokens):
    return qcheck.Case.from_json(json.dumps(dict(case.fields, num_tokens=tokens)))


def test_a_key_whose_first_case_did_not_launch_is_learned_from_its_first_compile(monkeypatch):
    install(monkeypatch)
    # Neither the row count nor its block reach the compiler: one variant per key where T > 0.
    jit = FakeJit("_rows_kernel", [p for p in PARAMS if p not in ("n_rows", "BLOCK_ROWS")], CONSTEXPRS)
    kernel = densifying_wrapper(jit, skip_empty=True)
    schedule = compile_module.CompileSchedule(kernel)
    base = qcheck.Case.from_seed(3, "tiny")
    empty, sixteen, thirty_two = (with_tokens(base, t) for t in (0, 16, 32))
    assert empty.compile_key == sixteen.compile_key == thirty_two.compile_key  # T's class: 16
    compiled = []
    for case in (empty, sixteen, thirty_two, sixteen, empty):
        key = schedule.key_of(case)
        count = schedule.before()
        kernel(case.numpy_inputs())
        compiled.append((key in schedule.warm, schedule.record(case, key, count, 0.0, 0.0)))
    # T = 0 launches nothing, so its key is warm with nothing compiled; T = 16
    # compiles on it (the miss), and the key is scheduled by geometry since:
    # T = 32 and T = 0 are new geometries (explored: T = 32 runs T = 16's
    # variant, T = 0 none), T = 16 again is warm and compiles nothing.
    assert compiled == [(False, False), (True, True), (False, False), (True, False), (False, False)]
    c = schedule.figures()
    assert (c["warm_compiles"], c["keys_missed"], c["keys_by_geometry"], c["geometry_compiles"]) == (1, 1, 1, 0)
    text = "\n".join(summary.compile_summary(c, 5, 1.0))
    assert "1 compiled on a key taken as warm, on 1 key (" in text
    assert "1 key: _rows_kernel: nothing compiled on the key before (a launch skipped, as at T = 0" in text
    schedule.close()


def test_the_hook_payload_names_each_argument_s_class():
    payload = {"fn": type("Info", (), {"name": "k"})(), "key": "...",
               "compile": {"signature": {"x_ptr": "*bf16", "n": "i32", "m": "constexpr", "B": "constexpr",
                                         "s": "fp32"},
                           "constants": {(2,): 1, (3,): 64}, "configs": [{(0,): [["tt.divisibility", 16]],
                                                                          (1,): [["tt.divisibility", 16]]}]}}
    kernel, spec = compile_module.specialization(payload)
    assert kernel == "k"
    assert spec == (("x_ptr", "*bf16 aligned to 16"), ("n", "i32 divisible by 16"), ("m", "=1"), ("B", "=64"),
                    ("s", "fp32"))
    assert compile_module.specialization({"key": "k1"}) == ("kernel", (("key", "k1"),))
    other = dict(spec, n="i32", B="=128")
    assert compile_module.differences(spec, tuple(other.items())) == [("n", "i32 divisible by 16", "i32"),
                                                                      ("B", "=64", "=128")]


def test_workers_figures_add_up_with_what_they_learned():
    a = {"compiles": 3, "compile_seconds": 1.0, "warm_executions": 5, "warm_compiles": 2, "explore_seconds": 0.5,
         "keys_missed": 2, "keys_by_geometry": 2, "geometry_compiles": 0, "learned": {"k argument B": [2, "B 1"]},
         "source": "hook", "aware": True, "explore_share": 0.2}
    b = dict(a, learned={"k argument B": [1, "B 2"], "k argument n": [1, "n"]})
    merged = {}
    summary.add_figures(merged, a)
    summary.add_figures(merged, b)
    assert merged["warm_compiles"] == 4 and merged["keys_missed"] == 4
    assert merged["learned"] == {"k argument B": [3, "B 1"], "k argument n": [1, "n"]}
    assert a["learned"] == {"k argument B": [2, "B 1"]}  # the first worker's figures unchanged
