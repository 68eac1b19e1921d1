"""qcheck.fuzz: a fuzz loop for a kernel called from Python.

Cases come from libqcheck's structure-aware mutator. A Triton or CUDA kernel
called from Python gives the loop no coverage, so what it keeps is what
reaches a semantic bin no earlier case reached (the bins libFuzzer gets as
extra features in the C++ targets: shape classes, T % 16, paths, dtypes,
layouts, alias, value recipes, special values in the inputs, UE8M0 exponent
buckets, and the verdict's class). Kept cases are parents of later
mutations (and are written to `corpus` when given); one case in eight is a
cross-over of two kept cases, one in sixteen a fresh seed case.

Every case runs the kernel twice (qcheck.run: poison A and B). A mismatch, a
kernel that raises, or a GPU fault is a finding: the case is saved as JSON in
`findings` with its verdict and the replay command, and grouped by
signature. After a CUDA error the process's context is dead; the loop stops
there (the case that caused it is saved).
"""

import random
import sys
import time
from pathlib import Path

from ..model import _capi
from ..model.bins import case_bins
from ..model.case import Case
from ..model.domain import domain_of, fit, outside
from ..model.known import KnownList, classify, signatures_of
from ..model.ops import DEFAULT_OP, op as lookup_op
from ..model.verdict import run
from ..parallel.gpu_ledger import Abandoned
from ..parallel.memory import MemoryRules
from ..parallel.targets import target_spec
from ..parallel.workers import default_workers, fuzz_with_workers
from ..reports.result import Finding, FuzzResult, Group, replay_command
from .compile import EXPLORE_CANDIDATES, CompileSchedule


def _target_name(kernel):
    module = getattr(kernel, "__module__", None)
    name = getattr(kernel, "__qualname__", getattr(kernel, "__name__", None))
    return f"{module}:{name}" if module and name else "MODULE:FUNCTION"


def _generated(pool, rng, key, n, case_size, op):
    """A case of the plain loop: a fresh seed case every 16th execution (and
    while the pool is empty), a cross-over of two kept cases every 8th
    (fused_q's: the only op with a cross-over yet), else a mutation of a
    kept one."""
    if not pool or n % 16 == 0:
        return Case.from_seed(key, case_size, op=op)
    if len(pool) > 1 and n % 8 == 1 and op == DEFAULT_OP:
        return rng.choice(pool).cross_over(rng.choice(pool), key, case_size)
    return rng.choice(pool).mutate(key, case_size)


def _default_workers(kernel, device, executions):
    if executions is not None or device is None or not str(device).startswith("cuda"):
        return 1
    try:
        target_spec(kernel)
    except ValueError as e:
        print(f"qcheck.fuzz: one process ({e})", file=sys.stderr)
        return 1
    return default_workers()


def _inside(kernel, domain, case):
    """The case repaired into the kernel's domain, or None where it stays outside."""
    if domain is not None:
        case = fit(kernel, case)
        if not case.is_valid():
            return None
    return None if outside(kernel, case) is not None else case


