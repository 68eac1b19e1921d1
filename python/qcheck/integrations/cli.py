"""python -m qcheck fuzz TARGET [options]
python -m qcheck replay CASE TARGET [--against TARGET2] [options]
python -m qcheck campaign [--ray [ADDRESS]] [--bin DIR] [--corpus DIR] [--mode M] [--known FILE] [MINUTES]
python -m qcheck ops [--json]

TARGET is MODULE:FUNCTION or FILE.py:FUNCTION, an adapter (python/README.md,
"The adapter contract": the module is imported, the current folder on the
path, and the function called with each case's tensors), or plugin:PATH, a
kernel library built against include/qcheck/qcheck_plugin.h (qcheck.Plugin).
fuzz --workers N runs N processes (qcheck.parallel.workers; on a CUDA device one per
core but one when not given, under an MPS daemon of qcheck's own); --ray
[ADDRESS] runs them on a Ray cluster (qcheck.parallel.ray_workers). replay exits as
qcheck-replay does: 0 pass, 1 mismatch (or, with --against, outputs that
differ), 2 invalid input (a case outside the kernel's domain among them), 3
runtime error (the kernel raised). --graph also replays each launch from a
CUDA graph and compares it with the eager one. --domain FILE gives the
kernel a domain (qcheck.Domain's JSON form) where it declares none.
campaign runs the C++ fuzz campaign (tools/fuzz_campaign/run_campaign.sh) of
the repository or GPU bundle this package lies in; --ray puts its workers on
a Ray cluster (ADDRESS, or a Ray instance of the run's own on this host).
ops prints each op libqcheck knows with its tensors, fields, parts and
profiles (--json: the C API's qcheck_ops_json list).
"""

import argparse
import importlib
import importlib.util
import signal
import sys
import traceback
from pathlib import Path

from ..fuzzing.loop import fuzz
from ..model import _capi
from ..model.case import Case
from ..model.domain import Domain
from ..model.known import KnownList, classify, signatures_of
from ..model.plugin import Plugin
from ..model.verdict import against, run


def adapter(spec):
    if spec.startswith("plugin:"):
        return Plugin(spec[len("plugin:"):])
    if ":" not in spec:
        raise SystemExit(f"qcheck: {spec!r} must be MODULE:FUNCTION")
    module_name, function = spec.rsplit(":", 1)
    if module_name.endswith(".py"):  # a script: imported under its file name, its folder on the path
        path = Path(module_name).resolve()
        if not path.is_file():
            raise SystemExit(f"qcheck: {module_name} is not a file")
        sys.path.insert(0, str(path.parent))
        loaded = importlib.util.spec_from_file_location(path.stem, path)
        target = importlib.util.module_from_spec(loaded)
        sys.modules[path.stem] = target
        loaded.loader.exec_module(target)
    else:
        sys.path.insert(0, "")
        target = importlib.import_module(module_name)
    for part in function.split("."):
        target = getattr(target, part)
    return target


class _WithDomain:
    """An adapter called as it is, with the domain given on the command line."""

    def __init__(self, kernel, domain, domain_file):
        self._kernel, self.domain, self.domain_file = kernel, domain, domain_file
        self.profile = getattr(kernel, "profile", None)
        self.__name__ = getattr(kernel, "__name__", "kernel")
        self.__module__, self.__qualname__ = getattr(kernel, "__module__", None), getattr(kernel, "__qualname__", None)
        self.outside = getattr(kernel, "outside", None)

    def __call__(self, tensors):
        return self._kernel(tensors)


CASE_SIZES = ["tiny", "usual", "default", "limit"]
CASE_SIZE_HELP = ("the size of generated cases: tiny (T <= 33, heads <= 5: many executions on a CPU), usual "
                  "(T <= 64), default (usual, and one case in 32 up to T = 1024), limit (default, and now and then a "
                  "case at the hardware's limits, T past 65535, up to about 4.5 GB: a GPU host); default: "
                  "%(default)s")


