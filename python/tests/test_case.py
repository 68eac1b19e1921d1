"""qcheck.Case over libqcheck: generation, the two encodings, mutation,
refusals naming the field."""

import json

import pytest

import qcheck


def test_from_seed_is_deterministic_and_valid():
    a, b = qcheck.Case.from_seed(7, size="tiny"), qcheck.Case.from_seed(7, size="tiny")
    assert a == b and a.to_bytes() == b.to_bytes()
    assert qcheck.Case.from_seed(8, size="tiny") != a
    a.validate()
    assert a["num_tokens"] <= 65  # the tiny budget's large cap


def test_both_encodings_round_trip(tmp_path):
    case = qcheck.Case.from_seed(3, size="usual")
    for name in ("case.json", "case.bin"):
        case.save(tmp_path / name)
        assert qcheck.Case.load(tmp_path / name) == case
    assert (tmp_path / "case.bin").read_bytes()[:4] == b"QCKC"
    assert json.loads((tmp_path / "case.json").read_text())["num_tokens"] == case["num_tokens"]
    assert qcheck.Case.from_json(case.to_json()) == case


def test_describe_and_digest():
    case = qcheck.Case.from_seed(5, size="tiny")
    assert str(case).startswith(f"T={case['num_tokens']} H={case['mqa_heads']} ")
    assert len(case.digest) == 16 and int(case.digest, 16) >= 0


def test_mutate_and_cross_over_give_valid_other_cases():
    case = qcheck.Case.from_seed(11, size="tiny")
    mutated = [case.mutate(seed, size="tiny") for seed in range(20)]
    for m in mutated:
        m.validate()
    assert any(m != case for m in mutated)
    assert case.mutate(4, size="tiny") == case.mutate(4, size="tiny")
    child = case.cross_over(qcheck.Case.from_seed(12, size="tiny"), seed=1, size="tiny")
    child.validate()


def test_refusals_name_the_field_and_the_limit():
    case = qcheck.Case.from_seed(1, size="tiny")
    fields = case.fields
    fields["mqa_heads"] = 0
    bad = qcheck.Case.from_json(json.dumps(fields))
    with pytest.raises(qcheck.QcheckError) as e:
        bad.validate()
    assert e.value.status == 2 and "mqa_heads (H) = 0" in str(e.value)
    with pytest.raises(qcheck.QcheckError) as e:
        qcheck.Case.from_bytes(b"QCKC\x01\x00")
    assert "truncated" in str(e.value)
    with pytest.raises(qcheck.QcheckError) as e:
        qcheck.Case.from_seed(1, size="huge")
    assert "must be tiny, usual, default or limit" in str(e.value)
    with pytest.raises(qcheck.QcheckError):
        bad.numpy_inputs()


def test_limit_cases_come_only_when_due_and_only_under_limit():
    assert qcheck.Case.limit_case(1, 64, 0, "default") is None
    assert qcheck.Case.limit_case(1, 63, 0, "limit") is None
    grid = qcheck.Case.limit_case(1, 64, 0, "limit")
    grid.validate()
    assert grid["num_tokens"] >= 65535
    load = qcheck.Case.limit_case(1, 128, 1, "limit")
    assert load["num_tokens"] >= 512 and load["index_dim"] == 128
    with pytest.raises(qcheck.QcheckError):
        qcheck.Case.limit_case(1, 64, 0, "huge")


def test_the_version_is_the_projects():
    """The package's version is the project's: the top CMakeLists.txt of the repository, or in a GPU
    bundle (no CMakeLists.txt there) the version build-info.txt took from it."""
    import re
    from pathlib import Path
    top = Path(__file__).resolve().parents[2]
    if (top / "CMakeLists.txt").is_file():
        project = re.search(r"project\(qcheck VERSION ([0-9.]+)", (top / "CMakeLists.txt").read_text())[1]
    else:
        project = re.search(r"^version: ([0-9.]+)$", (top / "build-info.txt").read_text(), re.M)[1]
    assert qcheck.__version__ == project


