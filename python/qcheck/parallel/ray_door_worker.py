"""The Python door's worker actor on a Ray cluster (qcheck.parallel.ray_workers
drives it): one worker of the run, its rounds (python -m qcheck fuzz ... as
qcheck.parallel.workers writes them) in a node-local folder, and the files
it hands to the driver at each exchange. Its code travels by value."""

import os
import subprocess
import sys
from pathlib import Path

from .ray_nodes import _die_with_parent, _new_log_bytes, _normal_priority


class DoorWorker:
    """One worker of the run: its rounds (python -m qcheck fuzz ... as
    qcheck.parallel.workers writes them) in a node-local folder, and the files it
    hands to the driver."""

    def __init__(self, index, where, folders, shipped, passed_on):
        import ray
        _normal_priority()  # the exchange at its rounds' priority, not below them (ray_campaign_exchange.Worker)
        node_folder, own_mps, _, self.host = where  # (its NodeAgent's where(): no handle, no reference to hold)
        node = Path(node_folder)
        home = node / f"w{index}"
        home.mkdir(parents=True, exist_ok=True)
        self.incarnation = len(list(home.glob("k*")))
        self.local = home / f"k{self.incarnation}"
        for sub in ("run", "corpus", "findings"):
            (self.local / sub).mkdir(parents=True, exist_ok=True)
        self.index, self.run = index, self.local / "run"
        # The case the last incarnation's worker was running when the actor died (its folder is still here):
        # the driver saves it as the one-host triage does, even where no exchange saw it.
        previous = home / f"k{self.incarnation - 1}" / "run" / f"w{index}.current.json"
        self.orphan = previous.read_text() if self.incarnation and previous.exists() else None
        # (driver path, path here), longest first (a corpus inside the run's folder)
        pairs = {folders[sub]: str(self.local / sub) for sub in ("run", "corpus", "findings")}
        pairs.update({path: str(node / rel) for rel, path in shipped.items() if not rel.startswith("bin/")})
        self.pairs = sorted(pairs.items(), key=lambda p: -len(p[0]))
        self.known, self.sent, self.offsets = set(), {}, {}
        env = dict(os.environ, **passed_on)
        env["PYTHONPATH"] = os.pathsep.join([str(node / "py"), str(node / "adapter")] +
                                            [p for p in [os.environ.get("PYTHONPATH")] if p])
        env["QCHECK_LIBRARY"] = str(node / "lib" / "libqcheck.so")
        env.setdefault("TRITON_CACHE_DIR", str(Path.home() / ".triton" / "cache"))  # one per node
        env.setdefault("QCHECK_GPU_LEDGER", str(node / "gpu-ledger"))  # the node's workers' one (qcheck.parallel.gpu_ledger)
        gpus = [str(g) for g in ray.get_gpu_ids()]
        if gpus and gpus[0] in own_mps:  # a client of the node's daemon: no CUDA_VISIBLE_DEVICES
            env.pop("CUDA_VISIBLE_DEVICES", None)
            pipe = node / "mps" / f"gpu{gpus[0]}"
            env.update(CUDA_MPS_PIPE_DIRECTORY=f"{pipe}/pipe", CUDA_MPS_LOG_DIRECTORY=f"{pipe}/log")
        elif gpus:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
        self.env, self.process, self.round = env, None, None

    def _here(self, text):
        for there, here in self.pairs:
            text = text.replace(there, here)
        return text

    def _there(self, text):
        for there, here in sorted(self.pairs, key=lambda p: -len(p[1])):
            text = text.replace(here, there)
        return text

    def _put(self, name, data):
        self.known.add(name)
        path = self.local / "corpus" / name
        if not path.exists():
            partial = path.with_name(name + ".partial")  # (a worker skips these, as Case.save's own)
            partial.write_bytes(data)
            partial.replace(path)

    def launch(self, round_, args):
        """Round `round_` of the worker: `args` as qcheck.parallel.workers wrote them for this host."""
        for kind in ("status", "result", "current"):
            (self.run / f"w{self.index}.{kind}.json").unlink(missing_ok=True)
        argv = [sys.executable] + [self._here(a) for a in args[1:]]
        with open(self.run / f"w{self.index}.r{round_}.log", "wb") as log:
            self.process = subprocess.Popen(argv, env=self.env, cwd=self.local, stdout=log, stderr=subprocess.STDOUT,
                                            preexec_fn=_die_with_parent)
        self.round = round_
        return self.process.pid

    def signal(self, number):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(number)

    def exchange(self, entries, stop):
        """Takes the driver's new corpus entries ([(name, bytes)]) and its
        stop, hands over what is new here: a dict of round and code (the
        round's exit code once it ended), files {status, current, result:
        text or None}, corpus and findings [(name, bytes)], logs {name:
        bytes}, incarnation, host, pid, corpus_size (the entries here) and
        orphan (the case in flight when the last incarnation died, or None)."""
        for name, data in entries:
            self._put(name, data)
        if stop:
            (self.run / "stop").touch()
        code = None if self.process is None else self.process.poll()  # (first: the files below are its last)

        def text(kind):
            try:
                return self._there((self.run / f"w{self.index}.{kind}.json").read_text())
            except OSError:
                return None
        files = {kind: text(kind) for kind in ("status", "current")}
        if code is not None:
            files["result"] = text("result")
        corpus = []
        for path in (self.local / "corpus").glob("*.json"):
            if path.name not in self.known:
                self.known.add(path.name)
                corpus.append((path.name, path.read_bytes()))
        findings = []
        for path in (self.local / "findings").iterdir():
            if path.suffix not in (".json", ".txt"):  # (a .partial is being written)
                continue
            try:
                stat = path.stat()
                mark = (stat.st_size, stat.st_mtime_ns)
                data = path.read_bytes() if self.sent.get(path.name) != mark else None
            except OSError:
                continue
            if data is not None:
                self.sent[path.name] = mark
                findings.append((path.name, self._there(data.decode()).encode() if path.suffix == ".txt" else data))
        logs = _new_log_bytes(self.run, self.index, self.offsets)
        return dict(round=self.round, code=code, files=files, corpus=corpus, findings=findings, logs=logs,
                    incarnation=self.incarnation, host=self.host, pid=os.getpid(), corpus_size=len(self.known),
                    orphan=self.orphan)
