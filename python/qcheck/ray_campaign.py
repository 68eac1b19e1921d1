"""The fuzz campaign on a Ray cluster: run_campaign.sh --ray ADDRESS runs this
file as a script where the one-host campaign runs supervise.py. Everything
else of the campaign (the workers' arguments, the progress line, the
triage, minimization, summary and reports) stays in run_campaign.sh and
reads the same work folder: this driver fills it.

  - The plan, from the cluster's nodes (Ray's resource model): on a node
    with GPUs, one fused_q worker per CPU but one (the one left to the MPS
    server), each holding an equal share of the node's GPUs, rotating over
    the CUDA backends; on a node without, one per CPU over the CPU backends
    (QCHECK_FUZZ_BACKENDS: the same list everywhere, CUDA backends only on
    GPU nodes). numerics and case_decode run once, on the first node (at
    nice 19 and no CPU of their own where the node fuzzes CUDA). The first
    CUDA worker runs the limit cases, as on one host.
  - Nothing but Ray between the hosts: the binaries, the known-bugs file
    and the two scripts (supervise.py, mps.py) travel through Ray's object
    store to a NodeAgent per node, which writes them into a node-local
    folder and starts the node's MPS daemons by mps.py's rules (stopped at
    the end). Each worker is a Worker actor that runs supervise.py as a
    script over its one libFuzzer worker (the restart rules of one host) in
    a node-local folder.
  - Corpus and findings: every second the driver exchanges files with each
    worker: the worker hands over its new corpus entries, artifacts, status
    files, log lines and restart reasons; the driver keeps a corpus entry
    once (by the SHA-1 of its bytes), writes it into the work folder and
    hands it to the target's other workers, whose libFuzzer loads it
    (-reload). An input that ended a worker leaves the corpus everywhere.
    Findings are then grouped by signature by the campaign's triage, as on
    one host.
  - Faults: an actor that dies is restarted by Ray (max_restarts); its new
    incarnation starts a new node-local folder, gets the whole corpus
    again, hands over the artifacts its earlier incarnations left on the
    node, and the driver notes "actor restarted" in run/wI.restarts. A
    worker whose node is lost is noted and not replaced.

  python3 ray_campaign.py WORK ADDRESS
ADDRESS: a Ray cluster's address, or "local" for a Ray instance of this
run's own on this host. Writes WORK/workers.tsv and WORK/run/ray-plan.tsv,
then waits for WORK/run/args.ready (run_campaign.sh writes each worker's
run/wI.args and run/wI.env, then that file with the deadline, the first
seed and the findings cap: "EPOCH SEED0 MAX_FINDINGS"). Ends on SIGTERM
(stopping every worker and collecting what they hold) or when every worker
is done; writes WORK/run/ray-sync.tsv (what each worker handed over and
received). Exit 2 with one line when Ray or the cluster cannot be used.
"""

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

EXCHANGE_SECONDS = 1.0
EXCHANGE_TIMEOUT = 30.0  # a worker that does not answer within this is asked again next time
LOST_SECONDS = 120.0  # an actor that fails every exchange this long (its node is gone) is given up
LOG_CHUNK = 1 << 18  # log bytes a worker hands over per exchange and file
CUDA_ROTATION = ("cuda-blocked", "cuda-blocked-threads256", "cuda-blocked-staged64", "cuda-blocked-staged32",
                 "cuda-blocked-parts", "cuda-legacy")
CPU_BACKENDS = ("cpu-simd", "cpu-model")
HERE = Path(__file__).resolve().parent


def sha1(data):
    return hashlib.sha1(data).hexdigest()


# --- the plan (no Ray: tested on its own) ------------------------------------------------


def _share(total, count):
    """total / count rounded down to Ray's resource precision (the shares never add up past the node's)."""
    return int(total / count * 10000) / 10000 if count else 0


