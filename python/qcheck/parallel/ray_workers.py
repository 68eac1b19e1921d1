"""The Python door's workers on a Ray cluster: qcheck.fuzz(kernel, ray=ADDRESS)
and python -m qcheck fuzz TARGET --ray [ADDRESS].

qcheck.parallel.workers runs the run as on one host (the same worker command, the
restart rules of qcheck.parallel.supervise, the triage of a worker that dies, one
summary); only where a worker's process runs changes. RayProcesses starts
each round on a DoorWorker actor and gives qcheck.parallel.supervise a handle that
looks like a Popen (RemoteProcess):

  - The plan (plan(), no Ray: tested on its own): on a CUDA device, the
    nodes with a GPU, a worker per CPU but one on each (the one-host
    default), each an equal share of the node's GPUs under the node's MPS
    daemon; on numpy arrays, every node, a worker per CPU. workers=N puts N
    in all, spread over the nodes in turn. Worker 0, on the driver's node,
    runs the limit cases on a GPU.
  - Nothing but Ray between the hosts: the qcheck package, the library this
    process loaded (with the libraries beside it), the adapter's folder
    (unless it is installed: then it must be installed on every node, as
    the kernel's own package is), the known-bugs and domain files travel
    through the object store to a NodeAgent per node (qcheck.parallel.ray_nodes),
    which also runs the node's MPS daemons. A node needs Python with what
    the adapter imports (numpy; torch and Triton for a torch kernel), and
    keeps its own Triton cache (~/.triton/cache there).
  - Every half second the driver exchanges with each worker: the worker's
    new corpus entries and findings come here (kept once, by name: a case's
    digest) and go on to the other workers; its status, the case it is
    running and, when its round ended, its result and exit code are
    written into the run's folder, where qcheck.parallel.workers reads them as on
    one host. The driver's stop file goes out to every worker.
  - Faults: an actor that dies is restarted by Ray (its round ends as
    "killed by signal 9", the case it was running saved as a finding, as
    on one host; its new incarnation gets the whole corpus again). A worker
    whose actor does not answer for LOST_SECONDS is given up.
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import ray_door_worker, ray_nodes
from .ray_nodes import NodeAgent, _share, connect
from .targets import import_root

SYNC_WAIT = 0.2  # seconds a sync waits for the workers' answers (the rest are taken next time)
LOST_SECONDS = 120.0  # an actor that fails every exchange this long (its node is gone) is given up
KILL_WAIT = 30.0  # a killed round's exit code awaited this long, then taken as SIGKILL
MAX_SHIPPED = 256 << 20  # the adapter's folder and the libraries, in all
HERE = Path(__file__).resolve().parent


# --- the plan (no Ray: tested on its own) ------------------------------------------------


def plan(nodes, workers, on_cuda):
    """The workers' places for `nodes` ([(node_id, host, cpus, gpus)], the
    driver's first): a list of dicts with index, node, host, cpus and gpus
    (the worker's shares). `workers`: how many in all, None for one per
    CPU (but one, on a GPU node) of every node that can run them."""
    nodes = [n for n in nodes if n[2] >= 1 and (n[3] > 0 or not on_cuda)]
    room = {n[0]: max(1, int(n[2]) - 1) if on_cuda else int(n[2]) for n in nodes}
    order = []  # each node's first place, then each node's second, ...
    for k in range(max(room.values(), default=0)):
        order += [n[0] for n in nodes if k < room[n[0]]]
    count = {n[0]: 0 for n in nodes}
    for i in range(sum(room.values()) if workers is None else workers if order else 0):
        count[order[i % len(order)]] += 1  # past every node's room: round again
    places = []
    for node, host, _, gpus in nodes:
        for _ in range(count[node]):
            # (a worker is one process: at most one CPU and one GPU, less where more workers than room share them)
            places.append(dict(index=len(places), node=node, host=host, cpus=min(1, _share(room[node], count[node])),
                               gpus=min(1, _share(gpus, count[node])) if on_cuda else 0))
    return places


# --- what travels to the nodes -----------------------------------------------------------


def _installed(path):
    """Whether a module at `path` comes from an installed package (a node has its own)."""
    parts = Path(path).parts
    return "site-packages" in parts or "dist-packages" in parts or \
        any(Path(path).is_relative_to(p) for p in {sys.base_prefix, sys.prefix} if p != "/")


def _folder_files(folder, into):
    """{into/relative: path} for a folder's Python files and its packages (folders with an __init__.py)."""
    files = {}
    for path in folder.iterdir():
        if path.is_file() and path.suffix == ".py":
            files[f"{into}/{path.name}"] = str(path)
        elif path.is_dir() and (path / "__init__.py").is_file():
            for inner in path.rglob("*"):
                if inner.is_file() and "__pycache__" not in inner.parts:
                    files[f"{into}/{inner.relative_to(folder)}"] = str(inner)
    return files


def shipped_files(spec, root, extra):
    """{path in a node's folder: driver path} of everything a worker needs
    that a node may lack: the qcheck package (py/qcheck), the library this
    process loaded and the libraries beside it (lib/; a wheel's
    qcheck.libs/ too), mps.py for the NodeAgent (bin/), a plugin (lib/),
    the adapter's folder (adapter/: `root`, the folder its module is
    imported from, unless installed) and the known-bugs and domain files
    (files/)."""
    from ..model import _capi
    package = HERE.parent  # (every module of it, its sub-packages' too)
    files = {f"py/qcheck/{p.relative_to(package)}": str(p) for p in package.rglob("*.py")
             if "__pycache__" not in p.parts}
    files["bin/mps.py"] = str(HERE / "mps.py")
    library = Path(_capi.library_path).resolve()
    for path in library.parent.iterdir():  # (a bundle's lib/ or an installed package: libqcheck's RUNPATH $ORIGIN)
        if path.is_file() and ".so" in path.name:
            files[f"lib/{path.name}"] = str(path)
    files["lib/libqcheck.so"] = str(library)
    wheel_libs = library.parent.parent / "qcheck.libs"  # (auditwheel's: RUNPATH $ORIGIN/../qcheck.libs)
    if wheel_libs.is_dir():
        files.update({f"qcheck.libs/{p.name}": str(p) for p in wheel_libs.iterdir() if p.is_file()})
    if spec.startswith("plugin:"):
        plugin = Path(spec[len("plugin:"):]).resolve()
        files[f"lib/{plugin.name}"] = str(plugin)
    elif root and not _installed(root):
        files.update(_folder_files(Path(root), "adapter"))
    for path in extra:
        if path:
            files[f"files/{Path(path).name}"] = str(Path(path).resolve())
    size = sum(Path(p).stat().st_size for p in files.values())
    if size > MAX_SHIPPED:
        raise ValueError(f"ray: the files a worker needs come to {size >> 20} MiB, past the {MAX_SHIPPED >> 20} MiB "
                         f"shipped to each node (the adapter's folder {root}): install the adapter's package on "
                         "every node, or move the adapter into a folder of its own")
    return files


# --- the driver -------------------------------------------------------------------------------


def _ledger_workers(place):
    """QCHECK_GPU_LEDGER_WORKERS for a worker at `place`: the workers that share its GPU
    (qcheck.parallel.gpu_ledger)."""
    share = place["gpus"]
    return {"QCHECK_GPU_LEDGER_WORKERS": str(max(1, round(1 / share)) if 0 < share < 1 else 1)}


class RemoteProcess:
    """A worker's round on the cluster, as qcheck.parallel.supervise sees a Popen:
    its exit code arrives with a sync (RayProcesses)."""

    def __init__(self, owner, index, round_, returncode=None):
        self.owner, self.index, self.round, self.returncode = owner, index, round_, returncode

    def poll(self):
        return self.returncode

    def send_signal(self, number):
        self.owner.actors[self.index].signal.remote(int(number))

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def wait(self, timeout=None):
        end = time.monotonic() + (KILL_WAIT if timeout is None else timeout)
        while self.returncode is None:
            if time.monotonic() >= end:
                if timeout is None:  # killed, and its actor does not answer: taken as killed
                    self.returncode = -signal.SIGKILL
                    break
                raise subprocess.TimeoutExpired(f"w{self.index} on Ray", timeout)
            self.owner.sync()
            time.sleep(0.1)
        return self.returncode


class RayProcesses:
    """qcheck.parallel.workers' processes on a Ray cluster (LocalProcesses' interface)."""

    def __init__(self, address, workers, kernel, spec, on_cuda, run_dir, corpus_dir, findings_dir, extra_files):
        try:
            import ray
            from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
        except ImportError:
            raise ValueError(f"ray: the workers on a Ray cluster need Ray in {sys.executable}: "
                             "pip install 'qcheck[ray]' (or ray)") from None
        # The actors' code travels by value: a node needs no qcheck of its own.
        for module in (ray_nodes, ray_door_worker):
            ray.cloudpickle.register_pickle_by_value(module)
        self.ray, self.run_dir, self.corpus_dir, self.findings_dir = ray, run_dir, corpus_dir, findings_dir
        shipped = shipped_files(spec, import_root(kernel) if not spec.startswith(("plugin:", "/")) else
                                Path(spec.rsplit(":", 1)[0]).parent, extra_files)
        nodes = connect(address)
        self.places = plan(nodes, workers, on_cuda)
        if not self.places:
            ray.shutdown()
            raise ValueError(f"ray: no node of the cluster at {address} can run a worker" +
                             (" on a GPU (none has one)" if on_cuda else " (none has a CPU for Ray)"))
        self.count = len(self.places)
        self.device_arg = "cuda" if on_cuda else None  # (each worker's GPU: its actor's, or its node's MPS daemon)
        files = ray.put({rel: Path(path).read_bytes() for rel, path in shipped.items()})
        campaign = f"{run_dir.name}-{os.getpid()}"
        agent_class = ray.remote(num_cpus=0)(NodeAgent)
        self.agents = {}
        for node, _, _, gpus in nodes:
            if any(p["node"] == node for p in self.places):
                self.agents[node] = agent_class.options(
                    scheduling_strategy=NodeAffinitySchedulingStrategy(node, soft=False)).remote(
                    campaign, files, gpus if on_cuda else 0, os.environ.get("QCHECK_FUZZ_MPS", "auto"))
        where = dict(zip(self.agents, ray.get([a.where.remote() for a in self.agents.values()])))
        lines = []
        for node, (_, _, note, host) in where.items():
            count = sum(p["node"] == node for p in self.places)
            lines.append(f"{host}: {count} workers" + (f" ({note})" if on_cuda else ""))
        self.note = f"Ray at {address}, {len(lines)} nodes: " + "; ".join(lines)
        # The run's settings reach the workers wherever they run (a node's processes have its raylet's environment).
        passed_on = {k: v for k, v in os.environ.items() if k.startswith("QCHECK_") and k != "QCHECK_LIBRARY"}
        if "TRITON_CACHE_DIR" in os.environ:
            passed_on["TRITON_CACHE_DIR"] = os.environ["TRITON_CACHE_DIR"]
        self.names = {p.name for p in corpus_dir.glob("*.json")}
        folders = dict(run=str(run_dir), corpus=str(corpus_dir), findings=str(findings_dir))
        worker_class = ray.remote(max_restarts=-1, max_task_retries=0)(ray_door_worker.DoorWorker)
        self.actors = {}
        for p in self.places:
            self.actors[p["index"]] = worker_class.options(
                num_cpus=p["cpus"], num_gpus=p["gpus"],
                scheduling_strategy=NodeAffinitySchedulingStrategy(p["node"], soft=False)).remote(
                p["index"], where[p["node"]], folders, shipped, dict(_ledger_workers(p), **passed_on))
        self.rounds = {}  # index -> its RemoteProcess
        # The corpus the run starts from goes with each worker's first exchange (a worker reloads every second).
        self.pending = {i: self._corpus() for i in self.actors}
        self.incarnation = {i: 0 for i in self.actors}
        self.asked, self.failing, self.lost = {}, {}, set()
        self.rows = {p["index"]: dict(worker=p["index"], node=p["node"], host=p["host"], incarnations=1, handed_over=0,
                                      received=0, findings=0, corpus_at_end=0) for p in self.places}

    def start(self, index, round_, args, log_path):
        if index not in self.lost:
            try:
                self.ray.get(self.actors[index].launch.remote(round_, args))
            except self.ray.exceptions.RayActorError:
                pass  # dying or restarting: the round ends as killed
            else:
                self.rounds[index] = RemoteProcess(self, index, round_)
                return self.rounds[index]
        self.rounds[index] = RemoteProcess(self, index, round_, returncode=-signal.SIGKILL)
        return self.rounds[index]

    def sync(self):
        """One exchange with every worker that answered the last one: their
        files brought here, the new corpus entries handed on."""
        ray = self.ray
        stop = (self.run_dir / "stop").exists()
        for i, actor in self.actors.items():
            if i not in self.asked and i not in self.lost:
                entries, self.pending[i] = self.pending[i], []
                self.asked[i] = (actor.exchange.remote(entries, stop), entries)
        refs = [ref for ref, _ in self.asked.values()]
        if not refs:
            return
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=SYNC_WAIT)
        ready = set(ready)
        for i, (ref, entries) in list(self.asked.items()):
            if ref not in ready:
                continue
            del self.asked[i]
            try:
                got = ray.get(ref)
            except ray.exceptions.RayActorError as e:  # dying or restarting: the next incarnation answers
                self.pending[i] = entries + self.pending[i]
                if time.monotonic() - self.failing.setdefault(i, time.monotonic()) > LOST_SECONDS:
                    self.lost.add(i)
                    print(f"qcheck.fuzz: w{i}'s actor is lost ({str(e).splitlines()[0][:200]}); not replaced",
                          file=sys.stderr)
                    if i in self.rounds and self.rounds[i].returncode is None:
                        self.rounds[i].returncode = -signal.SIGKILL
                continue
            self.failing.pop(i, None)
            self.rows[i]["received"] += len(entries)
            self._take(i, got)

    def _corpus(self):
        return [(p.name, p.read_bytes()) for p in self.corpus_dir.glob("*.json")]

    def _write(self, path, data):
        partial = path.with_name(path.name + ".partial")
        partial.write_bytes(data)
        partial.replace(path)

    def _take(self, i, got):
        if got["incarnation"] != self.incarnation[i]:  # Ray restarted the actor: its round is gone
            self.incarnation[i] = got["incarnation"]
            print(f"qcheck.fuzz: w{i}'s actor was restarted by Ray (incarnation {got['incarnation']}, pid "
                  f"{got['pid']} on {got['host']})", file=sys.stderr)
            self.pending[i] = self._corpus()
            self.rows[i]["incarnations"] += 1
            if i in self.rounds and self.rounds[i].returncode is None and got["round"] != self.rounds[i].round:
                if got["orphan"] is not None:  # (its last case, for qcheck.parallel.workers' triage of the death)
                    self._write(self.run_dir / f"w{i}.current.json", got["orphan"].encode())
                self.rounds[i].returncode = -signal.SIGKILL
        for name, chunk in got["logs"].items():
            with open(self.run_dir / name, "ab") as f:
                f.write(chunk)
        for name, data in got["findings"]:
            self._write(self.findings_dir / name, data)
            self.rows[i]["findings"] += name.endswith(".json")
        self.rows[i]["corpus_at_end"] = got["corpus_size"]
        for name, data in got["corpus"]:
            self.rows[i]["handed_over"] += 1
            if name not in self.names:
                self.names.add(name)
                self._write(self.corpus_dir / name, data)
                for other in self.actors:
                    if other != i:
                        self.pending[other].append((name, data))
        this = self.rounds.get(i)
        if this is None or this.returncode is not None or got["round"] != this.round:
            return  # (an answer about an earlier round)
        for kind, text in got["files"].items():
            path = self.run_dir / f"w{i}.{kind}.json"
            if text is not None:
                self._write(path, text.encode())
            else:
                path.unlink(missing_ok=True)
        if got["code"] is not None:
            this.returncode = got["code"]

    def cluster(self):
        """A row per worker: its node and host, its actor's incarnations, the
        corpus entries it handed over and received, the findings it handed
        over (case files, one per case it found) and its corpus at the end."""
        return [self.rows[i] for i in sorted(self.rows)]

    def stop(self):
        """Every actor and node agent gone (the rounds have ended: qcheck.parallel.workers stopped them)."""
        ray = self.ray
        for actor in self.actors.values():
            ray.kill(actor, no_restart=True)
        try:
            ray.get([a.stop.remote() for a in self.agents.values()], timeout=60)
        except Exception as e:  # (a lost node's agent) the run's results are in already
            print(f"qcheck.fuzz: a node's agent did not stop: {str(e).splitlines()[0][:200]}", file=sys.stderr)
        ray.shutdown()
