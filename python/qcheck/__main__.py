"""python -m qcheck fuzz TARGET [options]
python -m qcheck replay CASE TARGET [--against TARGET2] [options]
python -m qcheck campaign [--ray [ADDRESS]] [--bin DIR] [--corpus DIR] [--mode M] [--known FILE] [MINUTES]

TARGET is MODULE:FUNCTION or FILE.py:FUNCTION, an adapter (python/README.md,
"The adapter contract": the module is imported, the current folder on the
path, and the function called with each case's tensors), or plugin:PATH, a
kernel library built against include/qcheck/qcheck_plugin.h (qcheck.Plugin).
fuzz --workers N runs N processes (qcheck.workers; on a CUDA device one per
core but one when not given, under an MPS daemon of qcheck's own); --ray
[ADDRESS] runs them on a Ray cluster (qcheck.ray_workers). replay exits as
qcheck-replay does: 0 pass, 1 mismatch (or, with --against, outputs that
differ), 2 invalid input (a case outside the kernel's domain among them), 3
runtime error (the kernel raised). --graph also replays each launch from a
CUDA graph and compares it with the eager one. --domain FILE gives the
kernel a domain (qcheck.Domain's JSON form) where it declares none.
campaign runs the C++ fuzz campaign (tools/fuzz_campaign/run_campaign.sh) of
the repository or GPU bundle this package lies in; --ray puts its workers on
a Ray cluster (ADDRESS, or a Ray instance of the run's own on this host).
"""

import argparse
import importlib
import importlib.util
import signal
import sys
import traceback
from pathlib import Path

from . import _capi
from .case import Case
from .domain import Domain
from .fuzz import fuzz
from .known import KnownList, classify, signatures_of
from .plugin import Plugin
from .verdict import against, run


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


def campaign(argv):
    """The C++ campaign's own script, found beside this package (a bundle's
    DIR/python/qcheck, a repository's python/qcheck): exec'd, its exit status
    the campaign's."""
    import os
    here = Path(__file__).resolve().parent
    root = here.parent.parent
    p = argparse.ArgumentParser(prog="python -m qcheck campaign",
                                description="the fuzz campaign over the fuzz targets (run_campaign.sh)")
    p.add_argument("minutes", nargs="?", default="10")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="the workers on a Ray cluster (host:port); alone: a Ray instance of the run's own here")
    p.add_argument("--bin", help="the fuzz targets and tools (a bundle's bin/, or ./qcheck fuzz's campaign-bin)")
    p.add_argument("--corpus", help="the seed corpus (default: the bundle's or repository's corpus/)")
    p.add_argument("--mode", default="default", choices=["default", "pr", "batch"])
    p.add_argument("--known", help="a known-bugs file (fuzz/verdict/known.h)")
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
    parser = argparse.ArgumentParser(prog="python -m qcheck", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("campaign", help="the C++ fuzz campaign, on this host or a Ray cluster (campaign --help)")
    f = sub.add_parser("fuzz", help="fuzz an adapter")
    f.add_argument("target")
    f.add_argument("--minutes", type=float, default=1.0)
    f.add_argument("--executions", type=int)
    f.add_argument("--profile")
    f.add_argument("--case-size", default="tiny", choices=["tiny", "usual", "default", "limit"])
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--corpus")
    f.add_argument("--findings", default="qcheck-findings")
    f.add_argument("--device", help="a torch device (cuda, cuda:1); numpy arrays when left out")
    f.add_argument("--graph", action="store_true", help="also replay each case from a CUDA graph")
    f.add_argument("--no-poison-allocator", action="store_true",
                   help="do not poison torch's cached memory before each CUDA run (qcheck.allocator)")
    f.add_argument("--domain", help="a domain file (qcheck.Domain's JSON form) for a kernel that declares none")
    f.add_argument("--known", help="a known-bugs file: findings it covers are counted apart (qcheck.known)")
    f.add_argument("--max-findings", type=int, default=50)
    f.add_argument("--workers", type=int,
                   help="processes (default: one per core but one on a CUDA device for a timed run, else 1)")
    f.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS",
                   help="the workers on a Ray cluster (host:port; alone: a Ray instance of the run's own here): "
                        "--workers in all, or one per CPU of its nodes (qcheck.ray_workers)")
    f.add_argument("--explore-share", type=float, default=0.2,
                   help="share of the time spent on cases the kernel has not compiled (qcheck.compile)")
    f.add_argument("--no-compile-aware", action="store_true", help="the plain loop: every case as generated")
    f.add_argument("--quiet", action="store_true", help="no progress lines and no summary")
    f.add_argument("--junit", help="also write the run as JUnit XML (a testcase per finding group)")
    f.add_argument("--html", help="also write the run as one self-contained HTML page (qcheck.report)")
    f.add_argument("--worker-dir", help=argparse.SUPPRESS)  # a worker of qcheck.workers
    f.add_argument("--worker-index", type=int, default=0, help=argparse.SUPPRESS)
    r = sub.add_parser("replay", help="run one case file through an adapter")
    r.add_argument("case")
    r.add_argument("target")
    r.add_argument("--profile")
    r.add_argument("--device")
    r.add_argument("--graph", action="store_true")
    r.add_argument("--against", help="a second TARGET: both on the case, their outputs compared")
    r.add_argument("--domain", help="a domain file for a kernel that declares none")
    r.add_argument("--known", help="a known-bugs file: says whether the case's failure is a known one")
    args = parser.parse_args(argv)
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
            from .workers import WorkerLink
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


if __name__ == "__main__":
    sys.exit(main())