def plan(nodes, available, backends=None, case_size=None):
    """The workers for `nodes` ([(node_id, host, cpus, gpus)], the first
    hosts numerics and case_decode): a list of dicts with index, target,
    backend, node, host, cpus and gpus (its shares of the node's), size and
    nice. `available`: the backends the binaries have; `backends`: the
    user's list (QCHECK_FUZZ_BACKENDS) or None. The rules of one host, per
    node: on a GPU, a worker per CPU but one, each a CPU and an equal share
    of the GPUs, numerics and case_decode beside them at nice 19 with no CPU;
    without, a worker per CPU, two of them numerics and case_decode on the
    first node, at least one per backend, the node's CPUs shared equally."""
    workers = []
    # (a node without a CPU for Ray's tasks, a head started with --num-cpus=0, runs none)
    for n, (node, host, cpus, gpus) in enumerate([n for n in nodes if n[2] >= 1]):
        cuda = [b for b in (backends or CUDA_ROTATION) if b.startswith("cuda-") and b in available]
        cpu = [b for b in (backends or CPU_BACKENDS) if not b.startswith("cuda-")]
        on_gpu = gpus > 0 and bool(cuda)
        rotation = cuda if on_gpu else cpu
        if not rotation:
            continue
        cpus = int(cpus)
        count = max(1, cpus - 1) if on_gpu else max(len(rotation), cpus - (2 if n == 0 else 0))
        others = ("numerics", "case_decode") if n == 0 else ()
        cpu_share = 1 if on_gpu else _share(cpus, count + len(others))
        gpu_share = _share(gpus, count) if on_gpu else 0
        for i in range(count):
            backend = rotation[i % len(rotation)]
            size = case_size or "default"
            if not case_size and on_gpu and not any(w["size"] == "limit" for w in workers):
                size = "limit"  # the first CUDA worker of the campaign runs the limit cases
            workers.append(dict(target="fused_q", backend=backend, node=node, host=host, cpus=cpu_share,
                                gpus=gpu_share, size=size, nice=False))
        for target in others:
            workers.append(dict(target=target, backend="", node=node, host=host, cpus=0 if on_gpu else cpu_share,
                                gpus=0, size=case_size or "default", nice=on_gpu))
    for i, w in enumerate(workers):
        w["index"] = i
    return workers


# --- on the nodes: the actors (defined once Ray is imported) -------------------------------


def _die_with_parent():
    """In the child: SIGTERM when the actor's process dies (a killed actor leaves no fuzzer behind),
    and the priority of a process of one's own (_normal_priority)."""
    import ctypes
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    _normal_priority()


def _normal_priority():
    """Ray runs its workers at nice 15 (RAY_worker_niceness), and a fuzzer
    would inherit it: below the campaign's numerics and case_decode workers'
    nice 19 by little, and below everything else on the node. Back to 0
    where allowed (root, or CAP_SYS_NICE); the niceness left is returned."""
    try:
        os.setpriority(os.PRIO_PROCESS, 0, 0)
    except OSError:
        pass
    return os.getpriority(os.PRIO_PROCESS, 0)


def _node_gpus(count):
    """The ids of a node's `count` GPUs as its raylet sees them (its
    CUDA_VISIBLE_DEVICES, which an actor holding no GPU inherits), the ids
    Ray's get_gpu_ids gives the workers; 0 .. count - 1 where it is unset."""
    visible = [g for g in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if g.strip()]
    return visible if len(visible) == count else [str(g) for g in range(count)]


def _new_log_bytes(folder, index, offsets):
    """{name: bytes} of worker `index`'s round logs in `folder` written since
    the last call (`offsets`, kept by the caller), at most LOG_CHUNK per file."""
    logs = {}
    for path in folder.glob(f"w{index}.r*.log"):
        at = offsets.get(path.name, 0)
        with open(path, "rb") as f:
            f.seek(at)
            chunk = f.read(LOG_CHUNK)
        if chunk:
            offsets[path.name] = at + len(chunk)
            logs[path.name] = chunk
    return logs


class NodeAgent:
    """One per node: the shipped files in a node-local folder, the node's MPS daemons (mps.py's rules)."""

    def __init__(self, campaign, files, gpus, mps_mode):
        import importlib.util
        import tempfile
        import ray
        # (per node: the simulated nodes of a test cluster share one machine)
        self.folder = Path(tempfile.gettempdir()) / "qcheck-ray" / campaign / ray.get_runtime_context().get_node_id()[:12]
        self.bin = self.folder / "bin"
        for name, data in files.items():
            path = self.folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            path.chmod(0o755)
        spec = importlib.util.spec_from_file_location("qcheck_mps", self.bin / "mps.py")
        mps = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mps)
        self.daemons = mps.Daemons(self.folder / "mps", _node_gpus(int(gpus)), mps_mode)
        nice = _normal_priority()
        if nice:
            self.daemons.note += (f"; the workers run at nice {nice}, Ray's worker niceness (start the node with "
                                  "RAY_worker_niceness=0)")

    def where(self):
        """(node folder, GPUs with an MPS daemon of ours, note, host)."""
        import socket
        return str(self.folder), self.daemons.own, self.daemons.note, socket.gethostname()

    def stop(self):
        """The daemons stopped, the node's folder removed (the driver holds everything)."""
        import shutil
        self.daemons.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
        try:
            self.folder.parent.rmdir()  # the campaign's, once its last node is done
        except OSError:
            pass


