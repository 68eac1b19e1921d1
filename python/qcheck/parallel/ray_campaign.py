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

import os
import signal
import sys
import time
from pathlib import Path

if __package__:  # qcheck.parallel.ray_campaign (the plan's tests)
    from . import ray_campaign_exchange, ray_nodes
else:  # run as a script by run_campaign.sh, without the package: the modules beside it
    import ray_campaign_exchange
    import ray_nodes

EXCHANGE_SECONDS = 1.0
EXCHANGE_TIMEOUT = 30.0  # a worker that does not answer within this is asked again next time
LOST_SECONDS = 120.0  # an actor that fails every exchange this long (its node is gone) is given up
CUDA_ROTATION = ("cuda-blocked", "cuda-blocked-threads256", "cuda-blocked-staged64", "cuda-blocked-staged32",
                 "cuda-blocked-parts", "cuda-legacy")
CPU_BACKENDS = ("cpu-simd", "cpu-model")
HERE = Path(__file__).resolve().parent


# --- the plan (no Ray: tested on its own) ------------------------------------------------


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
        cpu_share = 1 if on_gpu else ray_nodes._share(cpus, count + len(others))
        gpu_share = ray_nodes._share(gpus, count) if on_gpu else 0
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


# --- the driver -------------------------------------------------------------------------------


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
        nodes = ray_nodes.connect(address)
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
    # The actors' code travels by value, as it did from this script's own module: a node needs no copy.
    for module in (ray_nodes, ray_campaign_exchange):
        ray.cloudpickle.register_pickle_by_value(module)
    agent_class = ray.remote(num_cpus=0)(ray_nodes.NodeAgent)
    worker_class = ray.remote(max_restarts=-1, max_task_retries=0)(ray_campaign_exchange.Worker)
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
    mirror = ray_campaign_exchange.Mirror(work, workers)
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
