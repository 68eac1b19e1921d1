"""Fuzzing workers kept running until a deadline: one implementation of the
restart rules for the C++ campaign (tools/fuzz_campaign/run_campaign.sh runs
this file as a script over its libFuzzer workers) and the Python door's
workers (qcheck.parallel.workers uses Supervisor).

The rules:
  - a worker's process that ends is classified by the caller (`ended`): its
    time was up or the run is stopping (the worker is done), or it stopped
    early with a reason; a reason says whether the worker left its failing
    input behind (an artifact, a saved case) and whether it counts toward
    the worker's findings cap (a CUDA error does not: under MPS every client
    of the GPU gets an other worker's fault, and nothing says whose it was);
  - it is restarted, in its next round (the caller's command changes the
    seed with the round), while time is left (2 s before the deadline) and
    the stop file is absent;
  - a worker that counted `max_findings` findings is stopped (a broken
    kernel fails nearly every input and each finding costs a restart);
  - a worker that ended without an artifact within 5 s of its start 30
    times in a row is given up; after such an end it waits 1 s before its
    restart, 5 s from the fifth in a row (an MPS server recovering from an
    other client's fault refuses new clients for a while);
  - every restart is a line in FOLDER/wI.restarts (the campaign's summary
    and tests read them) and in `restarts`;
  - stop(): the stop file, SIGTERM to every worker, SIGKILL after a grace.

As a script (no import of the qcheck package, as mps.py):
  python3 supervise.py libfuzzer RUN_FOLDER DEADLINE_EPOCH SEED0 MAX_FINDINGS N [FIRST]
runs N libFuzzer workers, FIRST (0) to FIRST + N - 1 (a Ray campaign's
worker runs one: ray_campaign.py). Worker I's command is RUN_FOLDER/wI.args (one
argument per line; {seed} becomes SEED0 + 1000 * round + I, {round} the
round, {seconds} the seconds left), its environment RUN_FOLDER/wI.env
(NAME=VALUE to set, -NAME to unset; {round} as above) and its log
RUN_FOLDER/../logs/wI.rROUND.log. A round that exits 0 had its time up; one
that left a new file under its -artifact_prefix is a finding (not counted
when its log has a CUDA runtime error), whose input leaves the corpus (the
last argument: libFuzzer names both by the input's SHA-1, so a restart does
not load it and end again). Ends on SIGTERM (stopping every worker) or when
every worker is done.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

QUICK_SECONDS = 5
QUICK_FAILURES = 30
PAUSES = (1, 5)  # seconds before a restart after a quick failure: the first four in a row, then
TIME_LEFT_SECONDS = 2
STOP_FILE = "stop"  # in the run's folder: every worker ends its round and the supervisor restarts none


class Ended:
    """Why a worker's round ended early: `reason` (a line), `artifact`
    (its failing input was kept) and `counted` (toward its findings cap)."""

    def __init__(self, reason, artifact=False, counted=False):
        self.reason, self.artifact, self.counted = reason, artifact, counted


class Slot:
    """One worker: its index, its round (from 1), its process."""

    def __init__(self, index):
        self.index, self.round, self.process, self.started = index, 0, None, 0.0
        self.quick_failures = self.counted = 0
        self.resume_at = None  # a restart waiting for its pause
        self.done = False


class Supervisor:
    """`count`: the workers, 0 to count - 1, or a list of their indices.
    `start(slot)` launches the slot's round `slot.round` and returns its
    Popen; `ended(slot, code, ran_seconds)` returns None (the worker is
    done) or an Ended. Call poll() until it returns False (every worker
    done), then stop()."""

    def __init__(self, folder, count, deadline, start, ended, max_findings=0, cap_name="max_findings"):
        self.folder, self.deadline, self._start, self._ended = Path(folder), deadline, start, ended
        self.max_findings, self.cap_name = max_findings, cap_name
        self.stop_file = self.folder / STOP_FILE
        self.slots = [Slot(i) for i in (range(count) if isinstance(count, int) else count)]
        self.restarts = []  # (index, line)
        for slot in self.slots:
            self._launch(slot)

    def _launch(self, slot):
        slot.round += 1
        slot.resume_at = None
        slot.started = time.monotonic()
        slot.process = self._start(slot)

    def _note(self, slot, line):
        self.restarts.append((slot.index, line))
        with open(self.folder / f"w{slot.index}.restarts", "a") as f:
            f.write(line + "\n")

    def stopping(self):
        return self.stop_file.exists()

    def poll(self):
        """One look at every worker: restarts what ended early. False once every worker is done."""
        now = time.monotonic()
        for slot in self.slots:
            if slot.done:
                continue
            if slot.resume_at is not None:
                if self.stopping() or now >= self.deadline - TIME_LEFT_SECONDS:
                    slot.done = True
                elif now >= slot.resume_at:
                    self._launch(slot)
                continue
            code = slot.process.poll()
            if code is None:
                continue
            ran = now - slot.started
            why = self._ended(slot, code, ran)
            if why is None or self.stopping() or time.monotonic() >= self.deadline - TIME_LEFT_SECONDS:
                slot.done = True
                continue
            if why.artifact:
                slot.quick_failures = 0
                slot.counted += why.counted
                self._note(slot, why.reason)
                if self.max_findings and slot.counted >= self.max_findings:
                    self._note(slot, f"stopped after {slot.counted} findings ({self.cap_name} = {self.max_findings})")
                    slot.done = True
                    continue
                self._launch(slot)
                continue
            slot.quick_failures = slot.quick_failures + 1 if ran < QUICK_SECONDS else 0
            self._note(slot, why.reason)
            if slot.quick_failures >= QUICK_FAILURES:
                self._note(slot, f"gave up after {QUICK_FAILURES} quick failures")
                slot.done = True
                continue
            slot.resume_at = now + (0 if ran >= QUICK_SECONDS else PAUSES[slot.quick_failures >= 5])
        return any(not slot.done for slot in self.slots)

    def stop(self, grace, signal_first=True):
        """The stop file and SIGTERM to every worker still running (or, without
        signal_first, the stop file alone: a worker that watches it ends its
        round and reports), SIGKILL to those left after `grace` seconds."""
        self.stop_file.touch()
        running = [s.process for s in self.slots if s.process is not None and s.process.poll() is None]
        for p in running if signal_first else ():
            p.send_signal(signal.SIGTERM)
        end = time.monotonic() + grace
        for p in running:
            try:
                p.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for slot in self.slots:
            slot.done = True


# --- the campaign's libFuzzer workers (the script) -------------------------------------------


def _fill(text, values):
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text


def _libfuzzer_supervisor(run, deadline_epoch, seed0, max_findings, indices):
    deadline = time.monotonic() + (deadline_epoch - time.time())
    logs = run.parent / "logs"
    specs = {}
    for i in indices:
        args = (run / f"w{i}.args").read_text().splitlines()
        env = (run / f"w{i}.env").read_text().splitlines() if (run / f"w{i}.env").exists() else []
        prefix = next(a.split("=", 1)[1] for a in args if a.startswith("-artifact_prefix="))
        specs[i] = (args, env, Path(prefix), Path(args[-1]))

    def artifacts(i):
        prefix = specs[i][2]
        return {p.name for p in prefix.parent.glob(prefix.name + "*")}

    before = {}

    def start(slot):
        i = slot.index
        args, env_lines, _, _ = specs[i]
        fill = {"seed": str(seed0 + 1000 * slot.round + i), "round": str(slot.round),
                "seconds": str(max(1, int(deadline - time.monotonic())))}
        env = dict(os.environ)
        for line in env_lines:
            if line.startswith("-"):
                env.pop(line[1:], None)
            elif "=" in line:
                name, value = line.split("=", 1)
                env[name] = _fill(value, fill)
        argv = [_fill(a, fill) for a in args]
        before[i] = artifacts(i)
        with open(logs / f"w{i}.r{slot.round}.log", "wb") as log:
            return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)

    def ended(slot, code, ran):
        if code == 0:
            return None  # its time is up
        i = slot.index
        new = artifacts(i) - before[i]
        if not new:
            return Ended(f"no artifact exit {code} after {ran:.0f}s (log {logs}/w{i}.r{slot.round}.log)")
        for name in new:  # the input that ended it leaves the shared corpus
            (specs[i][3] / name.rsplit("-", 1)[-1]).unlink(missing_ok=True)
        log = (logs / f"w{i}.r{slot.round}.log").read_text(errors="replace")
        cuda = any(line.startswith("RUNTIME ERROR: ") and "cuda" in line for line in log.splitlines())
        if cuda:
            return Ended(f"finding exit {code} (a CUDA runtime error)", artifact=True)
        return Ended(f"finding exit {code}", artifact=True, counted=True)

    terminated = []
    signal.signal(signal.SIGTERM, lambda *_: terminated.append(1))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the campaign's to handle (the workers inherit this)
    supervisor = Supervisor(run, list(indices), deadline, start, ended, max_findings, "QCHECK_FUZZ_MAX_FINDINGS")
    while not terminated and supervisor.poll():
        time.sleep(0.5)
    supervisor.stop(grace=10)
    return 0


def main(argv):
    if len(argv) not in (7, 8) or argv[1] != "libfuzzer":
        print("usage: supervise.py libfuzzer RUN_FOLDER DEADLINE_EPOCH SEED0 MAX_FINDINGS N [FIRST]", file=sys.stderr)
        return 2
    first = int(argv[7]) if len(argv) == 8 else 0
    return _libfuzzer_supervisor(Path(argv[2]), float(argv[3]), int(argv[4]), int(argv[5]),
                                 range(first, first + int(argv[6])))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
