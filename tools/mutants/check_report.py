"""Checks qcheck-mutants' reports in DIR: mutation-report.json has what
Stryker's mutation-testing-report schema (version 2) requires of a report
and of each mutant, with statuses of the schema only, and agrees with
mutants.csv (a mutant is Killed exactly when every seed found it; a bug
the fuzzer missed is Ignored only when it was proven equivalent)."""

import csv
import json
import sys
from pathlib import Path

STATUSES = {"Killed", "Survived", "NoCoverage", "CompileError", "RuntimeError", "Timeout", "Ignored", "Pending"}


def main(folder):
    folder = Path(folder)
    report = json.loads((folder / "mutation-report.json").read_text())
    assert report["schemaVersion"] == "2" and {"high", "low"} <= set(report["thresholds"]), report.keys()
    rows = {}
    for row in csv.DictReader((folder / "mutants.csv").open()):
        rows.setdefault(row["backend"], []).append(row)
    seen = 0
    for path, file in report["files"].items():
        assert isinstance(file["source"], str) and file["language"] == "cpp", path
        for m in file["mutants"]:
            assert m["status"] in STATUSES, m
            assert {"id", "mutatorName", "location", "statusReason"} <= set(m), m
            assert m["location"]["start"]["line"] >= 1 and m["location"]["start"]["column"] >= 1, m
            found = [r["found"] == "1" for r in rows[m["id"]]]
            kind = rows[m["id"]][0]["kind"]
            equivalent = rows[m["id"]][0].get("equivalent") == "proven"
            if kind == "bug" and equivalent and not all(found):
                assert m["status"] == "Ignored" and m["statusReason"].startswith("equivalent: "), m
            elif kind == "bug":
                assert m["status"] == ("Killed" if all(found) else "Survived"), (m, found)
            else:
                assert m["status"] == "Ignored" and (not any(found)) == ("as it must" in m["statusReason"]), m
            seen += 1
    assert seen == len(rows), (seen, len(rows))
    print(f"mutation-report.json: {seen} mutants, score {report['config']['mutationScore']:.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
