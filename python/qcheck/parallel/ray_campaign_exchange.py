"""The C++ campaign's exchange on a Ray cluster, both ends (ray_campaign.py
drives it): a Worker actor per campaign worker (supervise.py over one
libFuzzer worker in a node-local folder; each exchange hands over what is
new there) and the driver's Mirror (the work folder the campaign's report
reads, filled from the exchanges; the corpus kept once per target, by the
SHA-1 of its bytes, and handed to the target's other workers)."""

import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

if __package__:  # qcheck.parallel.ray_campaign_exchange
    from .ray_nodes import _die_with_parent, _new_log_bytes, _normal_priority
else:  # beside ray_campaign.py, run as a script without the package
    from ray_nodes import _die_with_parent, _new_log_bytes, _normal_priority


def sha1(data):
    return hashlib.sha1(data).hexdigest()


class Worker:
    """One campaign worker: supervise.py over one libFuzzer worker in a
    node-local folder, and the files it hands to the driver."""

    def __init__(self, index, args, env, driver_work, shipped, where, start):
        import ray
        # The exchange runs in this actor's process, at Ray's worker niceness (15) unless set back: beside
        # fuzzers set back to 0 (one per CPU) it starved, and a one-minute run on two cores made three
        # exchanges, one of them 30 s late (the corpus reached the other workers at the end or never).
        _normal_priority()
        node_folder, own_mps, _, self.host = where  # (its NodeAgent's where(): no handle, no reference to hold)
        home = Path(node_folder) / f"w{index}"
        home.mkdir(parents=True, exist_ok=True)
        self.incarnation = len(list(home.glob("k*")))
        self.home, self.local = home, home / f"k{self.incarnation}"
        for sub in ("run", "logs", "status", "corpus", "artifacts"):
            (self.local / sub).mkdir(parents=True, exist_ok=True)
        self.index, self.corpus = index, self.local / "corpus"
        self.known, self.sent_artifacts, self.offsets = set(), set(), {}

        def local_path(text):
            text = text.replace(driver_work.rstrip("/") + "/", str(self.local) + "/")
            for driver_path, name in sorted(shipped.items(), key=lambda item: -len(item[0])):
                text = text.replace(driver_path, str(Path(node_folder) / name))
            return text
        # Every target writes into one corpus folder and one artifacts folder of its own here.
        lines = [local_path(a) for a in args]
        lines = [a if not a.startswith("-artifact_prefix=") else
                 f"-artifact_prefix={self.local}/artifacts/{Path(a.split('=', 1)[1]).name}" for a in lines]
        lines[-1] = str(self.corpus)
        (self.local / "run" / f"w{index}.args").write_text("\n".join(lines) + "\n")
        env = [local_path(e) for e in env]
        gpus = [str(g) for g in ray.get_gpu_ids()]
        if gpus and gpus[0] in own_mps:  # a client of the node's daemon: no CUDA_VISIBLE_DEVICES
            pipe = Path(node_folder) / "mps" / f"gpu{gpus[0]}"
            env += ["-CUDA_VISIBLE_DEVICES", f"CUDA_MPS_PIPE_DIRECTORY={pipe}/pipe",
                    f"CUDA_MPS_LOG_DIRECTORY={pipe}/log"]
        elif gpus:
            env += [f"CUDA_VISIBLE_DEVICES={','.join(gpus)}"]
        if gpus:  # one GPU memory ledger for the node's workers (fuzz/admission/gpu_ledger.h)
            env += [f"QCHECK_GPU_LEDGER={Path(node_folder) / 'gpu-ledger'}"]
        (self.local / "run" / f"w{index}.env").write_text("\n".join(env) + "\n")
        deadline, seed0, max_findings = start
        with open(self.local / "logs" / "supervisor.log", "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, str(Path(node_folder) / "bin" / "supervise.py"), "libfuzzer", str(self.local / "run"),
                 str(deadline), str(seed0), str(max_findings), "1", str(index)],
                stdout=log, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)

    def _put(self, data):
        name = sha1(data)
        self.known.add(name)
        path = self.corpus / name
        if not path.exists():
            tmp = self.corpus.parent / f".{name}.tmp"  # libFuzzer never reads half a file
            tmp.write_bytes(data)
            tmp.rename(path)

    def exchange(self, entries, drop=(), count=False):
        """Takes the driver's new corpus entries (and inputs to drop), hands
        over what is new here: a dict of corpus [bytes], artifacts [(name,
        bytes)], status {name: text}, logs {name: bytes}, restarts (text),
        running, incarnation, host, pid, corpus_size (with `count`)."""
        for data in entries:
            self._put(data)
        for name in drop:
            self.known.add(name)
            (self.corpus / name).unlink(missing_ok=True)
        corpus = []
        for path in self.corpus.iterdir():
            if path.name not in self.known:
                try:
                    data = path.read_bytes()
                except OSError:
                    continue
                if sha1(data) == path.name:  # (else libFuzzer is still writing it: next time)
                    self.known.add(path.name)
                    corpus.append(data)
        artifacts = []
        for path in sorted(self.home.glob("k*/artifacts/*")):  # earlier incarnations' too: the driver keeps one
            if path.name not in self.sent_artifacts:
                self.sent_artifacts.add(path.name)
                artifacts.append((path.name, path.read_bytes()))
        status = {p.name: p.read_text(errors="replace") for p in (self.local / "status").iterdir()}
        logs = _new_log_bytes(self.local / "logs", self.index, self.offsets)
        restarts_file = self.local / "run" / f"w{self.index}.restarts"
        at = self.offsets.get("restarts", 0)
        restarts = restarts_file.read_bytes()[at:] if restarts_file.exists() else b""
        self.offsets["restarts"] = at + len(restarts)
        return dict(corpus=corpus, artifacts=artifacts, status=status, logs=logs, restarts=restarts.decode(),
                    running=self.process.poll() is None, incarnation=self.incarnation, host=self.host,
                    pid=os.getpid(), corpus_size=sum(1 for _ in self.corpus.iterdir()) if count else None)

    def stop(self):
        """Every round ended (the stop file, SIGTERM; supervise.py kills what is left after 10 s), then what is new."""
        (self.local / "run" / "stop").touch()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.exchange([], count=True)


