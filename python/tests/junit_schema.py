"""Validation of a JUnit file against junit.xsd (beside this file) with
xmlschema, a pure-Python XML Schema 1.0 validator from the Python registry
(requirements.txt here): a check independent of qcheck's writer that runs
wherever python3 does, the GPU host included (no xmllint there). A test
dependency only: qcheck itself never imports it.

Where xmlschema is missing the caller fails with MISSING, which says how to
get it; never a skip (the GPU gate counts a skip as a failure, and a schema
check that quietly does not run is how a broken JUnit file would reach CI).

As a program (ctest's mutants.junit_report, campaign_test.sh):
    python3 junit_schema.py FILE...
exit 0 when every FILE validates, 1 with one line per problem otherwise, 2
when xmlschema is not importable.
"""

import sys
from pathlib import Path

try:
    import xmlschema
except ImportError:
    xmlschema = None

SCHEMA = Path(__file__).resolve().parent / "junit.xsd"
MISSING = ("xmlschema is not importable: the JUnit files are validated against junit.xsd with it. Install the "
           "tests' pinned dependencies (python3 -m pip install -r python/tests/requirements.txt) or run the "
           "command through tests/with_test_deps.sh DIR COMMAND..., as ctest and the GPU gate do")

_loaded = []  # the parsed schema, once


def available():
    return xmlschema is not None


def problems(path):
    """Every way the file at path breaks junit.xsd, one line each ([] when it validates)."""
    if xmlschema is None:
        raise RuntimeError(MISSING)
    if not _loaded:
        _loaded.append(xmlschema.XMLSchema10(str(SCHEMA)))
    try:
        return [f"{error.path}: {error.reason}" for error in _loaded[0].iter_errors(str(path))]
    except xmlschema.XMLSchemaException as error:  # unreadable, or not XML at all
        return [f"not readable as XML: {error}"]


def main(paths):
    if not paths:
        print("usage: junit_schema.py FILE...", file=sys.stderr)
        return 2
    if xmlschema is None:
        print(f"junit_schema: {MISSING}", file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        found = problems(path)
        for line in found:
            print(f"{path}: {line}", file=sys.stderr)
        status = status or (1 if found else 0)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
