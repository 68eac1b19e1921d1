"""qcheck.ops() and python -m qcheck ops: the ops libqcheck knows, checked
against what the package sees of their cases (the fields a case's JSON form
has, the tensors its plan makes, the profiles qcheck.profiles() names), and
a case's op, from_seed's op and the JSON form's "op" key."""

import json
import os
import subprocess
import sys

import pytest

import qcheck


def test_fused_q_is_the_first_op_and_its_vocabulary_is_what_its_cases_have():
    ops = qcheck.ops()
    assert list(ops) == ["fused_q", "fused_k"]  # (fused_k's: test_fused_k_door.py)
    fused_q = ops["fused_q"]
    assert fused_q.schema == 1
    assert fused_q.profiles == qcheck.profiles()
    field_names = [f["name"] for f in fused_q.fields]
    tensor_names = {t["name"] for t in fused_q.tensors}
    seen = set()
    for seed in range(40):
        case = qcheck.Case.from_seed(seed, size="tiny")
        assert case.op == "fused_q"
        # every field its JSON form writes, in the listed order (an empty edit list is left out)
        assert list(case.fields) == [n for n in field_names if n in case.fields]
        assert set(field_names) - set(case.fields) <= {"edits"}
        tensors = case.numpy_inputs()
        assert set(tensors) <= tensor_names
        for name, array in tensors.items():
            listed = next(t for t in fused_q.tensors if t["name"] == name)
            assert len(array.shape) == listed["shape"].split(" (")[0].count(",") + 1, name
        seen |= set(tensors)
    assert seen == tensor_names  # nothing listed that no case has
    for f in fused_q.fields:
        if f.get("choices"):
            assert f["default"] in f["choices"], f["name"]


def test_a_case_names_its_op_in_json_and_a_wrong_op_is_refused_naming_the_field():
    case = qcheck.Case.from_seed(2, size="tiny")
    named = dict(case.fields, op="fused_q", schema=1)
    assert qcheck.Case.from_json(json.dumps(named)) == case
    with pytest.raises(qcheck.QcheckError, match="field op = \"index_k\""):
        qcheck.Case.from_json(json.dumps(dict(case.fields, op="index_k")))
    with pytest.raises(qcheck.QcheckError, match="field schema = 2"):
        qcheck.Case.from_json(json.dumps(dict(case.fields, schema=2)))
    assert qcheck.Case.from_seed(2, size="tiny", op="fused_q") == case
    with pytest.raises(ValueError, match="op 'index_k' is not one this libqcheck knows \\(fused_q"):
        qcheck.Case.from_seed(2, size="tiny", op="index_k")
    with pytest.raises(KeyError, match="no field 'nope'"):
        qcheck.ops()["fused_q"].field("nope")
    assert qcheck.ops()["fused_q"].field("num_tokens")["kind"] == "integer"


def test_python_m_qcheck_ops_prints_each_op_with_its_tensors_fields_and_profiles():
    env = dict(os.environ)
    text = subprocess.run([sys.executable, "-m", "qcheck", "ops"], capture_output=True, text=True, env=env,
                          check=True).stdout
    assert text.startswith("fused_q (schema 1): ")
    for needle in ("  tensors:", "    query_out ", "  fields:", "    num_tokens ", "  profiles: qcheck"):
        assert needle in text, needle
    listed = json.loads(subprocess.run([sys.executable, "-m", "qcheck", "ops", "--json"], capture_output=True,
                                       text=True, env=env, check=True).stdout)
    assert [o["op"] for o in listed] == ["fused_q", "fused_k"]
    assert "\nfused_k (schema 1): " in text and "    mla_cache " in text
    assert listed[0]["profiles"] == qcheck.profiles()