class Worker:
    """One campaign worker: supervise.py over one libFuzzer worker in a
    node-local folder, and the files it hands to the driver."""

    def __init__(self, index, args, env, driver_work, shipped, where, start):
        import ray
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


# --- the driver -------------------------------------------------------------------------------


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


def connect(address):
    """ray.init on `address` ("local": a Ray instance of this process's own,
    its workers at nice 0, as _normal_priority would set them): the alive
    nodes as [(node_id, host, cpus, gpus)], this process's node first.
    ConnectionError with one line where the cluster cannot be used."""
    import ray
    try:
        if address == "local":
            os.environ.setdefault("RAY_worker_niceness", "0")
            ray.init(include_dashboard=False, logging_level="WARNING", log_to_driver=False)
        else:
            ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    except Exception as e:  # Ray raises ConnectionError, RuntimeError, ValueError...
        raise ConnectionError(f"cannot use the Ray cluster at {address}: {e}") from None
    here = ray.get_runtime_context().get_node_id()
    nodes = [(n["NodeID"], n.get("NodeManagerHostname") or n["NodeManagerAddress"], n["Resources"].get("CPU", 0),
              n["Resources"].get("GPU", 0)) for n in ray.nodes() if n["Alive"]]
    return sorted(nodes, key=lambda n: (n[0] != here, n[1], n[0]))


def _fail(message):
    print(f"campaign: {message}", file=sys.stderr)
    sys.exit(2)


def _wait_for(path, process_seconds):
    end = time.time() + process_seconds
    while not path.exists():
        if time.time() > end:
            _fail(f"{path} did not appear within {process_seconds} s")
        time.sleep(0.2)
    return path.read_text().split()


def _shipped_files(work, workers):
    """{driver path: path in a node's folder} for every existing file outside
    the work folder that a worker's arguments or environment name (the
    binaries, the dictionary, the known-bugs file; under bin/), the
    libraries beside the binaries (a bundle's lib/, which their RPATH
    $ORIGIN/../lib finds) and the scripts the nodes run."""
    shipped = {}
    for w in workers:
        for name in ("args", "env"):
            for line in (work / "run" / f"w{w['index']}.{name}").read_text().splitlines():
                value = line.split("=", 1)[-1]
                if value.startswith("/") and not value.startswith(str(work)) and Path(value).is_file():
                    shipped[value] = "bin/" + Path(value).name
    # (the folder a fuzzer's path names and, through a link, its real one: lib/ may sit beside either)
    fuzzers = [Path(p) for p, rel in shipped.items() if rel.endswith("_fuzzer")]
    for folder in {f.parent for f in fuzzers} | {f.resolve().parent for f in fuzzers}:
        lib = folder.parent / "lib"
        if lib.is_dir():
            for path in lib.iterdir():
                if path.is_file():
                    shipped[str(path)] = "lib/" + path.name
    for script in ("supervise.py", "mps.py"):
        shipped[str(HERE / script)] = "bin/" + script
    return shipped


