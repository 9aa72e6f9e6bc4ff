"""analyze's report.html: the per-group table, the most useful part, comes first and fits a
1400 px window (long column names and reasons wrap), measured by headless Chromium; and
the terminal summary in a pipe is not cut to 80 columns."""
from __future__ import annotations

import io
import re
import shutil
import subprocess

from rich.console import Console

from groupctl.analytics.report import write_report
from groupctl.analytics.schema import GROUP_METRIC_COLUMNS
from groupctl.render.analyze import summary_table

COLUMNS = GROUP_METRIC_COLUMNS   # every column the metrics table has, as analyze writes it
REASON = ("Leader consumer-1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa re-joining group during "
          "Stable; client reason: rebalance failed due to UnjoinedMemberException: the "
          "member did not join in time")


def metrics(n: int = 3) -> list[dict]:
    return [{**{c: 12_345_678 for c in COLUMNS}, "group": f"harvest-classic-1795439393-{i}",
             "type": "classic", "top_reason": REASON, "first_seen": "2026-11-24T05:51:26Z",
             "last_seen": "2026-11-24T06:51:26Z"} for i in range(n)]


def test_the_group_table_comes_first_and_fits_1400_px(tmp_path):
    report = tmp_path / "report.html"
    write_report(report, {"episodes": [], "storms": [], "moves": [], "metrics": metrics()}, "t")
    text = report.read_text()
    assert text.index("<h2>Groups</h2>") < text.index('id="timeline"')
    measured = tmp_path / "measured.html"   # the page's width, written into its title
    measured.write_text(text.replace("</body></html>", "<script>document.title = 'WIDTH ' + "
                                     "document.documentElement.scrollWidth;</script></body></html>"))
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is missing: ./dev setup installs Debian's chromium package"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          "--window-size=1400,1100", "--virtual-time-budget=1000", "--dump-dom",
                          measured.as_uri()], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    width = int(re.search(r"<title>WIDTH (\d+)</title>", dom).group(1))
    assert width <= 1400


def test_the_summary_in_a_pipe_is_not_cut_to_80_columns():
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, no_color=True, soft_wrap=True)
    summary_table(console, {"metrics": metrics(1), "episodes": [], "storms": [],
                            "out": "o", "report": "o/report.html"}, False)
    lines = out.getvalue().splitlines()
    header = next(line for line in lines if line.lstrip("│┃ ").startswith("GROUP"))
    assert "TIME MS" in header and "TOP REASON" in header and "…" not in out.getvalue()
    assert REASON in out.getvalue() and "12345678" in out.getvalue()


def test_the_summary_tells_the_unowned_totals_as_bounds():
    rows = [{**m, "group": g, "unowned_min_ms_total": low, "unowned_max_ms_total": high}
            for m, (g, low, high) in zip(metrics(4), (("a", 66, None), ("b", 320, 1600),
                                                      ("c", None, 900), ("d", 50, 50)))]
    rows.append({**metrics(1)[0], "group": "e", "unowned_min_ms_total": None,
                 "unowned_max_ms_total": None})
    out = io.StringIO()
    summary_table(Console(file=out, force_terminal=False, no_color=True, width=400),
                  {"metrics": rows, "episodes": [], "storms": [], "out": "o",
                   "report": "o/report.html"}, False)
    assert ("Partitions unowned, as groupctl's records bound it: b (320-1600 ms), "
            "a (at least 66 ms), d (50 ms), c (at most 900 ms)") in out.getvalue()


def test_the_summary_tells_the_time_rebalancing_its_rounds_prove():
    def group(name, best, low, high, untimed=0):
        return {**metrics(1)[0], "group": name, "rebalances": 3, "rebalances_untimed": untimed,
                "time_rebalancing_ms": best, "time_rebalancing_min_ms": low,
                "time_rebalancing_max_ms": high}
    rows = [group("a", 1150, 800, 1500), group("b", 1550, 1300, None),
            group("c", 600, 600, 600), group("d", 90, None, None, untimed=2),
            group("e", None, None, 10370, untimed=3)]
    out = io.StringIO()
    summary_table(Console(file=out, force_terminal=False, no_color=True, width=400),
                  {"metrics": rows, "episodes": [], "storms": [], "out": "o",
                   "report": "o/report.html"}, False)
    assert ("Most time rebalancing: b (1550 ms, at least 1300 ms), a (1150 ms, proven "
            "800-1500 ms), c (600 ms), d (90 ms over 1 of 3 rebalances), "
            "e (- ms, at most 10370 ms)") in out.getvalue()
