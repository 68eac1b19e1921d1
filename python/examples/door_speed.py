"""The Python door's speed on a production-style Triton kernel
(triton_fused_q_production.py through production_adapter.py), as a user
runs it: `python -m qcheck fuzz` in a fresh process per run, each with an
empty Triton cache of its own (every variant compiles at least once).

    python3 door_speed.py [--seconds 300] [--workers 15] [--seeds 3] [--find-seconds 60] [--out DIR]
                          [--rows plain,aware,workers] [--find-rows workers]

Rows: plain (compile-aware off, one process), aware (compile-aware, one
process), workers (compile-aware, --workers N under qcheck's MPS daemon), ray
(the workers row on a Ray instance of the run's own: --ray local), all
on the correct kernel at usual sizes (a finding there is printed as a
failure). Then, for each row named in --find-rows, the time to the first
finding of each planted variant (weights-stride-1, tokens-on-grid-y) for
each seed, runs stopped at their first finding or after --find-seconds.
One process alone reaches the size-gated variant only when asked: its find
runs of tokens-on-grid-y pass case_size "limit" (with workers, worker 0 runs
the limit schedule on its own). Prints a markdown table (python/README.md
keeps the latest) and exits 1 when the correct kernel had a finding or a
planted variant was not found within --find-seconds.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROWS = {"plain": (1, False, False), "aware": (1, True, False), "workers": (None, True, False),
        "ray": (None, True, True)}
VARIANTS = {"weights-stride-1": "adapter_weights_stride_1", "tokens-on-grid-y": "adapter_tokens_on_grid_y"}
SIZE_GATED = {"tokens-on-grid-y"}  # a launch that fails from T = 65536: only limit cases reach it


def fuzz(target, seconds, workers, aware, out, name, seed=1, max_findings=50, case_size="usual", ray=False):
    env = dict(os.environ, TRITON_CACHE_DIR=str(out / f"triton-cache-{name}"))
    if "qcheck" not in sys.modules:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(HERE.parent)) if p)
    args = [sys.executable, "-m", "qcheck", "fuzz", f"production_adapter:{target}", "--minutes", f"{seconds / 60}",
            "--case-size", case_size, "--device", "cuda", "--workers", str(workers), "--seed", str(seed),
            "--findings", str(out / f"findings-{name}"), "--corpus", str(out / f"corpus-{name}"),
            "--max-findings", str(max_findings)] + ["--no-compile-aware"] * (not aware) + ["--ray", "local"] * ray
    began = time.monotonic()
    done = subprocess.run(args, cwd=HERE, env=env, capture_output=True, text=True)
    (out / f"{name}.log").write_text(" ".join(args) + "\n" + done.stderr + done.stdout)
    text = done.stderr
    figures = {"wall": time.monotonic() - began, "rc": done.returncode}
    m = re.search(r"qcheck.fuzz: (\d+) executions in ([\d.]+) s, (\d+) exec/s; (\d+) of (\d+) semantic bins", text)
    if m:
        figures.update(executions=int(m[1]), seconds=float(m[2]), rate=int(m[3]), bins=int(m[4]))
    m = re.search(r"compiles: (\d+) variants compiled \(([^)]*)\), ([\d.]+) s compiling \((\d+)% of the time\), "
                  r"(\d+)% of executions on warm keys", text)
    if m:
        figures.update(compiles=int(m[1]), hook=m[2], compile_share=int(m[4]), warm=int(m[5]))
    m = re.search(r"FINDINGS: (\d+) cases in (\d+) groups.*the first after ([\d.]+) s", text)
    figures["findings"] = int(m[1]) if m else 0
    figures["first"] = float(m[3]) if m else None
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) - 1))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--find-seconds", type=float, default=60)
    parser.add_argument("--rows", default="plain,aware,workers")
    parser.add_argument("--find-rows", default="workers")
    parser.add_argument("--parallel-single", action="store_true",
                        help="run every one-process job (the plain and aware rows and their find runs) at the same "
                             "time, one core each (16 cores; the GPU is mostly idle in one process)")
    parser.add_argument("--out", default=os.environ.get("OUT") or tempfile.mkdtemp(prefix="door-speed-"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = False
    lines = ["| run, production-style example, usual sizes | workers | seconds | executions | exec/s | compiles "
             "| compile share | warm keys | bins | findings (correct kernel) | time to find each planted bug |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = args.rows.split(",")
    find_rows = [r for r in args.find_rows.split(",") if r in rows]
    # The jobs: each row's run on the correct kernel, then each find run
    # (variant, seed). One process alone never meets a limit case unless
    # asked: its find runs of the size-gated variant pass case_size "limit",
    # as a user would (with workers, worker 0 runs them on its own).
    jobs = {}
    for row in rows:
        workers, aware, ray = ROWS[row]
        workers = workers or args.workers
        jobs[row] = ("adapter", args.seconds, workers, aware, out, row, 1, 50, "usual", ray)
        for variant, target in VARIANTS.items() if row in find_rows else ():
            size = "limit" if workers == 1 and variant in SIZE_GATED else "usual"
            for seed in range(1, args.seeds + 1):
                jobs[(row, variant, seed)] = (target, args.find_seconds, workers, aware, out,
                                              f"{row}-{variant}-{seed}", seed, 1, size, ray)
    done = {}
    if args.parallel_single:  # every one-process job at once, one core each
        from concurrent.futures import ThreadPoolExecutor
        limit_runs = threading.Semaphore(3)  # a limit case holds gigabytes on the host and the GPU

        def run(job):
            if job[8] != "limit":
                return fuzz(*job)
            with limit_runs:
                return fuzz(*job)

        single = [k for k, job in jobs.items() if job[2] == 1]
        with ThreadPoolExecutor(len(single) or 1) as pool:
            futures = {k: pool.submit(run, jobs[k]) for k in single}
            done = {k: f.result() for k, f in futures.items()}
    for key, job in jobs.items():
        if key not in done:
            done[key] = fuzz(*job)
        print(f"{key}: {done[key]}", file=sys.stderr, flush=True)
    for row in rows:
        f, workers, aware = done[row], jobs[row][2], jobs[row][3]
        failed |= f["findings"] > 0 or "rate" not in f
        finds = []
        for variant in VARIANTS if row in find_rows else ():
            times = []
            for seed in range(1, args.seeds + 1):
                g = done[(row, variant, seed)]
                times.append("not found" if g["first"] is None else f"{g['first']:.1f} s")
                failed |= g["first"] is None
            size = " (case_size limit)" if workers == 1 and variant in SIZE_GATED else ""
            finds.append(f"{variant}{size}: {', '.join(times)}")
        mode = ("compile-aware" if aware else "compile-aware off") + (", Ray" if jobs[row][9] else "")
        lines.append(f"| {row} ({mode}) | {workers} | {f.get('seconds', 0):.0f} | {f.get('executions', 0)} | "
                     f"{f.get('rate', 0)} | {f.get('compiles', '?')} | {f.get('compile_share', '?')} % | "
                     f"{f.get('warm', '?')} % | {f.get('bins', '?')} | {f['findings']} | "
                     f"{'; '.join(finds) or 'not measured'} |")
        (out / "door_speed.md").write_text("\n".join(lines) + "\n")
    table = "\n".join(lines)
    print(table)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
