"""qcheck.fuzz in several processes: qcheck.fuzz(kernel, workers=N) and
python -m qcheck fuzz TARGET --workers N.

Each worker is `python -m qcheck fuzz TARGET` with a worker folder: the same
loop as one process (qcheck.fuzz), its own seed, one corpus folder and one
findings folder shared by all (a worker reads the others' new corpus entries
every second, as libFuzzer's -reload does), and one kernel cache (Triton's
TRITON_CACHE_DIR, so a variant one worker compiled is loaded, not compiled,
by the others). On a CUDA device they share the GPU under an MPS daemon of
the run's own (qcheck.parallel.mps, the rules the C++ campaign follows), and worker 0
runs the limit schedule (case_size "limit": T past 65535, views past 2^32
elements, production loads) unless the run asked for limit cases itself.

The parent prints one progress line for all and, at the end, one summary:
the workers' findings merged by group (a case two workers found is one
file: findings are named by the case's digest). A worker that stops on a
CUDA error (its context is dead) or dies (a signal, an exit without its
result) is restarted with a new seed while time is left; the case it was
running when it died is saved as a finding of its own ("worker died").
The workers share a GPU memory ledger (qcheck.parallel.gpu_ledger, RUN/gpu-ledger
unless QCHECK_GPU_LEDGER names one): memory the harness exhausts is not a
bug of the kernel (qcheck.parallel.memory); a round stopped on a CUDA error after an
out-of-memory error hands its case to the next round, which retries it alone.

Where the processes run is the one thing LocalProcesses (this host) and
qcheck.parallel.ray_workers.RayProcesses (a Ray cluster: qcheck.fuzz(..., ray=ADDRESS))
change; everything above reads the run's folder either way.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from ..model import _capi
from ..model.case import Case
from ..model.known import KnownList
from ..reports.result import Finding, FuzzResult, Group, replay_command
from .gpu_ledger import ENV as LEDGER_ENV, WORKERS_ENV as LEDGER_WORKERS_ENV
from .mps import Daemons
from .supervise import Ended, Supervisor
from .targets import import_root, target_spec
from .worker_link import add_result

POLL_SECONDS = 0.5
STOP_GRACE_SECONDS = 60  # a limit case may run 30 s: time for the last one to end


def default_workers():
    """One per core on a GPU host, one core left free (to the MPS server and the parent)."""
    return max(1, (os.cpu_count() or 2) - 1)


class LocalProcesses:
    """The workers as processes of this host: on a CUDA device under an MPS
    daemon of the run's own (qcheck.parallel.mps), one kernel cache for all. The
    interface qcheck.parallel.ray_workers.RayProcesses has too: start() gives a
    Popen-like handle, sync() is called before each look at the workers,
    stop() at the end, cluster() gives FuzzResult.cluster; device_arg (the
    workers' --device) and note."""

    def __init__(self, kernel, device, on_cuda, run_dir, workers=1):
        gpu = None
        if on_cuda:  # the physical index: an MPS daemon is started with CUDA_VISIBLE_DEVICES set to it
            index = int(str(device).split(":", 1)[1]) if ":" in str(device) else 0
            visible = [v for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v]
            gpu = visible[index] if index < len(visible) else str(index)
        self.daemons = Daemons(run_dir / "mps", [gpu] if on_cuda else [], os.environ.get("QCHECK_FUZZ_MPS", "auto"))
        env_set, env_unset = self.daemons.environment(gpu) if on_cuda else ({}, [])
        self.device_arg = "cuda" if env_set else device  # under our daemon, its CUDA_VISIBLE_DEVICES decides
        self.note = self.daemons.note if on_cuda else ""
        env = dict(os.environ, **env_set)
        for name in env_unset:
            env.pop(name, None)
        # One kernel cache for all (Triton's default folder unless the user chose one).
        env.setdefault("TRITON_CACHE_DIR", str(Path.home() / ".triton" / "cache"))
        # One OpenMP thread per worker (torch's CPU ops), as Ray gives its actors: N workers each
        # with a thread per core kept every core busy spinning (1,429 exec/s against 2,025 on the
        # H200, python/README.md), unless the user chose a number.
        env.setdefault("OMP_NUM_THREADS", "1")
        # One GPU memory ledger for the run's workers (qcheck.parallel.gpu_ledger), unless the user named one to
        # share with other runs; the large threshold counts the workers on the device.
        env.setdefault(LEDGER_ENV, str(run_dir / "gpu-ledger"))
        env.setdefault(LEDGER_WORKERS_ENV, str(workers))
        env["QCHECK_LIBRARY"] = str(Path(_capi.library_path).resolve())  # the library this process loaded
        roots = [str(Path(__file__).resolve().parents[2]), import_root(kernel), os.getcwd(), env.get("PYTHONPATH")]
        env["PYTHONPATH"] = os.pathsep.join(r for r in roots if r)
        self.env = env

    def start(self, index, round_, args, log_path):
        with open(log_path, "wb") as log:
            return subprocess.Popen(args, env=self.env, stdout=log, stderr=subprocess.STDOUT)

    def sync(self):
        pass  # the workers write into the run's folders themselves

    def cluster(self):
        return []  # (one host)

    def stop(self):
        self.daemons.stop()


def fuzz_with_workers(kernel, workers, minutes=1.0, profile=None, case_size="tiny", seed=1, corpus=None,
                      device=None, findings="qcheck-findings", max_findings=50, progress=True, executions=None,
                      graph=False, known=None, poison_allocator=True, compile_aware=True, explore_share=0.2,
                      ray=None):
    """qcheck.fuzz(..., workers=N): see the module's text. Returns one FuzzResult for all. ray: the
    workers on a Ray cluster (qcheck.parallel.ray_workers; its address, or "local"), N in all (None: its plan's)."""
    spec, domain_file = target_spec(kernel)
    known_path = known.path if isinstance(known, KnownList) else known
    run_dir = Path(tempfile.mkdtemp(prefix="qcheck-workers-"))
    corpus_dir = Path(corpus) if corpus else run_dir / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    findings_dir = Path(findings)
    findings_dir.mkdir(parents=True, exist_ok=True)
    if ray is not None:  # (whole paths: a worker on a node finds each by the path it is given)
        corpus_dir, findings_dir = corpus_dir.resolve(), findings_dir.resolve()
        known_path, domain_file = (str(Path(p).resolve()) if p else p for p in (known_path, domain_file))
    on_cuda = device is not None and str(device).startswith("cuda")
    if ray is not None:  # (imported here: Ray is an optional extra)
        from .ray_workers import RayProcesses
        processes = RayProcesses(ray, workers, kernel, spec, on_cuda, run_dir, corpus_dir, findings_dir,
                                 [known_path, domain_file])
        workers = processes.count
    else:
        processes = LocalProcesses(kernel, device, on_cuda, run_dir, workers)
    device_arg = processes.device_arg
    sizes = [case_size] * workers
    if on_cuda and case_size != "limit":
        sizes[0] = "limit"
    start, start_epoch = time.monotonic(), time.time()
    deadline = start + minutes * 60
    per_worker = None if executions is None else -(-executions // workers)
    result = FuzzResult(KnownList(known_path).entries if known_path else ())
    result.workers = workers
    dead_findings = []

    def command(slot):
        args = [sys.executable, "-m", "qcheck", "fuzz", spec, "--seed", str(seed + 1000 * slot.round + slot.index),
                "--case-size", sizes[slot.index], "--corpus", str(corpus_dir), "--findings", str(findings_dir),
                "--max-findings", str(max_findings), "--worker-dir", str(run_dir),
                "--worker-index", str(slot.index), "--explore-share", str(explore_share), "--quiet"]
        if per_worker is not None:
            args += ["--executions", str(per_worker)]
        else:
            args += ["--minutes", f"{max(0.0, deadline - time.monotonic()) / 60:.4f}"]
        for flag, value in (("--profile", profile), ("--device", device_arg), ("--known", known_path),
                            ("--domain", domain_file)):
            if value:
                args += [flag, str(value)]
        args += ["--graph"] * bool(graph) + ["--no-poison-allocator"] * (not poison_allocator)
        args += ["--no-compile-aware"] * (not compile_aware)
        return args

    def start_worker(slot):
        return processes.start(slot.index, slot.round, command(slot), run_dir / f"w{slot.index}.r{slot.round}.log")

    def triage_death(slot, code):
        """The case a worker was running when it died, saved as a finding: (why, saved)."""
        why = f"killed by signal {-code}" if code < 0 else f"exit {code} without its result"
        current = run_dir / f"w{slot.index}.current.json"
        if not current.exists():
            return why, False
        case = Case.load(current)
        current.unlink()
        path = findings_dir / f"{case.digest}.json"
        case.save(path)
        text = (f"RUNTIME ERROR: worker w{slot.index} died ({why}) while running this case\n"
                f"log: {run_dir / f'w{slot.index}.r{slot.round}.log'}\n")
        (findings_dir / f"{case.digest}.txt").write_text(
            text + "replay: " + replay_command(path, spec, profile, device, known_path, domain_file) + "\n")
        if not dead_findings:
            dead_at[0] = time.monotonic() - start
        signature = f"worker died ({why.split(' without')[0]})"  # (the group of every such death)
        dead_findings.append(Finding(case, signature, [f"worker died ({why})"], signature, None, text, path))
        return why, True

    def worker_ended(slot, code, ran):
        """None where the worker is done, else why it stopped early (qcheck.parallel.supervise)."""
        result_file = run_dir / f"w{slot.index}.result.json"
        (run_dir / f"w{slot.index}.status.json").unlink(missing_ok=True)
        if result_file.exists():
            r = json.loads(result_file.read_text())
            result_file.unlink()
            results[(slot.index, slot.round)] = r
            if r["stopped"].startswith("a CUDA error after an out-of-memory error") and per_worker is None:
                return Ended("a CUDA error after an out-of-memory error (not a finding: the next round retries "
                             "its case alone)", artifact=True)
            if r["stopped"].startswith("a CUDA error") and per_worker is None:
                return Ended("a CUDA error", artifact=True)  # its findings hold the case
            return None
        if supervisor.stopping():
            return None
        why, saved = triage_death(slot, code)
        return Ended(why, artifact=saved) if per_worker is None else None

    results = {}
    dead_at = [None]
    interrupted = None  # the signal that ended the run early

    class Terminated(Exception):
        pass

    def terminated(*_):
        raise Terminated()
    # SIGTERM (a timeout's, a CI job's cancel) stops the run as Ctrl-C does: left to its default it
    # would end this process alone, its workers and MPS daemon left running (seen on the GPU host).
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, terminated) if main_thread else None
    last_print = start
    supervisor = Supervisor(run_dir, workers, deadline, start_worker, worker_ended)
    if progress:
        print(f"qcheck.fuzz: {workers} workers on {spec}" + (f"; {processes.note}" if processes.note else ""),
              file=sys.stderr)
    try:
        while True:
            processes.sync()  # (Ray: the workers' folders brought here first)
            if not supervisor.poll():
                break
            time.sleep(POLL_SECONDS)
            now = time.monotonic()
            total_findings = sum(len(r["findings"]) for r in results.values()) + len(dead_findings)
            if now >= deadline + STOP_GRACE_SECONDS or total_findings >= max_findings:
                supervisor.stop_file.touch()
            if now >= deadline + STOP_GRACE_SECONDS + 10:
                supervisor.stop(grace=0)
            if now - start - result.timeline[-1][0] >= 2:
                result.timeline.append((now - start, _totals(run_dir, workers, results.values(), 0)[0]))
            if progress and now - last_print >= 10:
                _progress(run_dir, workers, now - start, results.values(), len(dead_findings))
                last_print = now
    except (KeyboardInterrupt, Terminated) as e:  # every worker ends its round (the stop file) and reports
        interrupted = "SIGINT" if isinstance(e, KeyboardInterrupt) else "SIGTERM"
    finally:
        supervisor.stop(grace=STOP_GRACE_SECONDS, signal_first=False)
        processes.stop()
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    for slot in supervisor.slots:  # rounds that ended while the run stopped (Ctrl-C): their results too
        result_file = run_dir / f"w{slot.index}.result.json"
        if (slot.index, slot.round) not in results and result_file.exists():
            results[(slot.index, slot.round)] = json.loads(result_file.read_text())
    result.restarts = supervisor.restarts
    result.cluster = processes.cluster()
    result.seconds = time.monotonic() - start
    seen_paths = set()  # (the findings taken: add_result keeps a case two workers found once)
    for (index, _), r in sorted(results.items()):
        add_result(result, index, r, start_epoch, seen_paths)
    for slot in supervisor.slots:  # a case handed over to a round that never came (the time was up)
        retry = run_dir / f"w{slot.index}.retry.json"
        if retry.exists():
            case = Case.load(retry)
            folder = findings_dir / "memory"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"{case.digest}.json"
            case.save(path)
            text = ("a CUDA error after an out-of-memory error; the run ended before the case was retried alone: "
                    "replay it alone")
            (folder / f"{case.digest}.txt").write_text(
                f"MEMORY: {text}\n(not a finding)\nreplay: "
                f"{replay_command(path, spec, profile, device, known_path, domain_file)}\n")
            result.memory["notes"].append({"path": str(path), "text": text})
    result.memory["notes"].sort(key=lambda n: n.get("at", 0))
    if dead_at[0] is not None and (result.first_finding_seconds is None or dead_at[0] < result.first_finding_seconds):
        result.first_finding_seconds = dead_at[0]
    for f in dead_findings:
        result.findings.append(f)
        group = result.groups.setdefault(f.group, Group(f))
        group.count += 1
        group.classes[f.signature] = group.classes.get(f.signature, 0) + 1
    result.timeline.append((result.seconds, result.executions))
    if len(result.findings) >= max_findings:
        result.stopped = f"{max_findings} findings"
    if interrupted:
        result.stopped = f"interrupted ({interrupted}) after {result.seconds:.0f} s"
    # The worker folder (statuses, logs, MPS pipes, a corpus nobody asked for)
    # stays only where a worker died: the findings' texts name its logs.
    result.worker_folder = run_dir if result.restarts else None
    if not result.restarts:
        shutil.rmtree(run_dir, ignore_errors=True)
    if progress:
        print(result.summary(), file=sys.stderr)
    return result


def _progress(run_dir, workers, seconds, finished, dead):
    """One line for all workers: their status files and the rounds that ended."""
    executions, bins, found = _totals(run_dir, workers, finished, dead)
    waiting = []
    for i in range(workers):
        try:
            w = json.loads((run_dir / f"w{i}.status.json").read_text()).get("waiting")
        except (OSError, ValueError):
            continue
        if w:
            waiting.append(f"w{i} {w}")
    print(f"[{seconds:6.0f}s] {executions} execs, {executions / max(seconds, 1e-9):.0f}/s, {len(bins)} bins, "
          f"{found} findings ({workers} workers)" + (f"; {len(waiting)} waiting for the device: " +
                                                     "; ".join(waiting[:3]) if waiting else ""), file=sys.stderr)


def _totals(run_dir, workers, finished, dead):
    """(executions, bins, findings) of all workers so far."""
    executions, bins, found = sum(r["executions"] for r in finished), set(), dead
    for r in finished:
        bins |= set(r["bins"])
        found += len(r["findings"])
    for i in range(workers):
        try:
            s = json.loads((run_dir / f"w{i}.status.json").read_text())
        except (OSError, ValueError):
            continue
        executions += s["executions"]
        bins |= set(s["bins"])
        found += s["findings"]
    return executions, bins, found
