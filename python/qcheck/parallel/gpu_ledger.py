"""GPU memory admission across processes: the ledger every worker of a run
(the Python door's, the C++ campaign's: fuzz/admission/gpu_ledger.cc keeps
the same protocol) consults before a case touches the device.

Fifteen workers that each start a limit case of ~4.5 GB (plus what a
wrapper allocates) on one GPU at once run it out of memory, and the
kernel's out-of-memory error then reads as a bug of the kernel. The ledger
lets a case in only when its memory fits.

Where: a folder every worker of the run sees (QCHECK_GPU_LEDGER=FOLDER; the
Python door's workers get RUN/gpu-ledger, the campaign WORK/gpu-ledger, a
Ray worker its node's folder). Per device (KEY: "pci-DOMAIN-BUS-DEVICE" of
a GPU, "host" on the numpy path) three files:

  KEY.turnstile, KEY.gate   flock(2) only. Every run holds the gate shared
                            while it runs (and passes the turnstile, shared,
                            to get there); a run alone (the retry of an
                            out-of-memory error) takes the turnstile, then
                            the gate, exclusively: it waits for the runs in
                            flight to end and lets no new one start. The
                            kernel drops a dead process's locks: nothing
                            stale is left.
  KEY.ledger                the reservations that matter (a reservation of
                            RECORD_MIN_BYTES or more), one line each, the
                            file locked (flock, exclusive) while it is read
                            and rewritten:
                              PID START BYTES KIND STATE SINCE
                            START: the process's start time (/proc/PID/stat,
                            field 22), so a reused pid is not taken for the
                            dead one; KIND shared or large; STATE waiting or
                            running; SINCE the epoch seconds of the request.
                            Records of processes that are gone are dropped
                            by whoever rewrites the file.

Admission of a recorded reservation of B bytes (each poll, under the lock):
  - others = the live records of other processes; free = the device's free
    bytes now (None: unknown, e.g. the numpy path: every size fits);
    headroom = (workers - 1) * RECORD_MIN_BYTES, the most the others' runs
    too small to be recorded can add;
  - a large one (B > total / (2 * workers), a limit case: limit cases take
    turns) runs when no other large one runs, it is the first large one
    waiting (by SINCE), and B <= free - the others' bytes - headroom;
  - a shared one runs when B <= free - the others' running bytes - the first
    waiting large one's bytes - headroom (a waiting limit case keeps its
    place: smaller ones cannot eat the memory it waits for);
  - either runs when no other recorded run is running at all (waiting could
    not free more), or when it has waited max_wait seconds (it says so).
The free bytes already exclude what the others have allocated of their own
reservations: counting both errs on the safe side, by the others' margins.

QCHECK_GPU_LEDGER_WORKERS: the processes that share one device (the large
threshold); QCHECK_GPU_LEDGER_WAIT_SECONDS: the bound on one wait (default
300); QCHECK_FAKE_DEVICE_FREE_BYTES: a test hook, the device's free (and
total) bytes as a number, in place of asking the device.
"""

import errno
import fcntl
import os
import time
from contextlib import contextmanager
from pathlib import Path

ENV = "QCHECK_GPU_LEDGER"
WORKERS_ENV = "QCHECK_GPU_LEDGER_WORKERS"
WAIT_ENV = "QCHECK_GPU_LEDGER_WAIT_SECONDS"
FAKE_FREE_ENV = "QCHECK_FAKE_DEVICE_FREE_BYTES"  # a test hook: the device's free and total bytes

# A reservation below this is not written in the ledger (it only passes the
# gate): every worker's allocator holds about that much cached anyway, and
# recording each of thousands of small cases per second would cost more than
# it guards. The others' unrecorded runs are covered by the headroom.
RECORD_MIN_BYTES = 512 << 20
MAX_WAIT_SECONDS = 300.0
STATUS_EVERY_SECONDS = 1.0  # how often a waiting request reports what it waits for
POLL_SECONDS = (0.001, 0.05)  # the first and the longest pause between two polls
HEADER = "# pid start bytes kind state since\n"


