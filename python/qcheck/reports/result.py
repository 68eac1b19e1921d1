"""What a fuzz run found: FuzzResult (the figures, the findings and their
groups, the summary), a Finding, a Group, and the command that replays a
saved finding. One process's loop (qcheck.fuzzing.loop) fills it as it
runs; the workers' parent (qcheck.parallel.workers) merges its workers'
into one; the JUnit and HTML writers beside it tell it."""

from ..model.bins import bin_count
from ..model.ops import DEFAULT_OP
from .summary import compile_summary, memory_lines


class Finding:
    """case, signature (the verdict's primary), signatures (all of them),
    group (where the outputs differ), known (the index of the known entry it
    falls under, else None), text (the verdict), path (the saved case; for
    a known finding after its entry's first, None: saved once)."""

    def __init__(self, case, signature, signatures, group, known, text, path):
        self.case, self.signature, self.signatures = case, signature, signatures
        self.group, self.known, self.text, self.path = group, known, text, path

    def saved_text(self):
        """The verdict and replay command as saved beside the case (its
        .txt), else the verdict's text."""
        saved = self.path.with_suffix(".txt") if self.path else None
        return saved.read_text() if saved is not None and saved.exists() else self.text


class Group:
    """The findings of one group: count, classes (signature -> elements or
    findings counted under it, every class the group's findings showed) and
    first (its first Finding)."""

    def __init__(self, first):
        self.count, self.classes, self.first = 0, {}, first


class FuzzResult:
    """executions, seconds, exec_per_second, bins (reached), findings (the
    new findings: Finding list), groups (group -> Group: where the outputs
    differ), known (entry index -> Group of the findings under that known
    entry; known_entries the Known list), phases (seconds per phase: cases
    (mutator and semantic bins), inputs (libqcheck writes the buffers),
    transfers (to the device and back), allocator (the poisoning of torch's
    cached memory before each CUDA run), kernel (the adapter, to a
    synchronize), verdict (libqcheck's judge)), compile (qcheck.fuzzing.compile's
    figures), workers and restarts (qcheck.parallel.workers), cluster (on Ray))."""

    def __init__(self, known_entries=(), op=DEFAULT_OP):
        self.op = op  # the op whose cases the run made (qcheck.ops())
        self.executions = 0
        self.seconds = 0.0
        self.bins = set()
        self.findings = []
        self.groups = {}
        self.known = {}
        self.known_entries = list(known_entries)
        self.phases = {"cases": 0.0, "inputs": 0.0, "transfers": 0.0, "allocator": 0.0, "kernel": 0.0,
                       "verdict": 0.0}
        self.stopped = ""
        self.outside_domain = 0  # generated cases the kernel's domain refused even after the repair
        self.compile = {}  # qcheck.fuzzing.compile's figures: compiles, compile_seconds, warm_executions, ...
        self.workers = 0  # processes (qcheck.parallel.workers), 0 for this one
        self.restarts = []  # (worker, why) of each worker restarted
        self.worker_executions = {}  # worker -> executions (all its rounds)
        self.cluster = []  # on Ray, a dict per worker: where it ran, what it exchanged (qcheck.parallel.ray_workers)
        self.corpus_loaded = 0  # corpus entries taken in while running (the other workers' finds)
        self.first_finding_seconds = None  # from the start to the first new finding
        self.timeline = [(0.0, 0)]  # (seconds, executions) about once a second: the HTML report's plot
        # qcheck.parallel.memory's figures: retried (out-of-memory errors that passed alone), notes ([{"path", "text"}]:
        # cases that need more memory than the device has), waited_seconds and overdue (the GPU ledger's waits)
        self.memory = {"retried": 0, "notes": [], "waited_seconds": 0.0, "overdue": 0}

    def write_html(self, path, target="kernel"):
        """The run as one self-contained HTML page (qcheck.reports.html_report)."""
        from .html_report import write_fuzz
        write_fuzz(path, self, target)

    def write_junit(self, path, target="kernel"):
        """The run as JUnit XML (qcheck.reports.junit): a failing testcase per finding
        group with the first finding's verdict and replay command, a skipped
        one per known entry, a passing "no new findings" when there are none."""
        from .junit import write_fuzz
        write_fuzz(path, self, target)

    @property
    def by_group(self):
        """group -> number of new findings in it."""
        return {g: group.count for g, group in self.groups.items()}

    @property
    def exec_per_second(self):
        return self.executions / self.seconds if self.seconds > 0 else 0.0

    def summary(self):
        lines = [f"qcheck.fuzz: {self.executions} executions in {self.seconds:.1f} s, "
                 f"{self.exec_per_second:.0f} exec/s; {len(self.bins)} " +
                 (f"of {bin_count()} semantic bins" if self.op == DEFAULT_OP else "semantic bins of the fields") +
                 f"; op {self.op}"]
        total = sum(self.phases.values()) or 1.0
        lines.append("time: " + ", ".join(f"{k} {v / max(1, self.executions) * 1e6:.0f} us/exec "
                                          f"({100 * v / total:.0f}%)" for k, v in self.phases.items()))
        if self.compile:
            lines += compile_summary(self.compile, self.executions, self.seconds, self.workers)
        if self.workers:
            lines.append(f"workers: {self.workers}" + (f", {len(self.restarts)} restarted: " +
                                                      "; ".join(f"w{w} ({why})" for w, why in self.restarts)
                                                      if self.restarts else ", none restarted"))
        if self.cluster:
            rows = self.cluster
            lines.append(f"Ray: {len({r['node'] for r in rows})} nodes; corpus entries handed over "
                         f"{sum(r['handed_over'] for r in rows)}, handed out {sum(r['received'] for r in rows)}; "
                         f"{sum(r['incarnations'] - 1 for r in rows)} actor restarts by Ray")
        if self.outside_domain:
            lines.append(f"{self.outside_domain} generated cases outside the kernel's domain (not run)")
        lines += memory_lines(self.memory)
        if self.stopped:
            lines.append("stopped: " + self.stopped)
        if self.known:
            lines.append(f"KNOWN: {sum(g.count for g in self.known.values())} cases under "
                         f"{len(self.known)} known entries (not counted as findings)")
            for entry, group in sorted(self.known.items()):
                k = self.known_entries[entry]
                lines.append(f"  {group.count} x known [{k.signature}]" + (f" ({k.note})" if k.note else "") +
                             f"  first: {group.first.path}")
        if not self.findings:
            lines.append("no new findings" if self.known else "no findings")
        else:
            first = self.first_finding_seconds
            lines.append(f"FINDINGS: {len(self.findings)} cases in {len(self.groups)} groups (where the outputs "
                         "differ)" + (f", the first after {first:.1f} s" if first is not None else ""))
            for key, group in sorted(self.groups.items()):
                lines.append(f"  {group.count} x [{key}]  first: {group.first.path}")
                lines.append("      classes: " + ", ".join(f"{s} ({n})" for s, n in sorted(group.classes.items())))
        return "\n".join(lines)


def replay_command(path, target, profile=None, device=None, known=None, domain_file=None):
    """The command that replays a saved case on the same kernel, as it was run."""
    return (f"python -m qcheck replay {path} {target}" + (f" --profile {profile}" if profile else "") +
            (f" --device {device}" if device else "") + (f" --domain {domain_file}" if domain_file else "") +
            (f" --known {known}" if known else ""))
