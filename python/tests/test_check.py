"""qcheck.check, expected and run on the numpy path, with "kernels" written
here: one that writes the oracle's outputs (it must pass on every case), and
faults planted into it (each must fail with its signature and coordinates)."""

import numpy as np
import pytest

import qcheck

CASES = [qcheck.Case.from_seed(seed, size="tiny") for seed in range(1, 41)]


def copy_kernel(tensors):
    """Writes the oracle's outputs, as a correct kernel would."""
    want = qcheck.expected(tensors.case)
    for name, info in tensors.info.items():
        if info.role == 1:  # outputs the launch writes
            tensors[name][...] = want[name]


def test_the_tensors_follow_the_plan():
    for case in CASES[:10]:
        t = case.numpy_inputs()
        fields = case.fields
        T = fields["num_tokens"]
        assert t["positions"].shape == (T,)
        assert t["q_pe"].shape == (T, fields["mqa_heads"], fields["rope_dim"])
        assert t["q_pe"].dtype == np.uint16 and t["index_q_fp8"].dtype == np.uint8
        assert (t["positions"] < fields["cache_rows"]).all()
        # Outputs start as poison A (0xFF bytes); run B's as poison B (0x5B).
        assert (t["query_out"].view(np.uint8) == 0xFF).all() or fields["alias"] == "exact-front"
        assert (case.numpy_inputs(poison=1)["index_q_fp8"] == 0x5B).all()
        if fields["alias"] == "exact-front":
            assert t.aliased
            assert t["ql_nope"].ctypes.data == t["query_out"].ctypes.data


def test_a_correct_kernel_passes_every_case_with_one_run_and_with_two():
    for case in CASES:
        t = case.numpy_inputs()
        copy_kernel(t)
        v = qcheck.check(case, t)
        assert v.passed and v.exit_code == 0 and v.signature == "", v.text
        v = qcheck.run(case, copy_kernel)
        assert v.passed, v.text
        assert v.json["verdict"] == "pass"


def first_case(predicate):
    return next(c for c in CASES if predicate(c.fields))


def test_one_changed_bit_fails_with_its_coordinates():
    case = first_case(lambda f: f["has_indexer"])
    t = case.numpy_inputs()
    copy_kernel(t)
    t["index_q_fp8"][0, 0, 1] ^= 0x01
    v = qcheck.check(case, t, kernel="one-bit")
    assert v.exit_code == 1
    assert v.signature.startswith("index_q_fp8/")
    first = v.json["first"][0]
    assert (first["token"], first["head"], first["dim"]) == (0, 0, 1)
    assert first["expected_bits"] ^ first["got_bits"] == 0x01
    assert "FAIL backend one-bit" in v.text


def test_a_write_past_the_end_is_a_sentinel_overwritten():
    case = CASES[0]
    t = case.numpy_inputs()
    copy_kernel(t)
    t.raw[t.info["query_out"].buffer][-1] ^= 0xFF
    v = qcheck.check(case, t)
    assert v.signature == "query_out/sentinel after/sentinel-overwritten", v.text


def test_an_element_never_written_is_unwritten_in_both_runs():
    case = first_case(lambda f: f["num_tokens"] > 1)

    def skips_the_last_token(tensors):
        copy_kernel(tensors)
        poison = 0xFF if tensors.poison == 0 else 0x5B  # what the run's outputs started as
        last = tensors["query_out"][-1]
        last[...] = poison if last.dtype == np.uint8 else poison * 0x0101

    v = qcheck.run(case, skips_the_last_token)
    assert v.exit_code == 1
    assert v.signature.endswith("/unwritten"), v.text


def test_an_input_the_kernel_writes_into_is_reported():
    case = CASES[0]
    t = case.numpy_inputs()
    copy_kernel(t)
    t["q_pe"][0, 0, 0] ^= 0x8000
    v = qcheck.check(case, t)
    assert v.signature == "q_pe/elements/input-modified", v.text


def test_the_profile_decides_the_expected_bits():
    # Under vllm-triton the FMA patterns differ from qcheck's: the oracle's
    # two sets of outputs differ somewhere on these cases, and each profile
    # passes its own outputs only.
    # (A q_scale that is not a power of two gives vllm-triton's div.full an
    # acceptance set whose centre, the IEEE codes, is what expected() holds.)
    differ = 0
    for case in CASES:
        a, b = qcheck.expected(case, "qcheck"), qcheck.expected(case, "vllm-triton")
        t = case.numpy_inputs()
        for name, info in t.info.items():
            if info.role == 1:
                t[name][...] = b[name]
        if not all(a[n].tobytes() == b[n].tobytes() for n, i in t.info.items() if i.role == 1):  # bits
            differ += 1
            assert not qcheck.check(case, t, profile="qcheck").passed
        assert qcheck.check(case, t, profile="vllm-triton").passed
    assert differ > 0


def _write(tensors, want):
    for name, info in tensors.info.items():
        if info.role == 1:
            tensors[name][...] = want[name]


def test_auto_names_the_profiles_that_explain_the_outputs():
    # Outputs written under each named profile: auto lists that profile, and
    # exactly the profiles whose expected bits are those outputs.
    named = qcheck.profiles()
    assert set(named) >= {"qcheck", "vllm-triton", "exact-reciprocal", "plain-scale", "torch-eager", "flashmla"}
    seen = set()
    for case in CASES[:12]:
        sets = {name: qcheck.expected(case, name) for name in named}
        outputs = [n for n, i in sets["qcheck"].info.items() if i.role == 1]
        for maker in named:
            t = case.numpy_inputs()
            _write(t, sets[maker])
            v = qcheck.check(case, t, profile="auto")
            same = [n for n in named if all(sets[n][o].tobytes() == sets[maker][o].tobytes() for o in outputs)]
            assert v.passed and v.profiles == same, (maker, v.profiles, same, v.text)
            assert v.judged_under == same[0]
            seen.add(len(same))
    assert min(seen) < len(named)  # the profiles told some cases apart


def test_auto_with_no_explaining_profile_says_where():
    case = CASES[0]
    t = case.numpy_inputs()
    _write(t, qcheck.expected(case, "qcheck"))
    t["index_weights_out"].view(np.uint8)[0, 0, :] = 0x5A  # bits no profile gives
    v = qcheck.check(case, t, profile="auto")
    assert not v.passed and v.profiles == []
    assert "auto: no profile explains the outputs bit for bit" in v.text
    assert "first element no profile explains: index_weights_out[0, 0, 0]" in v.text
    assert "closest per output tensor:" in v.text


def test_bad_calls_are_refused_with_a_message():
    case = CASES[0]
    with pytest.raises(qcheck.QcheckError) as e:
        qcheck.check(case, case.numpy_inputs(), profile="no-such-profile")
    assert "no-such-profile" in str(e.value)
    with pytest.raises(ValueError):
        qcheck.check(case, case.numpy_inputs(poison=1))
    assert "qcheck" in qcheck.profiles() and "vllm-triton" in qcheck.profiles()
