"""The HTML report (qcheck.reports.html_report): self-contained, with the plot, the bins,
the finding groups and the known bugs; opened in headless Chromium (Debian's
package), screenshot taken and the page's text read back.

Everything the Chromium test reads back is also checked without a browser
(Python's HTML parser, test_the_page_holds_...), so a host with no browser
(the GPU host) checks the page's content all the same; only the rendering
needs Chromium. There the GPU gate deselects that one test by name and says
so in its pytest line (run_gpu_gate.sh, step 1c): a skip would fail the
gate. CI has Chromium (tools/setup/packages.txt) and runs it."""

import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

import qcheck
from qcheck.reports import html_report as report
from qcheck.model.bins import bin_count

import adapters

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page(HTMLParser):
    """The page's visible text and every URL-bearing attribute."""

    def __init__(self):
        super().__init__()
        self.text, self.urls, self.tags = [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.urls += [v for k, v in attrs if k in ("src", "href", "xlink:href") and v]

    def handle_data(self, data):
        self.text.append(data)


def fuzz_two_bugs(tmp_path):
    known = [qcheck.Known("index_weights_out/*", note="the first weight's last bit")]
    return qcheck.fuzz(adapters.two_bugs, minutes=2.5 / 60, max_findings=10000, findings=tmp_path / "findings",
                       progress=False, known=known, compile_aware=False)


def test_the_page_holds_the_plot_bins_groups_and_known_bugs_and_nothing_from_outside(tmp_path):
    result = fuzz_two_bugs(tmp_path)
    assert result.groups and result.known and len(result.timeline) >= 3
    path = tmp_path / "report.html"
    result.write_html(path, "adapters:two_bugs")
    page = Page()
    page.feed(path.read_text())
    text = " ".join(page.text)
    assert page.urls == [] and "script" not in page.tags and "link" not in page.tags  # self-contained
    assert "qcheck.fuzz adapters:two_bugs" in text  # the title and heading
    assert "target adapters:two_bugs, op fused_q" in text
    assert "svg" in page.tags and "polyline" in page.tags  # the exec/s plot
    assert f"Semantic bins reached: {len(result.bins)} of {bin_count()}" in text
    assert f"Finding groups ({len(result.groups)})" in text and "Known bugs set aside (1)" in text
    for key, group in result.groups.items():
        assert f"[{key}]: {group.count} cases" in text
    assert "replay: python -m qcheck replay" in text and "the first weight's last bit" in text


def test_the_rates_come_from_the_samples():
    assert report.rates([(0.0, 0), (1.0, 100), (3.0, 500)]) == [(1.0, 100.0), (3.0, 200.0)]
    # A last sample 1 s after one taken 15 s apart (the workers stopping) is merged with the interval before.
    assert report.rates([(0, 0), (15, 150), (30, 300), (31, 305)]) == [(15, 10.0), (31, 155 / 16)]
    assert "no rate samples" in report.svg_plot([])


@pytest.mark.skipif(CHROMIUM is None, reason="chromium (Debian's package) is not installed")
def test_chromium_renders_the_page(tmp_path):
    result = fuzz_two_bugs(tmp_path)
    path = tmp_path / "report.html"
    result.write_html(path, "adapters:two_bugs")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}"]
    shot = tmp_path / "report.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,1400", path.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10000
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", path.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    assert "qcheck.fuzz adapters:two_bugs" in dom and re.search(r"Finding groups \(\d+\)", dom)
    assert "Known bugs set aside (1)" in dom and "<polyline" in dom


def test_the_campaign_page_reads_the_work_folder(tmp_path):
    (tmp_path / "progress.tsv").write_text("15\t3000\n30\t7500\n")
    (tmp_path / "summary.txt").write_text(
        "==== campaign summary: mode default, 30s of 1 min ====\n\nsemantic bins reached by the fused_q corpus:\n"
        "semantic bins reached: 5 of 7\n  tokens              2/3  T=0, T=1  | missing: T>64\n"
        "  T % 16              3/4  0, 1, 2  | missing: 3\n\nno findings\n")
    (tmp_path / "junit.tsv").write_text("finding group [cpu-bug | query_out/rope]\tfail\t0\t4 artifacts\t"
                                        "  4 x [cpu-bug | query_out/rope]\\n    replay: qcheck-replay A\n"
                                        "known [cpu-other | x]\tskip\t0\t2 artifacts covered by k.json\t\n")
    report.write_campaign(tmp_path, tmp_path / "report.html")
    page = Page()
    page.feed((tmp_path / "report.html").read_text())
    text = " ".join(page.text)
    assert "Semantic bins reached: 5 of 7" in text and "T % 16 3" in text and "tokens T>64" in text
    assert "Finding groups (1)" in text and "replay: qcheck-replay A" in text and "Known bugs set aside (1)" in text
    assert "polyline" in page.tags and page.urls == []