def _campaign_arguments(p):
    p.add_argument("minutes", nargs="?", default="10", help="how long the campaign runs, in minutes (default: "
                                                            "%(default)s)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="the workers on a Ray cluster (host:port); alone: a Ray instance of the run's own here "
                        "(default: no Ray, the workers on this host)")
    p.add_argument("--bin", help="the fuzz targets and tools (a bundle's bin/, or ./qcheck fuzz's campaign-bin; "
                                 "default: the first of those found beside this package)")
    p.add_argument("--corpus", help="the seed corpus (default: the bundle's or repository's corpus/)")
    p.add_argument("--mode", default="default", choices=["default", "pr", "batch"],
                   help="default: fuzz, then triage every finding; pr: stop at the first new finding (one no case "
                        "of corpus/regressions reproduces), exit 1; batch: also merge and prune the corpus at the "
                        "end (default: %(default)s)")
    p.add_argument("--known", help="a known-bugs file (fuzz/verdict/known.h): the findings it covers are counted "
                                   "apart and stop nothing (default: none, every finding is new)")


def _fuzz_arguments(f):
    f.add_argument("target", help="the kernel: MODULE:FUNCTION or FILE.py:FUNCTION (an adapter), or plugin:PATH "
                                  "(a kernel library, qcheck.Plugin)")
    f.add_argument("--minutes", type=float, default=1.0,
                   help="how long to fuzz, in minutes (default: %(default)s; with --executions, the bound of a run "
                        "with workers only)")
    f.add_argument("--executions", type=int,
                   help="stop after this many cases instead (with workers: that many in all; default: none, "
                        "--minutes decides)")
    f.add_argument("--profile", help="the profile the outputs are judged under (qcheck.profiles(), auto, "
                                     "NAME+any-fma; default: the kernel's own, else the case's)")
    f.add_argument("--case-size", default="tiny", choices=CASE_SIZES, help=CASE_SIZE_HELP)
    f.add_argument("--seed", type=int, default=1, help="the mutator's seed (default: %(default)s)")
    f.add_argument("--corpus", help="a folder of cases: read at the start and given every case kept (default: "
                                    "none, the kept cases stay in memory)")
    f.add_argument("--findings", default="qcheck-findings",
                   help="where each finding is saved, its case as DIGEST.json beside DIGEST.txt (the verdict and "
                        "the replay command) (default: %(default)s)")
    f.add_argument("--device", help="a torch device (cuda, cuda:1; default: numpy arrays on the host)")
    f.add_argument("--graph", action="store_true",
                   help="also replay each case from a CUDA graph and compare it with the eager run (default: off)")
    f.add_argument("--no-poison-allocator", action="store_true",
                   help="do not poison torch's cached memory before each CUDA run (qcheck.allocator; default: "
                        "poisoned)")
    f.add_argument("--domain", help="a domain file (qcheck.Domain's JSON form) for a kernel that declares none "
                                    "(default: the kernel's own domain, if any)")
    f.add_argument("--known", help="a known-bugs file: findings it covers are counted apart (qcheck.known; "
                                   "default: none)")
    f.add_argument("--max-findings", type=int, default=50,
                   help="stop after this many new findings (default: %(default)s)")
    f.add_argument("--workers", type=int,
                   help="processes sharing the corpus and the findings (default: for a timed run on a CUDA device, "
                        "one per core with one core left free; else 1)")
    f.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="the workers on a Ray cluster (host:port; alone: a Ray instance of the run's own here): "
                        "--workers in all, or one per CPU of its nodes (qcheck.ray_workers; default: no Ray)")
    f.add_argument("--explore-share", type=float, default=0.2,
                   help="share of the time spent on cases the kernel has not compiled (qcheck.compile; default: "
                        "%(default)s)")
    f.add_argument("--no-compile-aware", action="store_true",
                   help="the plain loop: every case as generated (default: compile-aware)")
    f.add_argument("--quiet", action="store_true", help="no progress lines and no summary (default: both)")
    f.add_argument("--junit", help="also write the run as JUnit XML (a testcase per finding group; default: none)")
    f.add_argument("--html", help="also write the run as one self-contained HTML page (qcheck.report; default: "
                                  "none)")
    f.add_argument("--worker-dir", help=argparse.SUPPRESS)  # a worker of qcheck.parallel.workers
    f.add_argument("--worker-index", type=int, default=0, help=argparse.SUPPRESS)


