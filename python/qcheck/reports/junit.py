"""JUnit XML: what a CI system shows as tests.

One writer for every qcheck report of this kind: `python -m qcheck fuzz
--junit FILE` (one testcase per finding group, failing with the first
finding's verdict and replay command; one per known entry, skipped; one
"no new findings" that passes when there are none), the GPU gate and the C++
campaign (their bash runs this file as a script; no qcheck import needed).
tests/junit/junit.xsd is the schema the tests validate every writer's
output against.

As a script:
    python3 junit.py SUITE OUT.xml < CASES.tsv
CASES.tsv: one testcase per line, tab-separated: name, result (pass, fail,
error, skip), seconds, message, and a text (the failure's body; "\\n"
written as the two characters \\ and n).
"""

import sys
import time
import xml.etree.ElementTree as ET

RESULTS = ("pass", "fail", "error", "skip")


def _clean(text):
    """Text XML 1.0 can hold: control characters other than tab, newline and
    carriage return become U+FFFD."""
    return "".join(c if c in "\t\n\r" or ord(c) >= 0x20 else "\ufffd" for c in str(text))


class Case:
    def __init__(self, name, result="pass", seconds=0.0, message="", text="", classname=None):
        if result not in RESULTS:
            raise ValueError(f"result {result!r} must be one of {RESULTS}")
        self.name, self.result, self.seconds = name, result, seconds
        self.message, self.text, self.classname = message, text, classname


def write(path, suite, cases, properties=None, seconds=None):
    """Writes one testsuite (inside testsuites) of `cases` (junit.Case) to `path`."""
    counts = {r: sum(c.result == r for c in cases) for r in RESULTS}
    total = sum(c.seconds for c in cases) if seconds is None else seconds
    root = ET.Element("testsuites", name=_clean(suite), tests=str(len(cases)), failures=str(counts["fail"]),
                      errors=str(counts["error"]), skipped=str(counts["skip"]), time=f"{total:.3f}")
    node = ET.SubElement(root, "testsuite", name=_clean(suite), tests=str(len(cases)),
                         failures=str(counts["fail"]), errors=str(counts["error"]), skipped=str(counts["skip"]),
                         time=f"{total:.3f}", timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
    if properties:
        props = ET.SubElement(node, "properties")
        for key, value in properties.items():
            ET.SubElement(props, "property", name=_clean(key), value=_clean(value))
    for c in cases:
        tc = ET.SubElement(node, "testcase", classname=_clean(c.classname or suite), name=_clean(c.name),
                           time=f"{c.seconds:.3f}")
        if c.result == "fail":
            ET.SubElement(tc, "failure", message=_clean(c.message), type="failure").text = _clean(c.text)
        elif c.result == "error":
            ET.SubElement(tc, "error", message=_clean(c.message), type="error").text = _clean(c.text)
        elif c.result == "skip":
            ET.SubElement(tc, "skipped", message=_clean(c.message))
        elif c.text:
            ET.SubElement(tc, "system-out").text = _clean(c.text)
    ET.indent(root)
    ET.ElementTree(root).write(path, encoding="UTF-8", xml_declaration=True)


def fuzz_cases(result, target):
    """The testcases of a qcheck.fuzz run (a FuzzResult)."""
    cases = []
    for key, group in sorted(result.groups.items()):
        first = group.first
        text = first.saved_text()
        classes = ", ".join(f"{s} ({n})" for s, n in sorted(group.classes.items()))
        cases.append(Case(f"finding group [{key}]", "fail", 0.0, f"{group.count} cases; classes: {classes}",
                          f"first case: {first.path}\n{text}", classname=target))
    for entry, group in sorted(result.known.items()):
        k = result.known_entries[entry]
        cases.append(Case(f"known [{k.signature}]", "skip", 0.0,
                          f"{group.count} cases under a known bug" + (f": {k.note}" if k.note else ""),
                          classname=target))
    if not result.groups:
        cases.append(Case("no new findings", "pass", result.seconds, text=result.summary(), classname=target))
    return cases


def write_fuzz(path, result, target):
    write(path, f"qcheck.fuzz {target}", fuzz_cases(result, target),
          {"op": result.op, "executions": result.executions, "exec_per_second": f"{result.exec_per_second:.0f}",
           "semantic_bins": len(result.bins), "workers": result.workers or 1}, seconds=result.seconds)


def main(argv):
    if len(argv) != 2:
        print("usage: junit.py SUITE OUT.xml < CASES.tsv", file=sys.stderr)
        return 2
    cases = []
    for number, line in enumerate(sys.stdin, 1):
        fields = line.rstrip("\n").split("\t")
        if len(fields) < 2 or not line.strip():
            continue
        fields += [""] * (5 - len(fields))
        name, result, seconds, message, text = fields[:5]
        try:
            cases.append(Case(name, result, float(seconds or 0), message, text.replace("\\n", "\n")))
        except ValueError as e:
            print(f"junit.py: line {number}: {e}", file=sys.stderr)
            return 2
    write(argv[1], argv[0], cases)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
