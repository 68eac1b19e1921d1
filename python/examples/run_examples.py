"""Runs the example kernels through qcheck on a GPU host and prints figures.

    python3 run_examples.py fuzz-triton [--minutes 2]   # Triton kernel under vllm-triton: expect no findings
    python3 run_examples.py planted [--minutes 1]       # planted rope-style swap: expect >= 1 finding
    python3 run_examples.py auto [--cases 40]           # which profiles explain each adapter
    python3 run_examples.py bench [--seconds 30]        # exec/s of the fuzz loop, phase split
    python3 run_examples.py all                         # the four in turn

qcheck comes from PYTHONPATH (a GPU bundle: PYTHONPATH=DIR/python), else
from this repository's python/ folder. Outputs (summary.txt, findings) go
under --out (default $OUT if set, else ./examples-out). The exit status is 1
when an expectation fails, 2 when something could not run. `--device cpu`
runs on the CPU (the Triton kernel then needs TRITON_INTERPRET=1).
"""

import argparse
import collections
import os
import shutil
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import qcheck
except ImportError:
    sys.path.insert(1, str(HERE.parent))
    import qcheck

import torch  # noqa: E402

import torch_eager_fused_q  # noqa: E402
import triton_fused_q  # noqa: E402

ADAPTERS = {
    "triton": triton_fused_q.adapter,
    "triton-bug-rope-swap": triton_fused_q.adapter_bug_rope_swap,
    "torch-eager": torch_eager_fused_q.adapter,
}
# The profile each adapter follows. The Triton example follows vLLM's Triton
# conventions, but Triton 3.6 contracts its fp8 MQA r1 as fma(x1, c,
# -RN(x2*s)) where vLLM's kernel compiled to fma(-x2, s, RN(x1*c)) (read
# from the PTX on the H200): auto names it vllm-triton on the bf16 paths and
# vllm-triton+any-fma where the fp8 path shows the pattern.
EXPECTED_PROFILE = {"triton": ("vllm-triton", "vllm-triton+any-fma"), "torch-eager": ("torch-eager",)}


class Report:
    """Prints and keeps every line (written to OUT/summary.txt), and the
    expectations that failed."""

    def __init__(self, out):
        self.out = out
        self.lines = []
        self.failures = []

    def say(self, text=""):
        for line in str(text).splitlines() or [""]:
            print(line, flush=True)
            self.lines.append(line)

    def expect(self, ok, what):
        self.say(("  ok: " if ok else "  EXPECTATION FAILED: ") + what)
        if not ok:
            self.failures.append(what)

    def save(self):
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "summary.txt").write_text("\n".join(self.lines) + "\n")


