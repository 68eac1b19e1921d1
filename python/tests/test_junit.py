"""JUnit XML (qcheck.reports.junit): what python -m qcheck fuzz --junit, the GPU gate
and the campaign write, validated against junit.xsd with xmlschema
(junit_schema.py; requirements.txt). Without xmlschema these tests fail and
say how to get it: they do not skip."""

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import qcheck
from qcheck.reports import junit

import adapters
import junit_schema


@pytest.fixture(autouse=True)
def validator():
    if not junit_schema.available():
        pytest.fail(junit_schema.MISSING, pytrace=False)


def valid(path):
    why = junit_schema.problems(path)
    return not why, "\n".join(why)


def test_a_fuzz_run_with_findings_is_one_failing_testcase_per_group(tmp_path):
    result = qcheck.fuzz(adapters.skips_tail_token, executions=120, findings=tmp_path / "findings", progress=False,
                         compile_aware=False)
    assert result.groups
    result.write_junit(tmp_path / "fuzz.xml", "adapters:skips_tail_token")
    ok, why = valid(tmp_path / "fuzz.xml")
    assert ok, why
    suite = ET.parse(tmp_path / "fuzz.xml").getroot().find("testsuite")
    assert int(suite.get("failures")) == len(result.groups) == len(suite.findall("testcase"))
    for case, (key, group) in zip(suite.findall("testcase"), sorted(result.groups.items())):
        assert case.get("name") == f"finding group [{key}]"
        failure = case.find("failure")
        assert failure.get("message").startswith(f"{group.count} cases; classes: ")
        assert "replay: python -m qcheck replay" in failure.text and "adapters:skips_tail_token" in failure.text
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["executions"] == str(result.executions)  # (it stops at 50 findings)
    assert props["op"] == "fused_q" and result.summary().splitlines()[0].endswith("; op fused_q")


def test_a_clean_run_is_one_passing_testcase_and_the_command_line_writes_it(tmp_path):
    out = tmp_path / "clean.xml"
    done = subprocess.run([sys.executable, "-m", "qcheck", "fuzz", "adapters:correct", "--executions", "30",
                           "--findings", str(tmp_path / "f"), "--junit", str(out)], cwd=tmp_path,
                          env=adapters.child_env(), capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ok, why = valid(out)
    assert ok, why
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite.get("tests") == "1" and suite.get("failures") == "0"
    assert suite.find("testcase").get("name") == "no new findings" and suite.find("testcase/failure") is None


def test_the_script_form_escapes_what_xml_cannot_hold(tmp_path):
    rows = ("step one\tpass\t3\tfine\tall good\n"
            "step <two> & more\tfail\t1\tbad \"quotes\"\tline 1\\nline 2 \x01 end\n"
            "step three\tskip\t0\tQCHECK_GATE_SKIP\t\n")
    out = tmp_path / "gate.xml"
    done = subprocess.run([sys.executable, str(Path(junit.__file__)), "the gate", str(out)], input=rows,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ok, why = valid(out)
    assert ok, why
    suite = ET.parse(out).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    failure = suite.findall("testcase")[1].find("failure")
    assert suite.findall("testcase")[1].get("name") == "step <two> & more"
    assert failure.text == "line 1\nline 2 \ufffd end" and failure.get("message") == 'bad "quotes"'
    bad = subprocess.run([sys.executable, str(Path(junit.__file__)), "x", str(tmp_path / "x.xml")],
                         input="step\tmaybe\t0\t\t\n", capture_output=True, text=True)
    assert bad.returncode == 2 and "line 1: result 'maybe'" in bad.stderr


def test_the_schema_refuses_what_a_ci_system_cannot_read(tmp_path):
    broken = tmp_path / "broken.xml"
    broken.write_text('<?xml version="1.0"?><testsuites><testsuite name="s" tests="1" failures="0">'
                      '<testcase classname="c"><failure/><skipped/></testcase></testsuite></testsuites>')
    ok, why = valid(broken)
    # Both faults of the one testcase, each on its own line (xmlschema's wording).
    lines = why.splitlines()
    assert not ok and len(lines) == 2 and all(line.startswith("/testsuites/testsuite/testcase: ") for line in lines)
    assert "attribute 'name'" in lines[0] and "'skipped'" in lines[1], why
    (tmp_path / "cut.xml").write_text(broken.read_text()[:60])
    ok, why = valid(tmp_path / "cut.xml")
    assert not ok and why.startswith("not readable as XML: ")