def process_start(pid):
    """The start time of `pid` (clock ticks since boot, /proc/PID/stat's
    field 22), 0 where /proc does not say; None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[19])  # (field 3 is the first after the command's parenthesis)
    except FileNotFoundError:
        return None
    except (OSError, IndexError, ValueError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        pass
    return 0


def alive(pid, start):
    now = process_start(pid)
    return now is not None and (start == 0 or now == 0 or now == start)


class Abandoned(Exception):
    """A wait given up (the Ledger's give_up() said so): nothing is held."""


class Record:
    """One line of the ledger."""

    def __init__(self, pid, start, nbytes, kind, state, since):
        self.pid, self.start, self.bytes, self.kind, self.state, self.since = pid, start, nbytes, kind, state, since

    def line(self):
        return f"{self.pid} {self.start} {self.bytes} {self.kind} {self.state} {self.since:.6f}\n"

    @staticmethod
    def parse(line):
        """The record of one line, or None for a comment or a line that is not one."""
        parts = line.split()
        if len(parts) != 6 or line.startswith("#") or parts[3] not in ("shared", "large") or \
                parts[4] not in ("waiting", "running"):
            return None
        try:
            return Record(int(parts[0]), int(parts[1]), int(parts[2]), parts[3], parts[4], float(parts[5]))
        except ValueError:
            return None


def read_records(text):
    return [r for r in (Record.parse(line) for line in text.splitlines()) if r is not None]


def admitted(own, others, free, total, workers):
    """Whether the request `own` (a Record) may run beside `others` (the
    live records of other processes), `free` and `total` the device's bytes
    (None: unknown). The rules of the module's text, as a pure function."""
    if not any(r.state == "running" for r in others):
        return True
    headroom = max(0, workers - 1) * RECORD_MIN_BYTES
    if own.kind == "large":
        if any(r.kind == "large" and r.state == "running" for r in others):
            return False
        if any(r.kind == "large" and r.state == "waiting" and (r.since, r.pid) < (own.since, own.pid) for r in others):
            return False
        held = sum(r.bytes for r in others)
    else:
        waiting = sorted((r for r in others if r.kind == "large" and r.state == "waiting"), key=lambda r: (r.since, r.pid))
        held = sum(r.bytes for r in others if r.state == "running") + (waiting[0].bytes if waiting else 0)
    return free is None or own.bytes <= free - held - headroom


def device_key(device):
    """The ledger's name of `device`: "host" for numpy arrays (device None),
    else "pci-DOMAIN-BUS-DEVICE" of the CUDA device (the name a process under
    another CUDA_VISIBLE_DEVICES or an MPS daemon finds too; the C++ side
    builds the same from cudaDeviceProp), "cudaN" where torch does not say."""
    if device is None or not str(device).startswith("cuda"):
        return "host"
    import torch
    d = torch.device(device)
    index = d.index if d.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    ids = [getattr(props, name, None) for name in ("pci_domain_id", "pci_bus_id", "pci_device_id")]
    if None in ids:
        return f"cuda{index}"
    return "pci-{:04x}-{:02x}-{:02x}".format(*ids)


def device_memory(device):
    """A function giving the device's (free, total) bytes: the test hook's
    number where QCHECK_FAKE_DEVICE_FREE_BYTES is set, torch's
    cudaMemGetInfo on a CUDA device, else (None, None): unknown."""
    fake = os.environ.get(FAKE_FREE_ENV)
    if fake:
        try:
            value = int(fake)
        except ValueError:
            raise ValueError(f"{FAKE_FREE_ENV}={fake!r}: a number of bytes is wanted") from None
        return lambda: (value, value)
    if device is None or not str(device).startswith("cuda"):
        return lambda: (None, None)
    import torch
    return lambda: torch.cuda.mem_get_info(torch.device(device))


def _positive(name, default, kind=int):
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{name}={text!r}: a positive number is wanted")
    return value


class Ledger:
    """The admission of one process to one device. admit(bytes) and alone()
    are context managers around a run; waiting is what a request waits for
    now (None when none waits), and on_wait(text), where set, is called
    about once a second while a request waits (the worker's status)."""

    def __init__(self, folder, key, memory=lambda: (None, None), workers=1, max_wait=MAX_WAIT_SECONDS):
        self.folder, self.key, self.memory = Path(folder), key, memory
        self.workers, self.max_wait = workers, max_wait
        self.folder.mkdir(parents=True, exist_ok=True)
        self._fds = {}
        self.pid, self.start = os.getpid(), process_start(os.getpid()) or 0
        self.waiting, self.on_wait = None, None
        self.give_up = None  # a function: True when the caller stops waiting (its time is up): Abandoned
        self.waited_seconds, self.overdue = 0.0, 0  # in all; waits that ran out of max_wait

    @classmethod
    def from_env(cls, device):
        """The ledger QCHECK_GPU_LEDGER names, for `device`; None where it is not set."""
        folder = os.environ.get(ENV)
        if not folder:
            return None
        return cls(folder, device_key(device), device_memory(device), _positive(WORKERS_ENV, 1),
                   _positive(WAIT_ENV, MAX_WAIT_SECONDS, float))

    def _fd(self, suffix):
        if suffix not in self._fds:
            self._fds[suffix] = os.open(self.folder / f"{self.key}.{suffix}", os.O_RDWR | os.O_CREAT, 0o666)
        return self._fds[suffix]

    def close(self):
        for fd in self._fds.values():
            os.close(fd)
        self._fds = {}

    def _wait(self, ready, what):
        """Polls ready() until it is true or max_wait has passed (then
        False); raises Abandoned where give_up() says to."""
        if ready():
            return True
        start = last = time.monotonic()
        pause = POLL_SECONDS[0]
        try:
            while True:
                time.sleep(pause)
                pause = min(POLL_SECONDS[1], pause * 2)
                if ready():
                    return True
                if self.give_up is not None and self.give_up():
                    raise Abandoned(what)
                now = time.monotonic()
                self.waiting = f"waiting {now - start:.0f} s for GPU memory: {what}"
                if self.on_wait is not None and now - last >= STATUS_EVERY_SECONDS:
                    self.on_wait(self.waiting)
                    last = now
                if now - start >= self.max_wait:
                    self.overdue += 1
                    return False
        finally:
            self.waited_seconds += time.monotonic() - start
            if self.waiting is not None:
                self.waiting = None
                if self.on_wait is not None:
                    self.on_wait(None)

    def _try_lock(self, suffix, mode):
        try:
            fcntl.flock(self._fd(suffix), mode | fcntl.LOCK_NB)
            return True
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                return False
            raise

    def _unlock(self, suffix):
        fcntl.flock(self._fd(suffix), fcntl.LOCK_UN)

    def _locks(self, mode):
        """A ready() for _wait: the turnstile, then the gate, both in `mode`
        (shared: the turnstile is let go once the gate is held)."""
        held = []

        def ready():
            if not held:
                if not self._try_lock("turnstile", mode):
                    return False
                held.append("turnstile")
            if not self._try_lock("gate", mode):
                return False
            if mode == fcntl.LOCK_SH:
                self._unlock("turnstile")
            return True
        return ready

    def _enter_gate(self):
        """Through the turnstile to the gate (both shared): waits while a run alone waits or runs."""
        try:
            if not self._wait(self._locks(fcntl.LOCK_SH), "another worker's out-of-memory retry runs alone"):
                self._unlock("turnstile")  # (waited max_wait: in anyway)
        except Abandoned:
            self._unlock("turnstile")
            raise

    def _edit(self, change):
        """Reads the records under the ledger's lock, drops those of dead
        processes, calls change(records) (which edits the list in place and
        returns a value) and writes the list back; returns the value."""
        fd = self._fd("ledger")
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            size = os.fstat(fd).st_size
            text = os.pread(fd, size, 0).decode(errors="replace") if size else ""
            records = [r for r in read_records(text) if r.pid == self.pid or alive(r.pid, r.start)]
            value = change(records)
            data = (HEADER + "".join(r.line() for r in records)).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, data, 0)
            return value
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _drop_own(self):
        def drop(records):
            records[:] = [r for r in records if r.pid != self.pid]
        self._edit(drop)

    def large(self, nbytes):
        """Whether a reservation of `nbytes` is a limit case here (they take turns)."""
        total = self.memory()[1]
        return total is not None and nbytes > total // (2 * self.workers)

    @contextmanager
    def admit(self, nbytes):
        """Around a run that may use `nbytes` of the device (the caller's
        margins included): waits for its turn, by the module's rules."""
        self._enter_gate()
        try:
            if nbytes >= RECORD_MIN_BYTES:
                own = Record(self.pid, self.start, int(nbytes), "large" if self.large(nbytes) else "shared",
                             "waiting", time.time())

                def poll(records):
                    records[:] = [r for r in records if r.pid != self.pid]
                    free, total = self.memory()
                    if admitted(own, records, free, total, self.workers):
                        own.state = "running"
                    records.append(own)
                    return own.state == "running"
                what = f"{nbytes / 1e9:.1f} GB" + (" (a limit case: limit cases take turns)" if own.kind == "large"
                                                    else "")
                try:
                    if not self._wait(lambda: self._edit(poll), what):
                        own.state = "running"  # (waited max_wait: it runs anyway, and the wait is counted)
                        self._edit(poll)
                except Abandoned:
                    self._drop_own()
                    raise
                try:
                    yield
                finally:
                    self._drop_own()
            else:
                yield
        finally:
            self._unlock("gate")

    @contextmanager
    def alone(self):
        """Around a run alone on the device: no other admitted run in flight,
        none let in until it ends."""
        try:
            self._wait(self._locks(fcntl.LOCK_EX), "to run alone (an out-of-memory retry): the runs in flight end first")
        except Abandoned:
            self._unlock("gate")
            self._unlock("turnstile")
            raise
        try:
            yield
        finally:
            self._unlock("gate")
            self._unlock("turnstile")
