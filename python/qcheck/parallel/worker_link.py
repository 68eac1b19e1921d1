"""The worker folder between a worker process and its parent
(qcheck.parallel.workers): the worker's side (WorkerLink: the parent's stop
file, the case in flight, its status and, at the end, its result as JSON)
and the parent's side of the result (add_result: a worker's result read
back into the run's FuzzResult, its findings and groups)."""

import json
import time
from pathlib import Path

from ..model.case import Case
from ..reports.result import Finding, Group
from ..reports.summary import add_figures
from .supervise import STOP_FILE


class WorkerLink:
    """A worker's side of the worker folder: should_stop (the parent's
    stop file), running(case) (the case in flight, for the parent's triage
    if the process dies), report(result) (its status for the progress line)
    and finish(result) (everything the summary needs)."""

    def __init__(self, folder, index):
        self.folder, self.index = Path(folder), index
        self.stop_file = self.folder / STOP_FILE
        self.current = self.folder / f"w{index}.current.json"
        self.retry = self.folder / f"w{index}.retry.json"

    def should_stop(self):
        return self.stop_file.exists()

    def running(self, case):
        case.save(self.current)

    def _write(self, name, data):
        path = self.folder / name
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(data))
        partial.replace(path)

    def hand_over(self, case):
        """The case a CUDA error after an out-of-memory error stopped this round
        on: the next round retries it alone first (qcheck.parallel.memory)."""
        case.save(self.retry)

    def take_retry(self):
        """The case the last round handed over, or None."""
        if not self.retry.exists():
            return None
        case = Case.load(self.retry)
        self.retry.unlink()
        return case

    def report(self, result, seconds, waiting=None):
        """The status for the progress line; waiting: what a wait for the
        device waits for (qcheck.parallel.gpu_ledger), None when none waits."""
        self._write(f"w{self.index}.status.json", {"executions": result.executions, "seconds": seconds,
                                                   "bins": sorted(result.bins), "findings": len(result.findings),
                                                   "waiting": waiting})

    def finish(self, result):
        def group(g):
            f = g.first
            return {"count": g.count, "classes": g.classes, "first": {
                "path": str(f.path) if f.path else None, "signature": f.signature, "signatures": f.signatures,
                "group": f.group, "known": f.known, "text": f.text}}
        self._write(f"w{self.index}.result.json", {
            "executions": result.executions, "seconds": result.seconds, "bins": sorted(result.bins),
            "phases": result.phases, "compile": result.compile, "outside_domain": result.outside_domain,
            "stopped": result.stopped, "corpus_loaded": result.corpus_loaded, "memory": result.memory,
            "first_finding_at": (None if result.first_finding_seconds is None else
                                 time.time() - result.seconds + result.first_finding_seconds),
            "groups": {k: group(g) for k, g in result.groups.items()},
            "known": {str(k): group(g) for k, g in result.known.items()},
            "findings": [{"path": str(f.path) if f.path else None, "signature": f.signature,
                          "signatures": f.signatures, "group": f.group, "text": f.text} for f in result.findings]})
        if self.current.exists():
            self.current.unlink()


def _finding(d):
    case = Case.load(d["path"]) if d.get("path") and Path(d["path"]).exists() else None
    return Finding(case, d["signature"], d["signatures"], d["group"], d.get("known"), d["text"],
                   Path(d["path"]) if d.get("path") else None)


def _merge_groups(into, groups, key_type=str):
    for key, g in groups.items():
        key = key_type(key)
        if key not in into:
            into[key] = Group(_finding(g["first"]))
        into[key].count += g["count"]
        for name, n in g["classes"].items():
            into[key].classes[name] = into[key].classes.get(name, 0) + n



def add_result(result, index, r, start_epoch, seen_paths):
    """Adds worker `index`'s result (WorkerLink.finish's, read back as `r`) to the run's
    `result`; start_epoch: the run's start, seen_paths: the findings taken so far."""
    result.executions += r["executions"]
    result.worker_executions[index] = result.worker_executions.get(index, 0) + r["executions"]
    result.corpus_loaded += r["corpus_loaded"]
    if r["first_finding_at"] is not None:
        at = r["first_finding_at"] - start_epoch
        result.first_finding_seconds = at if result.first_finding_seconds is None else min(
            result.first_finding_seconds, at)
    result.bins |= set(r["bins"])
    for k, v in r["phases"].items():
        result.phases[k] = result.phases.get(k, 0.0) + v
    result.outside_domain += r["outside_domain"]
    if r["compile"]:
        add_figures(result.compile, r["compile"])
    m = r.get("memory") or {}
    result.memory["retried"] += m.get("retried", 0)
    result.memory["notes"] += m.get("notes", [])
    result.memory["waited_seconds"] += m.get("waited_seconds", 0.0)
    result.memory["overdue"] += m.get("overdue", 0)
    _merge_groups(result.groups, r["groups"])
    _merge_groups(result.known, r["known"], int)
    for f in r["findings"]:
        if f["path"] not in seen_paths:  # one case found by two workers is one finding
            seen_paths.add(f["path"])
            result.findings.append(_finding(f))
