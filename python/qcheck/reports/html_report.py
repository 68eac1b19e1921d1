"""One self-contained HTML page for a fuzz run: a person's view of it.

No network and no external assets (inline CSS and an inline SVG plot, no
script): the page opens from a CI artifact store, a mail or a laptop alike.
It shows exec/s over time, the semantic bins reached (and those not), the
finding groups with their first case, verdict, replay command and minimized
case where there is one, the known bugs set aside, and the run's summary.

    python -m qcheck fuzz ... --html FILE       (FuzzResult.write_html)
    python3 html_report.py campaign WORK OUT.html
                                                the C++ campaign's work folder
                                                (run_campaign.sh runs it as a
                                                script: progress.tsv,
                                                junit.tsv, summary.txt)
"""

import html
import re
import sys
import time
from pathlib import Path

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; padding: 0 1.5em; max-width: 1100px; color: #1b1f24; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.meta { color: #57606a; } .ok { color: #1a7f37; } .bad { color: #cf222e; } .known { color: #9a6700; }
pre { background: #f6f8fa; padding: 0.8em; overflow-x: auto; font-size: 0.85em; white-space: pre-wrap; }
table { border-collapse: collapse; } td, th { padding: 0.2em 0.8em; border-bottom: 1px solid #d0d7de; text-align: left; }
.bins span { display: inline-block; margin: 0.15em; padding: 0.1em 0.45em; border-radius: 4px; font-size: 0.8em; }
.bins .hit { background: #dafbe1; } .bins .miss { background: #f6f8fa; color: #8c959f; }
details { margin: 0.6em 0; border: 1px solid #d0d7de; border-radius: 6px; padding: 0.4em 0.8em; }
summary { cursor: pointer; font-weight: 600; }
"""


def _e(text):
    return html.escape(str(text), quote=True)


def rates(timeline):
    """(seconds, exec/s) between consecutive (seconds, executions) samples. A last sample closer to the
    one before than half the interval before that (the run's end, taken while its workers stopped) is
    merged with it, so the plot does not end in a drop that only says the run was over."""
    timeline = list(timeline)
    if len(timeline) >= 3 and timeline[-1][0] - timeline[-2][0] < 0.5 * (timeline[-2][0] - timeline[-3][0]):
        del timeline[-2]
    out = []
    for (t0, e0), (t1, e1) in zip(timeline, timeline[1:]):
        if t1 > t0:
            out.append((t1, (e1 - e0) / (t1 - t0)))
    return out


def svg_plot(points, width=720, height=220):
    """exec/s over time as an inline SVG line with its axes' ranges."""
    if not points:
        return "<p class=meta>(no rate samples: the run was shorter than one sample)</p>"
    left, bottom, top, right = 60, 30, 10, 10
    t_max = max(t for t, _ in points) or 1.0
    r_max = max(r for _, r in points) or 1.0
    x = lambda t: left + (width - left - right) * t / t_max
    y = lambda r: height - bottom - (height - bottom - top) * r / r_max
    line = " ".join(f"{x(t):.1f},{y(r):.1f}" for t, r in points)
    return (f'<svg width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="exec/s over time">'
            f'<line x1="{left}" y1="{height - bottom}" x2="{width - right}" y2="{height - bottom}" stroke="#8c959f"/>'
            f'<line x1="{left}" y1="{top}" x2="{left}" y2="{height - bottom}" stroke="#8c959f"/>'
            f'<polyline fill="none" stroke="#0969da" stroke-width="2" points="{line}"/>'
            f'<text x="{left - 6}" y="{top + 10}" text-anchor="end" font-size="11">{r_max:.0f}</text>'
            f'<text x="{left - 6}" y="{height - bottom}" text-anchor="end" font-size="11">0</text>'
            f'<text x="{width - right}" y="{height - 8}" text-anchor="end" font-size="11">{t_max:.0f} s</text>'
            f'<text x="{left}" y="{height - 8}" font-size="11">0 s</text>'
            f'<text x="{left + 8}" y="{top + 12}" font-size="11" fill="#57606a">exec/s</text></svg>')


def page(title, meta, timeline, bins, groups, known, summary):
    """The HTML text. meta: lines under the title; timeline: (seconds,
    executions) samples; bins: [(name, reached)]; groups: dicts with name,
    count, detail (classes), text (verdict, replay, minimized); known: dicts
    with name, detail; summary: the run's summary text."""
    reached = sum(1 for _, hit in bins if hit)
    verdict = (f'<p class=bad>{len(groups)} finding groups</p>' if groups else
               '<p class=ok>no findings' + (" beyond the known bugs" if known else "") + '</p>')
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{_e(title)}</title>"
             f"<style>{STYLE}</style></head><body>",
             f"<h1>{_e(title)}</h1>", "".join(f"<div class=meta>{_e(m)}</div>" for m in meta), verdict,
             "<h2>exec/s over time</h2>", svg_plot(rates(timeline)),
             f"<h2>Finding groups ({len(groups)})</h2>"]
    if not groups:
        parts.append("<p class=ok>none</p>")
    for g in groups:
        parts.append(f"<details open><summary class=bad>{_e(g['name'])}: {_e(g['count'])} cases</summary>"
                     f"<div class=meta>{_e(g['detail'])}</div><pre>{_e(g['text'])}</pre></details>")
    parts.append(f"<h2>Known bugs set aside ({len(known)})</h2>")
    parts.append("<p class=meta>none</p>" if not known else "<table>" + "".join(
        f"<tr><td class=known>{_e(k['name'])}</td><td>{_e(k['detail'])}</td></tr>" for k in known) + "</table>")
    parts.append(f"<h2>Semantic bins reached: {reached} of {len(bins)}</h2><div class=bins>" + "".join(
        f"<span class={'hit' if hit else 'miss'}>{_e(name)}</span>" for name, hit in bins) + "</div>")
    parts.append(f"<h2>Summary</h2><pre>{_e(summary)}</pre>")
    parts.append(f"<p class=meta>written {time.strftime('%Y-%m-%d %H:%M:%S')} by qcheck</p></body></html>")
    return "\n".join(parts)


def write_fuzz(path, result, target):
    """The page of a qcheck.fuzz run (a FuzzResult)."""
    from ..model.bins import bin_count, bin_name  # (here: the campaign runs this file as a script)
    groups = []
    for key, g in sorted(result.groups.items()):
        first = g.first
        text = first.saved_text()
        groups.append({"name": f"[{key}]", "count": g.count, "text": f"first case: {first.path}\n{text}",
                       "detail": "classes: " + ", ".join(f"{s} ({n})" for s, n in sorted(g.classes.items()))})
    known = [{"name": f"[{result.known_entries[e].signature}]",
              "detail": f"{g.count} cases" + (f": {result.known_entries[e].note}" if result.known_entries[e].note
                                               else "")} for e, g in sorted(result.known.items())]
    bins = ([(bin_name(i), i in result.bins) for i in range(bin_count())] if result.op == "fused_q" else
            [(name, True) for name in sorted(result.bins)])  # (another op's: the field bins reached)
    meta = [f"target {target}, op {result.op}", f"{result.executions} executions in {result.seconds:.1f} s, "
            f"{result.exec_per_second:.0f} exec/s" + (f", {result.workers} workers" if result.workers else "")]
    Path(path).write_text(page(f"qcheck.fuzz {target}", meta, result.timeline, bins, groups, known,
                               result.summary()))


def write_campaign(work, path):
    """The page of a C++ campaign from its work folder."""
    work = Path(work)
    timeline = [(0.0, 0)]
    progress = work / "progress.tsv"
    if progress.exists():
        for line in progress.read_text().splitlines():
            seconds, executions = line.split("\t")[:2]
            timeline.append((float(seconds), int(executions)))
    summary = (work / "summary.txt").read_text() if (work / "summary.txt").exists() else "(no summary.txt)"
    # The summary's bins lines: "  GROUP  n/N reached, ...  | missing: name, ..." (semantic_bins.cc;
    # a group's name may hold spaces: "T % 16", "mqa heads").
    bins, in_bins = [], False
    for line in summary.splitlines():
        if line.startswith("semantic bins reached"):
            in_bins = True
            continue
        m = re.match(r"^\s+(\S.*?)\s+(\d+)/(\d+)\s+(.*)$", line) if in_bins else None
        if in_bins and m is None:
            break
        if m:
            reached, _, missing = m[4].partition("| missing: ")
            for names, hit in ((reached, True), (missing, False)):
                bins += [(f"{m[1]} {n.strip()}", hit) for n in names.split(",") if n.strip() not in ("", "-")]
    groups, known = [], []
    rows = (work / "junit.tsv").read_text().splitlines() if (work / "junit.tsv").exists() else []
    for row in rows:
        name, result, _, message, text = (row.split("\t") + [""] * 5)[:5]
        if result == "fail":
            groups.append({"name": name, "count": message, "detail": "", "text": text.replace("\\n", "\n")})
        elif result == "skip":
            known.append({"name": name, "detail": message})
    first = summary.splitlines()[0] if summary else ""
    Path(path).write_text(page("qcheck fuzz campaign", [first, f"work folder {work}"], timeline, bins, groups,
                               known, summary))


def main(argv):
    if len(argv) == 3 and argv[0] == "campaign":
        write_campaign(argv[1], argv[2])
        return 0
    print("usage: html_report.py campaign WORK OUT.html", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