def _replay_arguments(r):
    r.add_argument("case", help="a case file (JSON, or the binary form of corpus files and libFuzzer artifacts)")
    r.add_argument("target", help="the kernel: MODULE:FUNCTION, FILE.py:FUNCTION or plugin:PATH, as fuzz takes it")
    r.add_argument("--profile", help="the profile the outputs are judged under (auto: every profile that explains "
                                     "them; default: the kernel's own, else the case's; with --against: auto)")
    r.add_argument("--device", help="a torch device (cuda, cuda:1; default: numpy arrays on the host)")
    r.add_argument("--graph", action="store_true",
                   help="also replay the launch from a CUDA graph and compare it with the eager one (default: off)")
    r.add_argument("--against", help="a second TARGET: both on the case, their outputs compared (default: none)")
    r.add_argument("--domain", help="a domain file for a kernel that declares none (default: the kernel's own)")
    r.add_argument("--known", help="a known-bugs file: says whether the case's failure is a known one (default: "
                                   "none)")


def parser():
    """python -m qcheck's command line: the fuzz, replay, campaign and ops subcommands."""
    top = argparse.ArgumentParser(prog="python -m qcheck", description="qcheck's command line: fuzz a kernel, "
                                  "replay a case on it, or run the C++ fuzz campaign (SUBCOMMAND --help for each)")
    sub = top.add_subparsers(dest="command", required=True)
    _campaign_arguments(sub.add_parser("campaign", help="the C++ fuzz campaign, on this host or a Ray cluster",
                                       description="the fuzz campaign over the fuzz targets (run_campaign.sh)"))
    _fuzz_arguments(sub.add_parser("fuzz", help="fuzz an adapter", description="fuzz an adapter (qcheck.fuzz)"))
    _replay_arguments(sub.add_parser("replay", help="run one case file through an adapter",
                                     description="run one case file through an adapter; exit 0 pass, 1 mismatch, "
                                                 "2 invalid input, 3 runtime error"))
    _ops_arguments(sub.add_parser("ops", help="list the ops with their tensors, fields and profiles",
                                  description="each op libqcheck knows: its tensors, fields, parts and profiles"))
    return top


def _ops_arguments(p):
    p.add_argument("--json", action="store_true", help="print the list as JSON, one object per op (default: text)")


def list_ops(argv):
    """python -m qcheck ops: every op with its vocabulary, as text or JSON."""
    import json
    from ..model.ops import ops
    p = argparse.ArgumentParser(prog="python -m qcheck ops",
                                description="each op libqcheck knows: its tensors, fields, parts and profiles")
    _ops_arguments(p)
    args = p.parse_args(argv)
    known = ops().values()
    if args.json:
        print(json.dumps([o.to_json() for o in known], indent=1))
    else:
        print("\n\n".join(o.describe() for o in known))
    return 0


