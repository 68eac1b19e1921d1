"""The campaign on a Ray cluster (run_campaign.sh --ray ADDRESS), on one
machine: a local cluster of three simulated nodes (Ray's own
ray.cluster_utils.Cluster, two CPUs each), the CPU backends, a correct one
beside a planted bug. Run by tests/with_ray.sh (which provides Ray):

  ray_campaign_test.py CAMPAIGN FUSED_Q_FUZZER NUMERICS_FUZZER CASE_DECODE_FUZZER REPLAY DICT CORPUS MINIMIZE

Checks, from the work folder and the summary the campaign writes:
  - the plan puts fused_q workers on every node, each backend on several;
  - the corpus converges: every correct worker, whichever its node, ends
    holding the entries the others found (its node-local folder has at
    least 90% of the run's corpus), and has received entries from workers
    of other nodes;
  - the planted bug is found by workers on at least two nodes and is one
    finding group in the summary (its artifacts deduplicated by signature),
    minimized; the correct backend has none;
  - a worker's actor killed (SIGKILL to its process) is restarted by Ray,
    the restart is noted in run/wI.restarts and the worker goes on fuzzing;
  - the summary is complete: executions, bins, restarts, the cluster's
    lines, JUnit and HTML written; exit 1 (a finding).
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ray
from ray.cluster_utils import Cluster

CORRECT = "cpu-model"
BUG = "cpu-model-bug-unit-weights-column"


def fail(message, out=None):
    print(f"FAIL: {message}")
    if out is not None and out.exists():
        print("--- campaign output:\n" + out.read_text(errors="replace"))
    sys.exit(1)


def table(path):
    rows = [line.split("\t") for line in path.read_text().splitlines()]
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def main(argv):
    campaign, fuzzers, corpus, minimize = argv[1], argv[2:7], argv[7], argv[8]
    tmp = Path(tempfile.mkdtemp(prefix="qcheck-ray-test."))
    print(f"ray_campaign_test: work folder {tmp} (removed when the test passes)")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for f in fuzzers + [minimize]:
        (bin_dir / Path(f).name).symlink_to(f)
    work, out = tmp / "run", tmp / "out"

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    for _ in range(2):
        cluster.add_node(num_cpus=2)
    cluster.wait_for_nodes()
    env = dict(os.environ, QCHECK_FUZZ_WORK_DIR=str(work), QCHECK_FUZZ_BACKENDS=f"{CORRECT},{BUG}",
               QCHECK_CASE_SIZE="tiny", QCHECK_FUZZ_MAX_FINDINGS="3", QCHECK_FUZZ_MINIMIZE_SECONDS="10",
               QCHECK_RAY_PYTHON=sys.executable)
    try:
        with open(out, "wb") as log:
            campaign_run = subprocess.Popen([campaign, "--bin", str(bin_dir), "--corpus", corpus,
                                             "--ray", cluster.address, "1"], stdout=log, stderr=subprocess.STDOUT,
                                            env=env)
            # Kill one correct worker's actor once it has fuzzed a while, on a node other than the driver's.
            killed, sync = None, work / "run" / "ray-sync.tsv"
            end = time.time() + 240
            while campaign_run.poll() is None and time.time() < end:
                time.sleep(1)
                if killed is None and sync.exists() and (work / "run" / "ray-plan.tsv").exists():
                    plan = {r["worker"]: r for r in table(work / "run" / "ray-plan.tsv")}
                    workers = {r[0]: r for r in (line.split("\t") for line in
                                                 (work / "workers.tsv").read_text().splitlines())}
                    head = plan["w0"]["node"]
                    for row in table(sync):
                        w = row["worker"]
                        if workers[w][2] == CORRECT and plan[w]["node"] != head and int(row["handed_over"]) > 5:
                            killed = w
                            os.kill(int(row["pid"]), signal.SIGKILL)
                            print(f"killed {w}'s actor (pid {row['pid']})")
                            break
            if campaign_run.poll() is None:
                campaign_run.kill()
                fail("the campaign did not end within 240 s", out)
        status = campaign_run.returncode
    finally:
        cluster.shutdown()
    text = out.read_text(errors="replace")

    plan = {r["worker"]: r for r in table(work / "run" / "ray-plan.tsv")}
    workers = {r[0]: r for r in (line.split("\t") for line in (work / "workers.tsv").read_text().splitlines())}
    nodes = {r["node"] for r in plan.values()}
    if len(nodes) != 3:
        fail(f"workers on {len(nodes)} nodes, expected 3: {plan}", out)
    for backend in (CORRECT, BUG):
        on = {plan[w]["node"] for w, r in workers.items() if r[2] == backend}
        if len(on) < 2:
            fail(f"{backend} runs on {len(on)} node(s), expected several", out)

    # The corpus converged: every correct worker holds (nearly) all of it.
    corpus_files = len(list((work / "fused_q" / "corpus").iterdir()))
    for row in table(work / "run" / "ray-sync.tsv"):
        w = row["worker"]
        if workers[w][2] != CORRECT or w == killed:
            continue
        if int(row["received"]) == 0:
            fail(f"{w} received no corpus entry from the other workers", out)
        if int(row["corpus_at_end"]) < 0.9 * corpus_files:
            fail(f"{w} ends with {row['corpus_at_end']} corpus files of the run's {corpus_files}", out)

    # The planted bug: found on two nodes or more, one finding group, minimized; none on the correct backend.
    found_on = {plan[a.name.split(".")[0]]["node"] for a in (work / "fused_q" / "artifacts").iterdir()
                if a.name.split(".")[1] == BUG}
    if len(found_on) < 2:
        fail(f"the planted bug was found on {len(found_on)} node(s), expected 2 or more", out)
    groups = re.findall(r"^  (\d+) x \[([^ ]+) \| (.*)\]", text, re.M)
    if [g[1] for g in groups] != [BUG]:
        fail(f"finding groups {groups}: expected the planted bug's alone, once", out)
    if int(groups[0][0]) < 2:
        fail(f"the planted bug's group holds {groups[0][0]} artifact(s): nothing was deduplicated", out)
    if not re.search(r"^    minimized: T=\d+ ", text, re.M):
        fail("the finding group was not minimized", out)

    # The killed actor: restarted by Ray, noted, fuzzing again.
    if killed is None:
        fail("no correct worker on another node handed over 5 corpus entries: nothing was killed", out)
    restarts = (work / "run" / f"{killed}.restarts").read_text() if (work / "run" / f"{killed}.restarts").exists() else ""
    if "actor restarted by Ray: incarnation 1" not in restarts:
        fail(f"{killed}'s restart is not noted (run/{killed}.restarts: {restarts!r})", out)
    later = [p for p in (work / "status").glob(f"{killed}.r*.k1")
             if int((re.search(r"executions (\d+)", p.read_text()) or [0, 0])[1]) > 0]
    if not later:
        fail(f"{killed} did not fuzz after its restart (no status file of incarnation 1 with executions)", out)

    # The summary.
    for pattern, what in ((r"^fused_q +\d+ execs +\d+ exec/s", "executions"),
                          (r"^Ray cluster ", "the cluster's lines"),
                          (r"^  corpus through Ray: \d+ entries handed over", "the corpus exchanged"),
                          (r"^worker restarts: [1-9]", "the restarts"),
                          (r"^semantic bins reached", "the bins"),
                          (r"^JUnit in ", "JUnit"), (r"^report in ", "the HTML report")):
        if not re.search(pattern, text, re.M):
            fail(f"the summary lacks {what} (no line matching {pattern})", out)
    if status != 1:
        fail(f"exit {status}, expected 1 (a finding)", out)
    rate = re.search(r"^fused_q +(\d+) execs +(\d+) exec/s", text, re.M)
    print(f"PASS: 3 nodes, {len(plan)} workers, fused_q {rate[1]} executions ({rate[2]} exec/s in all), corpus {corpus_files} files on every correct worker, the planted bug "
          f"one group of {groups[0][0]} artifacts from {len(found_on)} nodes, {killed}'s actor restarted")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
