"""The Python door's workers on a Ray cluster (qcheck.fuzz(kernel, ray=ADDRESS),
python -m qcheck fuzz TARGET --ray ADDRESS), on one machine: a local cluster
of three simulated nodes (Ray's own ray.cluster_utils.Cluster, two CPUs
each) whose processes cannot import qcheck (the package, its library and the
adapters' folder travel through Ray). Run by tests/with_ray.sh (which
provides Ray), with QCHECK_LIBRARY naming the build's libqcheck.

Checks, from the FuzzResult and the findings folder:
  - six workers, two per node, every one of them ran cases;
  - the corpus converges: every worker received the others' entries and
    ends holding at least 90% of the run's corpus;
  - a planted bug (a missing tail guard) is found by workers on two nodes
    or more, its findings saved once in the driver's findings folder, with
    replay lines naming that folder (no node's path), one group per
    signature set;
  - an actor killed (SIGKILL, from its own worker) is restarted by Ray: the
    restart is counted, the case its worker was running is saved as "worker
    died", and the worker fuzzes again;
  - the summary has the Ray line; the command line runs a correct kernel
    on the cluster and, stopped by SIGINT (Ctrl-C), prints its summary and
    exits 0 with no findings.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the adapters

import qcheck  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

import adapters  # noqa: E402


def fail(message, result=None):
    print(f"FAIL: {message}")
    if result is not None:
        print("--- summary:\n" + result.summary())
        for row in result.cluster:
            print(row)
    sys.exit(1)


def main():
    tmp = Path(tempfile.mkdtemp(prefix="qcheck-door-test."))
    print(f"ray_door: work folder {tmp}")
    findings, corpus = tmp / "findings", tmp / "corpus"
    # The nodes' processes start from this environment: without the package's path or library.
    for name in ("PYTHONPATH", "QCHECK_LIBRARY"):
        os.environ.pop(name, None)
    probe = subprocess.run([sys.executable, "-c", "import qcheck"], capture_output=True, cwd=tmp)
    if probe.returncode == 0:
        fail("qcheck is importable without its path: the test would not show that it travels to the nodes")
    os.environ["QCHECK_TEST_KILL_ACTOR_ONCE"] = str(tmp / "killed")
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    # 75 s: in a 45-s run on two loaded cores (ctest -j2) the killed actor's
    # restarted worker once finished no round before the end (its restart: a
    # new Ray worker process, the package shipped again, the corpus loaded).
    try:
        result = qcheck.fuzz(adapters.kills_its_actor_once, ray=cluster.address, minutes=1.25, case_size="tiny",
                             corpus=corpus, findings=findings, max_findings=100000)
        os.environ.pop("QCHECK_TEST_KILL_ACTOR_ONCE")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(qcheck.__file__).parent.parent),
                                                            str(HERE.parent)]),
                   QCHECK_LIBRARY=str(qcheck._capi.library_path))
        # The command line, a correct kernel, ended by Ctrl-C (SIGINT) after 20 s of a 5-minute run.
        with open(tmp / "command.txt", "wb") as err:
            command = subprocess.Popen([sys.executable, "-m", "qcheck", "fuzz", "adapters:correct", "--ray",
                                        cluster.address, "--workers", "3", "--minutes", "5", "--findings",
                                        str(tmp / "correct")], stdout=subprocess.DEVNULL, stderr=err, env=env,
                                       cwd=tmp, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
            time.sleep(20)
            command.send_signal(signal.SIGINT)
            sent = time.monotonic()
            command_code = command.wait(timeout=180)
            command_took = time.monotonic() - sent
    finally:
        cluster.shutdown()
    print(result.summary())
    for row in result.cluster:
        print(row)

    rows = result.cluster
    nodes = {r["node"] for r in rows}
    if result.workers != 6 or len(rows) != 6 or len(nodes) != 3:
        fail(f"{result.workers} workers on {len(nodes)} nodes, expected 6 on 3", result)
    if sorted(result.worker_executions) != list(range(6)) or not all(result.worker_executions.values()):
        fail(f"not every worker ran cases: {result.worker_executions}", result)

    # The killed actor: restarted by Ray, its case saved, its worker fuzzing again.
    if [why for _, why in result.restarts] != ["killed by signal 9"]:
        fail(f"restarts {result.restarts}: expected one, the killed actor's", result)
    killed = result.restarts[0][0]
    if rows[killed]["incarnations"] != 2 or sum(r["incarnations"] for r in rows) != 7:
        fail(f"w{killed}'s actor restart is not seen in the cluster's rows", result)
    died = [f for f in result.findings if f.signature.startswith("worker died")]
    if len(died) != 1 or not died[0].path.exists():
        fail(f"the killed worker's case is not saved once: {[f.path for f in died]}", result)

    # The corpus converged.
    entries = len(list(corpus.glob("*.json")))
    for r in rows:
        if r["worker"] == killed:
            continue
        if r["received"] == 0 or r["handed_over"] == 0:
            fail(f"w{r['worker']} handed over {r['handed_over']} and received {r['received']} corpus entries", result)
        if r["corpus_at_end"] < 0.9 * entries:
            fail(f"w{r['worker']} ends with {r['corpus_at_end']} corpus entries of the run's {entries}", result)

    # The planted bug: found on several nodes, each case saved once here, one group per signature set.
    found_on = {r["node"] for r in rows if r["findings"] > 0}
    if len(found_on) < 2:
        fail(f"the planted bug was found on {len(found_on)} node(s), expected 2 or more", result)
    bug = [f for f in result.findings if not f.signature.startswith("worker died")]
    # (the folder may hold more: the killed round's findings came here, its result never did, as on one host)
    saved = {p.name for p in findings.glob("*.json")}
    listed = [f.path.name for f in result.findings]
    if not bug or len(set(listed)) != len(listed) or not set(listed) <= saved:
        fail(f"{len(listed)} findings in the result ({len(set(listed))} cases), {len(saved)} case files saved",
             result)
    for f in bug:
        text = f.path.with_suffix(".txt").read_text()
        if f.path.parent != findings or f"replay: python -m qcheck replay {f.path} " not in text or \
                f"{tempfile.gettempdir()}/qcheck-ray/" in text:  # (the nodes' folders: NodeAgent)
            fail(f"{f.path}: its text names a node's paths, not this host's:\n{text}", result)
        if not all(c.endswith("/unwritten") or c.endswith("/nondeterministic") for c in f.signatures):
            fail(f"{f.path}: {f.signatures} is not the planted bug", result)
    groups = [g for g in result.groups if not g.startswith("worker died")]
    if len(groups) > 4 or sum(result.groups[g].count for g in groups) < len(bug) or \
            max(result.groups[g].count for g in groups) < 2:
        fail(f"the bug's findings are not grouped by signature set: {result.by_group}", result)
    if "Ray: 3 nodes; corpus entries handed over" not in result.summary():
        fail("the summary has no Ray line", result)

    # The command line: the summary survives Ctrl-C.
    text = (tmp / "command.txt").read_text()
    if command_code != 0 or command_took > 90 or "no findings" not in text or "Ray: 3 nodes" not in text or \
            "stopped: interrupted (SIGINT)" not in text or not re.search(r"qcheck.fuzz: [1-9]\d* executions", text):
        fail(f"python -m qcheck fuzz --ray, SIGINT: exit {command_code} {command_took:.0f} s after it\n{text}")
    print("ray_door: PASS")
    subprocess.run(["rm", "-rf", str(tmp)])


if __name__ == "__main__":
    main()