def fresh_dir(path):
    """An empty folder of the driver's own (under --out)."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return path


def synchronize(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def compiled_variants():
    """How many variants of the Triton kernel this process compiled (None
    where this Triton keeps its cache elsewhere, or under the interpreter)."""
    try:
        return sum(len(entry[0]) for entry in triton_fused_q._fused_q_kernel.device_caches.values())
    except Exception:
        return None


def fuzz_summary(rep, result):
    rep.say(result.summary())
    per_exec = {k: v / max(1, result.executions) * 1e6 for k, v in result.phases.items()}
    rep.say(f"figures: {result.executions} executions, {result.seconds:.1f} s, {result.exec_per_second:.0f} exec/s, "
            f"{len(result.bins)} bins, {len(result.findings)} findings; per execution: "
            + ", ".join(f"{k} {v:.0f} us" for k, v in per_exec.items()))
    variants = compiled_variants()
    if variants is not None:
        rep.say(f"Triton kernel variants compiled in this process so far: {variants}")


# --- a. the Triton kernel under its profile --------------------------------------------
def cmd_fuzz_triton(args, rep):
    rep.say(f"== fuzz-triton: qcheck.fuzz(triton_fused_q.adapter, {args.minutes} min, profile {args.triton_profile}, "
            f"case size {args.size}, device {args.device})")
    findings = fresh_dir(args.out / "findings-triton")
    result = qcheck.fuzz(triton_fused_q.adapter, minutes=args.minutes, device=args.device, case_size=args.size,
                         profile=args.triton_profile, findings=str(findings), seed=args.seed,
                         progress=not args.quiet, graph=args.graph)
    if args.graph:
        rep.say("every case also captured in a torch.cuda.CUDAGraph, replayed and compared with the eager run")
    fuzz_summary(rep, result)
    for f in result.findings[:3]:
        rep.say(f"finding {f.signature}: {f.path}")
        rep.say(f.text[:1500])
    rep.expect(not result.findings, f"no findings under {args.triton_profile} (got {len(result.findings)})")


# --- b. the planted bug ------------------------------------------------------------------------
def cmd_planted(args, rep):
    rep.say(f"== planted: qcheck.fuzz(triton_fused_q.adapter_bug_rope_swap, {args.minutes} min, "
            f"profile {args.triton_profile})")
    findings = fresh_dir(args.out / "findings-planted")
    start = time.time()
    result = qcheck.fuzz(triton_fused_q.adapter_bug_rope_swap, minutes=args.minutes, device=args.device,
                         case_size=args.size, profile=args.triton_profile, findings=str(findings), seed=args.seed,
                         progress=not args.quiet)
    fuzz_summary(rep, result)
    if result.findings:
        first = result.findings[0]
        # A finding's files are written when it is found: their time is the time to it.
        found_at = min(Path(f.path).stat().st_mtime for f in result.findings[:1]) - start
        rep.say(f"time to the first finding: {found_at:.2f} s (of {result.seconds:.1f} s); "
                f"signature {first.signature}; case {first.path}")
        rep.say(f"  {first.case}")
        rep.say("by group: " + ", ".join(f"{n} x {s}" for s, n in sorted(result.by_group.items())))
    rep.expect(len(result.findings) >= 1, f">= 1 finding for the planted bug (got {len(result.findings)})")


# --- c. which profile explains each adapter ------------------------------------------------
def verdict_profiles(verdict):
    profiles = getattr(verdict, "profiles", None)
    if profiles is None:  # a package older than the field: read the report
        profiles = verdict.json.get("profiles")
    return None if profiles is None else list(profiles)


def outputs_differ(case, device, a, b):
    """Whether two adapters write different indexer outputs on the same inputs."""
    ta = case.torch_inputs(device=device)
    tb = case.torch_inputs(device=device)
    a(ta)
    b(tb)
    synchronize(device)
    for name in ("index_q_fp8", "index_weights_out"):
        x, y = ta[name], tb[name]
        if x.numel() and not torch.equal(x.contiguous().view(torch.uint8), y.contiguous().view(torch.uint8)):
            return True
    return False


def cmd_auto(args, rep):
    rep.say(f"== auto: {args.cases} generated cases (size {args.size}, seeds {args.seed}..), "
            f"each adapter under profile auto and under qcheck, device {args.device}")
    explained = {name: collections.Counter() for name in ADAPTERS}
    under_qcheck = {name: collections.Counter() for name in ADAPTERS}
    missing = {name: [] for name in EXPECTED_PROFILE}
    unexplained_text = {name: [] for name in EXPECTED_PROFILE}
    bug_cases = bug_explained = 0
    shown = None
    for k in range(args.cases):
        seed = args.seed + k
        case = qcheck.Case.from_seed(seed, args.size)
        bug_matters = bool(case["has_indexer"]) and outputs_differ(case, args.device, triton_fused_q.adapter,
                                                                   triton_fused_q.adapter_bug_rope_swap)
        verdicts = {}
        for name, adapter in ADAPTERS.items():
            try:
                v = qcheck.run(case, adapter, device=args.device, profile="auto", name=name)
                q = qcheck.run(case, adapter, device=args.device, profile="qcheck", name=name)
            except qcheck.QcheckError as e:
                rep.say(f"seed {seed} {name}: libqcheck refused: {e}")
                rep.failures.append(f"libqcheck refused a run ({e})")
                return
            synchronize(args.device)
            verdicts[name] = v
            profiles = verdict_profiles(v)
            key = "(no profiles field)" if profiles is None else (", ".join(profiles) or "(none)")
            explained[name][key] += 1
            under_qcheck[name]["pass" if q.passed else (q.signature or f"exit {q.exit_code}")] += 1
            if name in EXPECTED_PROFILE and (profiles is None or not set(EXPECTED_PROFILE[name]) & set(profiles)):
                missing[name].append(seed)
                unexplained_text[name].append((seed, v.text))
        if bug_matters:
            bug_cases += 1
            bug_explained += bool(verdict_profiles(verdicts["triton-bug-rope-swap"]))
            if shown is None:
                shown = (seed, case, verdicts)
        if not args.quiet and (k + 1) % 10 == 0:
            print(f"[auto] {k + 1} of {args.cases} cases", file=sys.stderr, flush=True)
    for name in ADAPTERS:
        rep.say(f"{name}: profiles that explain it bit for bit (cases):")
        for key, n in explained[name].most_common():
            rep.say(f"  {n:4d}  {key}")
        rep.say(f"{name}: verdict under profile qcheck (cases by signature):")
        for key, n in under_qcheck[name].most_common():
            rep.say(f"  {n:4d}  {key}")
    if shown is not None:
        seed, case, verdicts = shown
        rep.say(f"-- one case (seed {seed}, where the rope style makes a difference): {case}")
        for name, v in verdicts.items():
            rep.say(f"-- {name} under auto:")
            rep.say(v.text[:2500])
    for name, items in unexplained_text.items():
        for seed, text in items[:2]:
            rep.say(f"-- {name}, seed {seed}, not explained by {' or '.join(EXPECTED_PROFILE[name])} (verdict under auto):")
            rep.say(text[:1800])
    for name, profile in EXPECTED_PROFILE.items():
        rep.expect(not missing[name], f"{name} explained by {' or '.join(profile)} on every case "
                   f"({args.cases - len(missing[name])} of {args.cases}; not on seeds {missing[name][:10]})")
    rep.expect(bug_cases == 0 or bug_explained == 0,
               f"the rope-swap bug explained by no profile on the {bug_cases} cases where the style makes a "
               f"difference (explained on {bug_explained})")
    rep.say("informational: under qcheck the Triton kernel is expected to show row-power-of-two on index_q_fp8 rows "
            "whose amax falls in the UE8M0 log2 band, the torch eager one NaN where satfinite gives 448 "
            "(non-saturating cast) and NaN rows (amax propagates NaN)")


# --- d. speed of the fuzz loop ---------------------------------------------------------------
def time_calls(fn, device, n=200):
    """Median wall time of fn() followed by a synchronize, in us."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        synchronize(device)
        times.append(time.perf_counter() - t0)
    times.sort()
    return times[len(times) // 2] * 1e6


def cmd_bench(args, rep):
    rep.say(f"== bench: qcheck.fuzz(triton_fused_q.adapter) for {args.seconds} s at size {args.size}, "
            f"after {args.warmup} s of warm-up (compiles the variants the same seed reaches)")
    findings = fresh_dir(args.out / "findings-bench")
    common = dict(device=args.device, case_size=args.size, profile=args.triton_profile, findings=str(findings),
                  seed=args.seed, progress=False, max_findings=10**9)
    if args.warmup > 0:
        warm = qcheck.fuzz(triton_fused_q.adapter, minutes=args.warmup / 60, **common)
        rep.say(f"warm-up: {warm.executions} executions, {warm.exec_per_second:.0f} exec/s "
                f"(compiled variants: {compiled_variants()})")
    result = qcheck.fuzz(triton_fused_q.adapter, minutes=args.seconds / 60, **common)
    fuzz_summary(rep, result)
    rep.say(f"bench: {result.exec_per_second:.0f} exec/s (goal >= 500 at tiny sizes); "
            f"{len(result.findings)} findings on the way (not stopping the loop)")
    # Where the kernel phase goes: one launch of the adapter on a fixed case,
    # against a trivial torch op (both followed by a synchronize).
    case = qcheck.Case.from_seed(args.seed, args.size)
    tensors = case.torch_inputs(device=args.device)
    triton_fused_q.adapter(tensors)
    synchronize(args.device)
    scratch = torch.zeros(16, device=args.device)
    adapter_us = time_calls(lambda: triton_fused_q.adapter(tensors), args.device)
    op_us = time_calls(lambda: scratch.add_(1), args.device)
    sync_us = time_calls(lambda: None, args.device)
    inputs_us = time_calls(lambda: case.torch_inputs(device=args.device), args.device, n=50)
    rep.say(f"one adapter call + synchronize: {adapter_us:.0f} us (median of 200); a torch add_ + synchronize: "
            f"{op_us:.0f} us; a synchronize alone: {sync_us:.0f} us; case.torch_inputs: {inputs_us:.0f} us")


COMMANDS = {"fuzz-triton": cmd_fuzz_triton, "planted": cmd_planted, "auto": cmd_auto, "bench": cmd_bench}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=list(COMMANDS) + ["all"])
    parser.add_argument("--minutes", type=float, help="fuzz-triton (default 2), planted (default 1)")
    parser.add_argument("--cases", type=int, default=40, help="auto: generated cases")
    parser.add_argument("--seconds", type=float, default=30, help="bench: measured seconds")
    parser.add_argument("--warmup", type=float, default=15, help="bench: warm-up seconds (0: none)")
    parser.add_argument("--size", default="tiny", choices=["tiny", "usual", "default"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--triton-profile", default="vllm-triton+any-fma",
                        help="the profile fuzz-triton, planted and bench judge under (e.g. vllm-triton+any-fma)")
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "examples-out"))
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--graph", action="store_true", help="fuzz-triton: also replay each case from a CUDA graph")
    args = parser.parse_args(argv)
    rep = Report(args.out)
    rep.say(f"qcheck library {qcheck.library_path}; profiles {','.join(qcheck.profiles())}; torch {torch.__version__}; "
            f"triton {triton_fused_q.triton.__version__}; device {args.device}"
            + (f" ({torch.cuda.get_device_name()})" if str(args.device).startswith("cuda") else ""))
    names = list(COMMANDS) if args.command == "all" else [args.command]
    broken = False
    for name in names:
        command_args = argparse.Namespace(**vars(args))
        if command_args.minutes is None:
            command_args.minutes = {"fuzz-triton": 2.0, "planted": 1.0}.get(name, 1.0)
        t0 = time.time()
        try:
            COMMANDS[name](command_args, rep)
        except Exception:
            rep.say(f"{name}: could not run\n{traceback.format_exc()}")
            broken = True
        rep.say(f"({name}: {time.time() - t0:.1f} s)")
        rep.save()
    rep.say("failed expectations: " + ("; ".join(rep.failures) if rep.failures else "none"))
    rep.save()
    if broken:
        return 2
    return 1 if rep.failures else 0


if __name__ == "__main__":
    sys.exit(main())
