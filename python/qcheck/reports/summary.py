"""The summary's lines on a run's compile figures (qcheck.fuzzing.compile's
CompileSchedule.figures(), merged over the workers by add_figures) and on
its memory (qcheck.parallel.memory's figures): FuzzResult.summary's parts
that the figures' owners would otherwise each format."""

from pathlib import Path

ADDITIVE_FIGURES = ("compiles", "compile_seconds", "warm_executions", "warm_compiles", "explore_seconds",
                    "keys_missed", "keys_by_geometry", "geometry_compiles")
LEARNED_SHOWN = 4  # what the compiles on warm keys showed: the most frequent, in the summary


def add_figures(into, other):
    """Adds a worker's figures() to `into` (the workers' merged figures)."""
    if not into:
        into.update(other)
        into["learned"] = {text: list(entry) for text, entry in other.get("learned", {}).items()}
    else:
        for k in ADDITIVE_FIGURES:
            into[k] = into.get(k, 0) + other.get(k, 0)
        for text, (keys, example) in other.get("learned", {}).items():
            into["learned"].setdefault(text, [0, example])[0] += keys


def compile_summary(c, executions, seconds, processes=1):
    """The summary's lines on compiling (FuzzResult.summary), from figures() `c`."""
    warm = c["warm_executions"] / max(1, executions)
    line = (f"compiles: {c['compiles']} variants compiled ({c['source']}), {c['compile_seconds']:.1f} s compiling "
            f"({100 * c['compile_seconds'] / max(1e-9, seconds * max(1, processes)):.0f}% of the time), "
            f"{100 * warm:.0f}% of executions on warm keys" +
            (f", exploring {100 * c['explore_share']:.0f}% of the time" if c["aware"] else " (compile-aware off)"))
    if not c["warm_compiles"]:
        return [line]
    missed = c.get("keys_missed", 0)
    lines = [line + f"; {c['warm_compiles']} compiled on a key taken as warm, on {missed} key{'s' * (missed != 1)} "
             "(the kernel specializes on more than the key: learned from what compiled, or give it "
             "compile_key(case))"]
    learned = sorted(c.get("learned", {}).items(), key=lambda item: -item[1][0])
    for text, (keys, example) in learned[:LEARNED_SHOWN]:
        lines.append(f"  {keys} key{'s' * (keys != 1)}: {text}" + (f" (one: {example})" if example else ""))
    if len(learned) > LEARNED_SHOWN:
        lines.append(f"  ... and {len(learned) - LEARNED_SHOWN} other differences")
    n = c.get("keys_by_geometry", 0)
    if n:
        lines.append(f"  {n} key{'s' * (n != 1)} scheduled by the case's geometry since (every field but the data: "
                     "what decides what a wrapper passes)" +
                     (f"; {c['geometry_compiles']} compiled on such a key taken as warm (the kernel specializes on "
                      "the data too)" if c.get("geometry_compiles") else ""))
    return lines


def memory_lines(m):
    """The summary's lines on memory (qcheck.parallel.memory): none where nothing happened."""
    lines = []
    if m["retried"]:
        lines.append(f"memory pressure, retried alone: {m['retried']} (out-of-memory errors that passed alone on "
                     "the device: not findings)")
    if m["notes"]:
        lines.append(f"memory: {len(m['notes'])} cases need more memory than the device has (not findings; cases "
                     f"in {Path(m['notes'][0]['path']).parent}); the first: {m['notes'][0]['text'].splitlines()[0]}")
    if m["waited_seconds"] >= 1 or m["overdue"]:
        lines.append(f"GPU ledger: {m['waited_seconds']:.0f} s waiting for device memory in all" +
                     (f", {m['overdue']} waits ran out of QCHECK_GPU_LEDGER_WAIT_SECONDS (run anyway)"
                      if m["overdue"] else ""))
    return lines