def test_run_buffers_are_the_same_whatever_was_filled_before():
    """libqcheck keeps the last case's buffers (per thread) to fill run B
    from run A's: the bytes must be those of the case filled alone, on a
    thread of its own, whatever this thread filled before."""
    import threading

    from qcheck.model.tensors import host_buffers

    def alone(case, poison):
        out = {}
        thread = threading.Thread(target=lambda: out.update(raw=host_buffers(case, poison)))
        thread.start()
        thread.join()
        return out["raw"]

    cases = [qcheck.Case.from_seed(seed, size="tiny") for seed in range(6)]
    cases.append(cases[0].mutate(11, size="tiny"))
    order = [(0, 0), (0, 1), (0, 0), (1, 1), (1, 0), (2, 1), (3, 0), (3, 1), (0, 1), (4, 0), (5, 1), (6, 0), (6, 1)]
    for index, poison in order:
        case = cases[index]
        got, want = host_buffers(case, poison), alone(case, poison)
        assert len(got) == len(want)
        for i, (g, w) in enumerate(zip(got, want)):
            assert g.tobytes() == w.tobytes(), f"case {index} poison {poison}: buffer {i} differs"
    # Poison B differs from A only in the outputs' bytes, and somewhere.
    a, b = host_buffers(cases[0], 0), host_buffers(cases[0], 1)
    assert any(x.tobytes() != y.tobytes() for x, y in zip(a, b))


def test_bins_keep_the_buffers_the_runs_start_from():
    """A case's semantic bins scan its inputs, which libqcheck keeps for the
    runs' buffers of the same case: the bins and the buffers must be those of
    a thread that asked for nothing before, in either order."""
    import threading

    from qcheck.model.bins import case_bins
    from qcheck.model.tensors import host_buffers

    def alone(work):
        out = {}
        thread = threading.Thread(target=lambda: out.update(value=work()))
        thread.start()
        thread.join()
        return out["value"]

    cases = [qcheck.Case.from_seed(seed, size="tiny") for seed in range(4)]
    for case in cases:
        bins = case_bins(case)  # keeps the case's inputs ...
        assert bins == alone(lambda: case_bins(case))
        for poison in (0, 1):  # ... which the runs start from
            got, want = host_buffers(case, poison), alone(lambda: host_buffers(case, poison))
            assert [g.tobytes() for g in got] == [w.tobytes() for w in want]
        assert case_bins(case) == bins  # and after the runs, the same bins
    # Bins of another case in between: the buffers are still the case's own.
    host_buffers(cases[0], 0)
    case_bins(cases[1])
    assert [g.tobytes() for g in host_buffers(cases[0], 1)] == [
        w.tobytes() for w in alone(lambda: host_buffers(cases[0], 1))]


def test_the_verdict_is_the_same_whether_the_buffers_were_kept_or_not():
    """The judge and qcheck_expected_buffers start their expected sets from
    the buffers libqcheck kept when it filled this case's runs; the verdict
    and the oracle's outputs must be those of a thread that filled nothing."""
    import threading

    from qcheck.model.tensors import host_buffers
    from qcheck.model.verdict import check, expected

    def verdicts(case, runs):
        return [(check(case, r, profile=p).text) for r in runs for p in (None, "auto")]

    for seed in range(4):
        case = qcheck.Case.from_seed(seed, size="tiny")
        good = expected(case)
        broken = expected(case)
        broken.raw[-1][len(broken.raw[-1]) // 2] ^= 0x40  # a byte of the last allocation (an output's)
        host_buffers(case, 1)  # this thread now keeps the case's buffers
        kept = verdicts(case, [good, broken])
        out = {}
        thread = threading.Thread(target=lambda: out.update(v=verdicts(case, [good, broken])))
        thread.start()
        thread.join()
        assert kept == out["v"]
        assert kept[0].startswith("PASS") and not kept[2].startswith("PASS"), kept[2]
        # The oracle's outputs too (qcheck_expected_buffers).
        host_buffers(case, 0)
        here = [a.tobytes() for a in expected(case).raw]
        thread = threading.Thread(target=lambda: out.update(e=[a.tobytes() for a in expected(case).raw]))
        thread.start()
        thread.join()
        assert here == out["e"]


def test_a_text_longer_than_the_threads_buffer_is_asked_again_at_its_size():
    import ctypes

    from qcheck.model import _capi

    case = qcheck.Case.from_seed(2, size="usual")
    whole = _capi.text("qcheck_case_describe", case._handle)
    saved = getattr(_capi._TEXT, "buffer", None)
    _capi._TEXT.buffer = ctypes.create_string_buffer(8)
    try:
        assert len(whole) > 8 and _capi.text("qcheck_case_describe", case._handle) == whole
    finally:
        _capi._TEXT.buffer = saved
