"""MPS daemons of qcheck's own: many fuzzing processes on one GPU.

Without MPS, processes on one GPU time-slice it and reach about one
process's rate in all; under an MPS daemon 15 processes ran 9x one
(../shared/GPU.md). The rules, one implementation for the C++ campaign
(tools/fuzz_campaign/campaign_gpus.sh runs this file as a script) and the
Python door's workers (qcheck.parallel.workers):

  - one daemon per GPU, started with private pipe and log folders under the
    run's own folder (FOLDER/gpuN/pipe, FOLDER/gpuN/log), so it serves only
    the run's processes and never meets another user's daemon;
  - none where MPS is off (mode "off"), where nvidia-cuda-mps-control is
    missing, or where a daemon already runs on this host: the workers then
    use the GPU as the environment finds it, and the note says so;
  - clients of a daemon get CUDA_MPS_PIPE_DIRECTORY and
    CUDA_MPS_LOG_DIRECTORY and must not set CUDA_VISIBLE_DEVICES (the
    daemon's own decides);
  - every daemon started is stopped at the end ("quit" on its pipe).

As a script (no import of the qcheck package: it runs before any library
is found):
  python3 mps.py start FOLDER MODE GPU...   prints shell assignments:
      own_mps=(GPUs with a daemon of ours) existing_mps=0|1 mps_note='...'
  python3 mps.py stop FOLDER GPU...
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

CONTROL = "nvidia-cuda-mps-control"
CONTROL_FOLDERS = ("/usr/local/nvidia/bin", "/usr/bin", "/usr/local/cuda/bin")


def control_binary():
    """The path of nvidia-cuda-mps-control, or None."""
    found = shutil.which(CONTROL)
    if found:
        return found
    for folder in CONTROL_FOLDERS:
        path = Path(folder) / CONTROL
        if os.access(path, os.X_OK):
            return str(path)
    return None


def running_daemon():
    """The pid of an MPS control daemon or server already running here, or None."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:  # (not /proc/PID/comm, nor pgrep -x: both cut the name to 15 characters)
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if os.path.basename(argv0) in (b"nvidia-cuda-mps-control", b"nvidia-cuda-mps-server"):
            return int(entry.name)
    return None


def client_environment(folder, gpu):
    """The variables a client of our daemon for `gpu` sets (and CUDA_VISIBLE_DEVICES it unsets)."""
    d = Path(folder) / f"gpu{gpu}"
    return {"CUDA_MPS_PIPE_DIRECTORY": str(d / "pipe"), "CUDA_MPS_LOG_DIRECTORY": str(d / "log")}


class Daemons:
    """start(): the daemons of one run. own: GPUs with a daemon of ours;
    existing: a daemon of someone else's serves this host; note: one line
    for the run's log."""

    def __init__(self, folder, gpus, mode="auto", control=None, running=running_daemon):
        self.folder, self.gpus, self.own, self.existing = Path(folder), [str(g) for g in gpus], [], False
        self.control = control_binary() if control is None else (control or None)  # "": none (tests)
        if not self.gpus:
            self.note = "no GPU"
        elif mode == "off":
            self.note = "MPS off: the workers time-slice the GPU"
        elif self.control is None:
            self.note = (f"MPS is not installed (no {CONTROL}): the workers time-slice the GPU, about one "
                         "process's rate in all")
        elif running() is not None:
            self.existing = True
            self.note = (f"an MPS daemon already runs here (pid {running()}): the workers use it as the "
                         "environment finds it, none started")
        else:
            for g in self.gpus:
                env = dict(os.environ, CUDA_VISIBLE_DEVICES=g, **client_environment(self.folder, g))
                for key in ("CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"):
                    Path(env[key]).mkdir(parents=True, exist_ok=True)
                log = self.folder / f"gpu{g}" / "start.log"
                with open(log, "wb") as out:
                    started = subprocess.run([self.control, "-d"], env=env, stdout=out, stderr=subprocess.STDOUT)
                if started.returncode == 0:
                    self.own.append(g)
                else:
                    print(f"MPS for GPU {g} did not start ({log.read_text(errors='replace')[:200]}): its workers "
                          "time-slice it", file=sys.stderr)
            self.note = (f"MPS daemons of the run's own on GPU {' '.join(self.own) or 'none'} "
                         f"(pipes under {self.folder})")

    def environment(self, gpu):
        """Changes to a worker's environment for `gpu`: (set, unset); none
        without a daemon of ours (the worker uses the GPU as it finds it)."""
        if str(gpu) in self.own:
            return client_environment(self.folder, gpu), ["CUDA_VISIBLE_DEVICES"]
        return {}, []

    def stop(self):
        stop(self.folder, self.own, self.control)
        self.own = []


def stop(folder, gpus, control=None):
    control = control or control_binary()
    for g in gpus:
        env = dict(os.environ, **client_environment(folder, g))
        subprocess.run([control], input=b"quit\n", env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)


def main(argv):
    if len(argv) >= 3 and argv[0] == "start":
        d = Daemons(argv[1], argv[3:], argv[2])
        print(f"own_mps=({' '.join(d.own)}) existing_mps={int(d.existing)} mps_note={shlex.quote(d.note)}")
        return 0
    if len(argv) >= 2 and argv[0] == "stop":
        stop(argv[1], argv[2:])
        return 0
    print("usage: mps.py start FOLDER auto|off GPU... | mps.py stop FOLDER GPU...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