class Mirror:
    """The work folder the campaign's report reads, filled from the workers'
    exchanges; the corpus kept once per target and handed to the others."""

    def __init__(self, work, workers):
        self.work, self.workers = Path(work), workers
        self.hashes, self.banned = {}, set()  # target -> {sha: bytes}; inputs that ended a worker
        self.drop = {w["index"]: [] for w in workers}
        self.incarnation = {}
        self.counts = {w["index"]: dict(published=0, received=0, corpus=0, incarnations=1, host=w["host"], pid=0)
                       for w in workers}
        for target in {w["target"] for w in workers}:
            known = self.hashes.setdefault(target, {})
            for path in (self.work / target / "corpus").iterdir():
                data = path.read_bytes()
                known[sha1(data)] = data
        # The corpus the campaign starts from goes with each worker's first exchange (libFuzzer's -reload).
        self.pending = {w["index"]: self.corpus(w["target"]) for w in workers}

    def corpus(self, target):
        """Every entry of the target's corpus (an input that ended a worker is not kept)."""
        return list(self.hashes[target].values())

    def note(self, index, line):
        with open(self.work / "run" / f"w{index}.restarts", "a") as f:
            f.write(line + "\n")

    def take(self, index, got, sent):
        """A worker's answer to an exchange that gave it `sent` entries."""
        w = self.workers[index]
        self.counts[index]["received"] += sent
        target, k = w["target"], got["incarnation"]
        if self.incarnation.get(index, 0) != k:
            self.note(index, f"actor restarted by Ray: incarnation {k}, pid {got['pid']} on {got['host']}")
            self.incarnation[index] = k
            self.pending[index] = self.corpus(target)  # a new incarnation gets the whole corpus again
            self.counts[index]["incarnations"] += 1
        suffix = f".k{k}" if k else ""  # an incarnation's rounds start from 1 again
        for name, text in got["status"].items():
            (self.work / "status" / (name + suffix)).write_text(text)
        for name, chunk in got["logs"].items():
            name = name[:-len(".log")] + suffix + ".log"
            with open(self.work / "logs" / name, "ab") as f:
                f.write(chunk)
        if got["restarts"]:
            with open(self.work / "run" / f"w{index}.restarts", "a") as f:
                f.write(got["restarts"])
        for name, data in got["artifacts"]:
            path = self.work / target / "artifacts" / name
            if not path.exists():
                path.write_bytes(data)
            bad = name.rsplit("-", 1)[-1]  # the input that ended it leaves every worker's corpus
            if bad not in self.banned:
                self.banned.add(bad)
                self.hashes[target].pop(bad, None)
                (self.work / target / "corpus" / bad).unlink(missing_ok=True)
                for other in self.workers:
                    if other["target"] == target:
                        self.drop[other["index"]].append(bad)
        known = self.hashes[target]
        for data in got["corpus"]:
            name = sha1(data)
            self.counts[index]["published"] += 1
            if name in known or name in self.banned:
                continue
            known[name] = data
            (self.work / target / "corpus" / name).write_bytes(data)
            for other in self.workers:
                if other["target"] == target and other["index"] != index:
                    self.pending[other["index"]].append(data)
        self.counts[index]["pid"] = got["pid"]
        if got["corpus_size"] is not None:
            self.counts[index]["corpus"] = got["corpus_size"]

    def outgoing(self, index):
        """What the worker is to get at its next exchange (taken: unsent() gives it back)."""
        entries, drop = self.pending[index], self.drop[index]
        self.pending[index], self.drop[index] = [], []
        return entries, drop

    def unsent(self, index, entries, drop):
        """An exchange that did not reach the worker: its entries and drops go with the next one."""
        self.pending[index] = entries + self.pending[index]
        self.drop[index] = drop + self.drop[index]

    def write_sync(self):
        lines = ["worker\thost\tincarnations\thanded_over\treceived\tcorpus_at_end\tpid"]
        for i, c in sorted(self.counts.items()):
            lines.append(f"w{i}\t{c['host']}\t{c['incarnations']}\t{c['published']}\t{c['received']}\t{c['corpus']}"
                         f"\t{c['pid']}")
        (self.work / "run" / "ray-sync.tsv").write_text("\n".join(lines) + "\n")