def main(argv):
    if len(argv) != 3:
        print("usage: ray_campaign.py WORK ADDRESS", file=sys.stderr)
        return 2
    work, address = Path(argv[1]).resolve(), argv[2]
    try:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
    except ImportError:
        _fail(f"the Ray campaign needs Ray in {sys.executable}: pip install 'qcheck[ray]' (or ray)")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is run_campaign.sh's: it sends SIGTERM
    terminated = []
    signal.signal(signal.SIGTERM, lambda *_: terminated.append(1))
    try:
        nodes = connect(address)
    except ConnectionError as e:
        _fail(str(e))
    # (again: Ray's own handlers replace ours; SIGTERM is the driver's cue to stop the workers and hand over)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: terminated.append(1))

    available = set(os.environ.get("QCHECK_RAY_AVAILABLE_BACKENDS", "").split(","))
    backends = [b for b in os.environ.get("QCHECK_FUZZ_BACKENDS", "").split(",") if b] or None
    workers = plan(nodes, available, backends, os.environ.get("QCHECK_CASE_SIZE") or None)
    if not any(w["target"] == "fused_q" for w in workers):
        _fail(f"no node of the cluster at {address} can run the fused_q backends asked for")
    with open(work / "workers.tsv", "w") as f:
        for w in workers:
            f.write(f"w{w['index']}\t{w['target']}\t{w['backend'] or '-'}\t-\t{w['size']}\n")
    with open(work / "run" / "ray-plan.tsv", "w") as f:
        f.write("worker\thost\tnode\tcpus\tgpu_share\tnice\n")
        for w in workers:
            f.write(f"w{w['index']}\t{w['host']}\t{w['node']}\t{w['cpus']}\t{w['gpus']}\t{int(w['nice'])}\n")
    deadline, seed0, max_findings = _wait_for(work / "run" / "args.ready", 120)

    campaign = f"{work.name}-{os.getpid()}"
    shipped = _shipped_files(work, workers)
    files = ray.put({name: Path(path).read_bytes() for path, name in shipped.items()})
    agent_class = ray.remote(num_cpus=0)(NodeAgent)
    worker_class = ray.remote(max_restarts=-1, max_task_retries=0)(Worker)
    uses_cuda = any(w["gpus"] for w in workers)
    agents = {}
    for node_id, host, _, gpus in nodes:
        if any(w["node"] == node_id for w in workers):
            agents[node_id] = agent_class.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node_id, soft=False)).remote(
                campaign, files, gpus if uses_cuda else 0, os.environ.get("QCHECK_FUZZ_MPS", "auto"))
    where = dict(zip(agents, ray.get([a.where.remote() for a in agents.values()])))
    for node_id, (_, _, note, host) in where.items():
        count = sum(w["node"] == node_id for w in workers)
        print(f"campaign: node {host} ({node_id[:8]}): {count} workers; {note}", flush=True)
    mirror = Mirror(work, workers)
    # The campaign's settings reach the workers wherever they run (a node's
    # processes have the environment its raylet was started with).
    passed_on = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith(("QCHECK_", "ASAN_", "UBSAN_"))
                 and k != "QCHECK_STATUS_FILE"]
    actors = {}
    for w in workers:
        i = w["index"]
        args = (work / "run" / f"w{i}.args").read_text().splitlines()
        env = (work / "run" / f"w{i}.env").read_text().splitlines()
        env = passed_on + env
        if 0 < w["gpus"] < 1:  # the workers that share its GPU (the GPU ledger's limit-case threshold)
            env.append(f"QCHECK_GPU_LEDGER_WORKERS={max(1, round(1 / w['gpus']))}")
        actors[i] = worker_class.options(
            num_cpus=w["cpus"], num_gpus=w["gpus"],
            scheduling_strategy=NodeAffinitySchedulingStrategy(w["node"], soft=False)).remote(
            i, args, env, str(work), shipped, where[w["node"]],
            (float(deadline), int(seed0), int(max_findings)))

    lost, failing = set(), {}
    running = {i: True for i in actors}

    def exchange_all(stop=False):
        """One exchange with every worker (at the end, stop(): what each holds, nothing given)."""
        asked = {}
        for i, actor in actors.items():
            if i in lost:
                continue
            entries, drop = ([], []) if stop else mirror.outgoing(i)
            asked[actor.stop.remote() if stop else actor.exchange.remote(entries, drop)] = (i, entries, drop)
        ready, _ = ray.wait(list(asked), num_returns=len(asked), timeout=EXCHANGE_TIMEOUT)
        for ref, (i, entries, drop) in asked.items():
            if ref not in ready:
                mirror.unsent(i, entries, drop)  # asked again next time
                continue
            try:
                got = ray.get(ref)
            except ray.exceptions.RayActorError as e:  # dying or restarting: the next incarnation answers
                mirror.unsent(i, entries, drop)
                failing.setdefault(i, time.monotonic())
                if time.monotonic() - failing[i] > LOST_SECONDS:  # its node is gone, or Ray gave up on it
                    lost.add(i)
                    running[i] = False
                    mirror.note(i, f"actor lost: {str(e).splitlines()[0][:200]}")
                continue
            failing.pop(i, None)
            mirror.take(i, got, len(entries))
            running[i] = got["running"]

    while not terminated and any(running.values()):
        exchange_all()
        mirror.write_sync()
        for _ in range(int(EXCHANGE_SECONDS / 0.1)):
            if terminated:
                break
            time.sleep(0.1)
    exchange_all(stop=True)
    mirror.write_sync()
    for actor in actors.values():
        ray.kill(actor, no_restart=True)
    ray.get([a.stop.remote() for a in agents.values()])
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