def fuzz(kernel, minutes=1.0, profile=None, case_size="tiny", seed=1, corpus=None, device=None,
         findings="qcheck-findings", max_findings=50, progress=True, executions=None, graph=False, known=None,
         poison_allocator=True, compile_aware=True, explore_share=0.2, workers=None, ray=None, _worker=None):
    """Fuzzes `kernel(tensors)` (the adapter contract of python/README.md)
    for `minutes` (or `executions` cases). Returns a FuzzResult. A kernel
    with a domain (qcheck.Domain: @qcheck.kernel, a qcheck.Plugin) gets
    every case repaired into it and only cases inside it; one with a
    profile is judged under it unless `profile` says otherwise. graph=True
    also replays every case from a CUDA graph. known: qcheck.Known entries
    (or a known-bugs file): findings they cover are counted apart and do not
    stop the run (qcheck.known). poison_allocator=False skips the
    poisoning of torch's cached memory before each CUDA run
    (qcheck.model.allocator): for a kernel that allocates no output of its own.
    The cases are of the op the kernel declares (@qcheck.kernel(op=...);
    fused_q when it declares none). An op other than fused_q (fused_k) has
    no limit cases, cross-overs or compile keys yet: its loop mutates kept
    cases and keeps those that reach a new bin of its fields
    (qcheck_case_bin_names); a kernel restricts its cases with an
    `outside(case)` attribute (None, or why it does not take the case).

    compile_aware (qcheck.fuzzing.compile): most executions mutate cases whose
    compile key the kernel has compiled already; explore_share of the time
    goes to new keys. workers=N runs N processes (qcheck.parallel.workers) sharing the
    corpus and the findings, under an MPS daemon of qcheck's own on a GPU;
    the kernel must then be importable by name (MODULE:FUNCTION, a script's
    PATH:FUNCTION, or a qcheck.Plugin). Left out (None): one per core but one
    for a timed run on a CUDA device with such a kernel, else one (a run of
    a given number of `executions` stays in this process). ray: the workers
    on a Ray cluster (its address, or "local" for a Ray instance of this
    run's own; qcheck.parallel.ray_workers), `workers` in all or, left out, one per
    CPU of its nodes (on a CUDA device: of its GPU nodes, one left free)."""
    if workers is None and _worker is None and ray is None:
        workers = _default_workers(kernel, device, executions)
    if (ray is not None or workers is not None and workers > 1) and _worker is None:
        return fuzz_with_workers(kernel, workers, minutes=minutes, profile=profile, case_size=case_size, seed=seed,
                                 corpus=corpus, device=device, findings=findings, max_findings=max_findings,
                                 progress=progress, executions=executions, graph=graph, known=known,
                                 poison_allocator=poison_allocator, compile_aware=compile_aware,
                                 explore_share=explore_share, ray=ray)
    profile = profile or getattr(kernel, "profile", None)
    op = getattr(kernel, "op", None) or DEFAULT_OP
    lookup_op(op)  # ValueError naming the ops there are
    if op != DEFAULT_OP:
        compile_aware = False
    domain = domain_of(kernel)
    known_list = known if isinstance(known, KnownList) or known is None else KnownList(known)
    rng = random.Random(seed)
    result = FuzzResult(known_list.entries if known_list else (), op=op)
    schedule = CompileSchedule(kernel, explore_share, compile_aware)
    findings_dir = Path(findings)
    corpus_dir = Path(corpus) if corpus else None
    pool = []
    seen_corpus = set()
    limit_cases, last_limit = 0, -1
    target = _target_name(kernel)
    domain_file = getattr(kernel, "domain_file", None)
    memory = MemoryRules(device, poison_allocator, findings_dir, lambda path: replay_command(
        path, target, profile, device, known_list.path if known_list is not None else None, domain_file))
    pending = _worker.take_retry() if _worker is not None else None
    start = time.monotonic()
    last_print = last_reload = start
    deadline = start + minutes * 60
    if memory.ledger is not None:
        if _worker is not None:  # a long wait for the device shows in the status
            memory.ledger.on_wait = lambda waiting: _worker.report(result, time.monotonic() - start, waiting)
        # (a wait ends with the run's time, or the parent's stop)
        memory.ledger.give_up = lambda: ((executions is None and time.monotonic() >= deadline) or
                                         (_worker is not None and _worker.should_stop()))

    def load_corpus():
        """The corpus folder's cases not seen yet; the number taken in."""
        if not (corpus_dir and corpus_dir.is_dir()):
            return 0
        taken = 0
        for path in sorted(corpus_dir.iterdir()):
            if path.name in seen_corpus or path.suffix != ".json":
                continue
            seen_corpus.add(path.name)
            try:
                c = Case.load(path)
                c.validate()
                pool.append(c)
                taken += 1
            except (OSError, _capi.QcheckError):
                pass
        return taken

    load_corpus()
    try:
        while (executions is None and time.monotonic() < deadline) or (executions is not None and
                                                                        result.executions < executions):
            if _worker is not None and _worker.should_stop():
                result.stopped = "stopped by the parent"
                break
            n = result.executions
            key = rng.getrandbits(64)
            t_case = time.monotonic()
            # The case a CUDA error after an out-of-memory error ended the last
            # round on (qcheck.parallel.memory): retried alone before anything else.
            alone_first = pending is not None
            limit = reached = None  # reached: the case's semantic bins, where the choice computed them
            if alone_first:
                case, pending = pending, None
            else:
                # case_size "limit": now and then a case at the hardware's limits (never pooled).
                limit = (Case.limit_case(key, n, limit_cases, case_size) if n != last_limit and op == DEFAULT_OP
                         else None)
                if limit is not None:
                    case, last_limit, limit_cases = limit, n, limit_cases + 1
                    case = _inside(kernel, domain, case)
                elif schedule.explore_now(t_case - start):
                    # Explore: of a few generated cases, one on a key not yet
                    # compiled here, the one that adds most semantic bins.
                    case, best = None, None
                    for i in range(EXPLORE_CANDIDATES if schedule.aware else 1):
                        c = _inside(kernel, domain, _generated(pool, rng, rng.getrandbits(64) if i else key, n + i,
                                                                 case_size, op))
                        if c is None:
                            continue
                        bins = case_bins(c, profile)
                        score = (schedule.key_of(c) not in schedule.warm, len(bins - result.bins))
                        if best is None or score > best:
                            case, best, reached = c, score, bins
                else:
                    case = _inside(kernel, domain, schedule.warm_child(rng, key, case_size))
            # Outside even after the repair (rules that contradict, an invalid
            # repair, or a plugin's supports callback): counted, not run.
            if case is None:
                result.outside_domain += 1
                result.phases["cases"] += time.monotonic() - t_case
                continue
            if reached is None:
                reached = case_bins(case, profile)
            compile_key = schedule.key_of(case)
            result.phases["cases"] += time.monotonic() - t_case
            if _worker is not None:
                _worker.running(case)
            # The library refusing a case it made itself raises (a bug of
            # qcheck's, not a finding); a kernel's exception is a verdict of exit 3.
            kernel_before, count_before = result.phases["kernel"], schedule.before()
            try:
                outcome = memory.run(case, lambda measure: run(
                    case, kernel, device, profile=profile, name=target, graph=graph, phases=result.phases,
                    poison_allocator=poison_allocator, memory=measure), n, alone_first)
            except Abandoned:
                result.stopped = ("stopped by the parent" if _worker is not None and _worker.should_stop() else
                                  "the time ran out while the case waited for GPU memory")
                break
            if outcome.stop is not None:  # (the CUDA context may be dead: the case is retried alone elsewhere)
                if _worker is not None:
                    _worker.hand_over(case)
                else:
                    memory.note(case, outcome.stop + " (this process's CUDA context may be dead, so it was not "
                                                     "retried alone: replay it alone)")
                result.stopped = outcome.stop
                break
            verdict = outcome.verdict
            result.executions += 1
            schedule.record(case, compile_key, count_before, result.phases["kernel"] - kernel_before,
                            time.monotonic() - t_case)
            new = reached - result.bins
            result.bins |= reached
            if new and limit is None and verdict is not None:
                pool.append(case)
                if corpus_dir:
                    corpus_dir.mkdir(parents=True, exist_ok=True)
                    seen_corpus.add(f"{case.digest}.json")
                    case.save(corpus_dir / f"{case.digest}.json")
            if verdict is not None and not verdict.passed:  # (None: a memory note, no verdict)
                _record(result, case, verdict, known_list, findings_dir, target, profile, device,
                        getattr(kernel, "domain_file", None))
                if result.findings and result.first_finding_seconds is None:
                    result.first_finding_seconds = time.monotonic() - start
                if verdict.exit_code == 3 and "CUDA" in verdict.json.get("reason", "") and \
                        not verdict.json.get("out_of_memory"):
                    result.stopped = "a CUDA error: the process's CUDA context is dead (the case is saved)"
                    break
                if len(result.findings) >= max_findings:
                    result.stopped = f"{max_findings} findings"
                    break
            now = time.monotonic()
            if now - start - result.timeline[-1][0] >= 1:
                result.timeline.append((now - start, result.executions))
            if _worker is not None and now - last_reload >= 1:  # the other workers' new corpus entries
                result.corpus_loaded += load_corpus()
                _worker.report(result, now - start)
                last_reload = now
            if progress and now - last_print >= 10:
                print(f"[{now - start:6.0f}s] {result.executions} execs, {result.executions / (now - start):.0f}/s, "
                      f"{len(result.bins)} bins, {len(result.findings)} findings", file=sys.stderr)
                last_print = now
    except KeyboardInterrupt:  # Ctrl-C: the run ends here, with its summary (the findings are saved already)
        result.stopped = "interrupted (SIGINT)"
    finally:
        schedule.close()
        if memory.ledger is not None:
            memory.ledger.close()
    result.memory = memory.figures()
    result.seconds = time.monotonic() - start
    result.timeline.append((result.seconds, result.executions))
    result.compile = schedule.figures()
    if progress:
        print(result.summary(), file=sys.stderr)
    return result


def _record(result, case, verdict, known_list, findings_dir, target, profile, device, domain_file):
    signatures = signatures_of(verdict)
    entry, group_key = classify(known_list, case, signatures)
    groups = result.groups if entry is None else result.known
    key = group_key if entry is None else entry
    path = None
    if key not in groups or entry is None:  # a known entry's findings are saved once
        findings_dir.mkdir(parents=True, exist_ok=True)
        path = findings_dir / f"{case.digest}.json"
        case.save(path)
        replay = replay_command(path, target, profile, device,
                                known_list.path if known_list is not None else None, domain_file)
        (findings_dir / f"{case.digest}.txt").write_text(verdict.text + "\nreplay: " + replay + "\n")
    finding = Finding(case, verdict.signature or signatures[0], signatures, group_key, entry, verdict.text, path)
    group = groups.setdefault(key, Group(finding))
    group.count += 1
    for c in verdict.json.get("counts", []) or [{"signature": signatures[0], "count": 1}]:
        name = c.get("signature") or f"{c['tensor']}/{c['part']}/{c['class']}"
        group.classes[name] = group.classes.get(name, 0) + c.get("count", 1)
    if entry is None:
        result.findings.append(finding)