def campaign(argv):
    """The C++ campaign's own script, found beside this package (a bundle's
    DIR/python/qcheck, a repository's python/qcheck): exec'd, its exit status
    the campaign's."""
    import os
    here = Path(__file__).resolve().parents[1]  # the package's folder (this module is in its integrations/)
    root = here.parent.parent
    p = argparse.ArgumentParser(prog="python -m qcheck campaign",
                                description="the fuzz campaign over the fuzz targets (run_campaign.sh)")
    _campaign_arguments(p)
    args = p.parse_args(argv)
    script = next((s for s in (root / "run_campaign.sh", root / "tools" / "fuzz_campaign" / "run_campaign.sh")
                   if s.is_file()), None)
    bins = [args.bin] if args.bin else [root / "bin", root / "build" / "fuzz-gpu" / "campaign-bin",
                                        root / "build" / "fuzz" / "campaign-bin"]
    bin_dir = next((Path(b) for b in bins if (Path(b) / "fused_q_fuzzer").exists()), None)
    if script is None or bin_dir is None:
        print("qcheck campaign: the campaign runs from a GPU bundle (./qcheck bundle DIR) or a repository checkout "
              f"(./qcheck fuzz builds it); {'no run_campaign.sh' if script is None else 'no fused_q_fuzzer'} "
              f"beside {here}{'' if script is None else ' (--bin DIR names the fuzz targets)'}", file=sys.stderr)
        return 2
    command = [str(script), "--bin", str(bin_dir), "--corpus", args.corpus or str(root / "corpus"),
               "--mode", args.mode]
    command += ["--known", args.known] if args.known else []
    command += ["--ray", args.ray] if args.ray else []
    lib = root / "lib"
    if lib.is_dir():  # a bundle's libraries (its own front door sets the same)
        os.environ["LD_LIBRARY_PATH"] = f"{lib}:{os.environ.get('LD_LIBRARY_PATH', '')}".rstrip(":")
    os.execv(str(script), command + [args.minutes])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["campaign"]:
        return campaign(argv[1:])
    if argv[:1] == ["ops"]:
        return list_ops(argv[1:])
    args = parser().parse_args(argv)
    try:
        kernel = adapter(args.target)
        second = adapter(args.against) if getattr(args, "against", None) else None
        if args.domain:
            kernel = _WithDomain(kernel, Domain.load(args.domain), args.domain)
        known = KnownList(args.known) if args.known else None
    except (OSError, ValueError, _capi.QcheckError) as e:
        print(f"qcheck: {e}", file=sys.stderr)
        return 2
    if args.command == "fuzz":
        link = None
        if args.worker_dir:
            from ..parallel.worker_link import WorkerLink
            link = WorkerLink(args.worker_dir, args.worker_index)
            # Ctrl-C reaches the terminal's whole process group: the parent stops its workers (the stop file)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            result = fuzz(kernel, minutes=args.minutes, profile=args.profile, case_size=args.case_size,
                          seed=args.seed, corpus=args.corpus, device=args.device, findings=args.findings,
                          executions=args.executions, graph=args.graph, known=known,
                          poison_allocator=not args.no_poison_allocator, max_findings=args.max_findings,
                          progress=not args.quiet, workers=args.workers, ray=args.ray,
                          compile_aware=not args.no_compile_aware, explore_share=args.explore_share, _worker=link)
        except (ValueError, ConnectionError) as e:  # the run could not start (workers, Ray): one line
            print(f"qcheck: {e}", file=sys.stderr)
            return 2
        if link is not None:
            link.finish(result)
        if args.junit:
            result.write_junit(args.junit, args.target)
        if args.html:
            result.write_html(args.html, args.target)
        return 1 if result.findings else 0
    try:
        case = Case.load(args.case)
        case.validate()
    except (OSError, _capi.QcheckError) as e:
        print(f"qcheck: {e}", file=sys.stderr)
        return 2
    try:
        if second is not None:
            result = against(case, kernel, second, device=args.device, profile=args.profile or "auto",
                             names=(args.target, args.against))
            print(result.text)
            codes = [result.first.exit_code, result.second.exit_code]
            return max([c for c in codes if c >= 2] + [0 if result.passed else 1])
        verdict = run(case, kernel, device=args.device, profile=args.profile, name=args.target, graph=args.graph)
    except _capi.QcheckError as e:
        print(f"qcheck: {e}", file=sys.stderr)
        return 2
    except Exception:
        print("RUNTIME ERROR: the kernel raised\n" + traceback.format_exc(), file=sys.stderr)
        return 3
    print(verdict.text, end="")
    if known is not None and not verdict.passed:
        entry, group = classify(known, case, signatures_of(verdict))
        print(f"KNOWN: {group} is covered by known entry {entry} [{known.entries[entry].signature}] "
              f"({known.entries[entry].note})" if entry is not None else f"NEW (not a known bug): {group}")
    return verdict.exit_code

