"""The pictures of the docs site, taken from a real lab run (docs/images/).

    GROUPCTL_LAB_HOME=$(mktemp -d) groupctl lab up --name pics
    groupctl lab workload --name pics --group orders --topic orders --consumers 3 \
        --partitions 6 --churn 8 &
    groupctl lab workload --name pics --group payments --topic payments --consumers 3 \
        --partitions 6 --protocol consumer --churn 11 &
    python docs/tools/pictures.py -b 127.0.0.1:PORT --broker-log .../node-1/logs/server.log
    groupctl lab down --name pics

What it takes:
- `watch-live.svg`: the live view of `watch orders payments` (its full view, as a terminal
  shows it), drawn by groupctl's own renderer (render/watch.py) from the events of a real
  `watch --all -o ndjson` over the lab, at the time of its last event;
- `watch-top.svg`: the fleet view (`watch --all`'s top view, render/top.py) of the same
  events;
- `describe.svg`: `describe` of the KIP-848 group, rendered by render/groups.py from a
  real `describe -o json`;
- `analyze-report.png`: headless Chromium's screenshot of `analyze`'s report.html over
  the lab broker's log and the recorded events (as tests/analytics/test_analyze_cli.py
  takes one).

The SVGs are rich's console recordings (`Console(record=True)`, `export_svg`).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

from rich.console import Console

from groupctl.render.groups import describe_tables
from groupctl.render.top import render_top
from groupctl.render.watch import WatchModel, render_models

IMAGES = Path(__file__).resolve().parents[1] / "images"
WIDTH = 118


def groupctl(*args: str, timeout: float = 120) -> str:
    exe = Path(sys.executable).with_name("groupctl")
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise SystemExit(f"groupctl {' '.join(args)}: exit {done.returncode}\n{done.stderr}")
    return done.stdout


def _epoch(ts: str) -> float:
    return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()


def _console() -> Console:
    return Console(record=True, width=WIDTH, force_terminal=True, color_system="truecolor",
                   highlight=False, file=open("/dev/null", "w"))


def _save(console: Console, name: str, title: str) -> Path:
    path = IMAGES / name
    path.write_text(console.export_svg(title=title))
    return path


def record_watch(bootstrap: str, seconds: int, events_file: Path) -> list[dict]:
    text = groupctl("-b", bootstrap, "watch", "--all", "-o", "ndjson", "--duration",
                    str(seconds), timeout=seconds + 60)
    events_file.write_text(text)
    return [json.loads(line) for line in text.splitlines()
            if line.startswith("{") and '"event"' in line]


def watch_pictures(events: list[dict], live_groups: list[str]) -> list[Path]:
    models: dict[str, WatchModel] = {}
    for e in events:
        models.setdefault(e["group"], WatchModel()).apply(e)
    now = _epoch(events[-1]["ts"]) + 0.5
    live = _console()
    live.print(render_models({g: models[g] for g in live_groups if g in models}, now,
                             width=WIDTH))   # as a terminal of that width draws it
    top = _console()
    top.print(render_top([m.status for m in models.values()], now, WIDTH, 16, False))
    return [_save(live, "watch-live.svg", "groupctl watch " + " ".join(live_groups)),
            _save(top, "watch-top.svg", "groupctl watch --all")]


def describe_picture(bootstrap: str, group: str) -> Path:
    data = json.loads(groupctl("-b", bootstrap, "describe", group, "-o", "json"))
    console = _console()
    describe_tables(console, data, False)
    return _save(console, "describe.svg", f"groupctl describe {group}")


def analyze_picture(broker_log: str, events_file: Path, work: Path) -> Path:
    out = work / "analysis"
    groupctl("analyze", "--broker-logs", broker_log, "--events", str(events_file),
             "--out", str(out), timeout=600)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        raise SystemExit("chromium is missing (./dev setup installs Debian's chromium)")
    shot = IMAGES / "analyze-report.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--window-size=1400,1100",
                    "--virtual-time-budget=10000", f"--screenshot={shot}",
                    (out / "report.html").as_uri()], capture_output=True, timeout=120,
                   check=True)
    return shot


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-b", "--bootstrap-server", required=True)
    parser.add_argument("--broker-log", required=True, help="the lab broker's server.log")
    parser.add_argument("--seconds", type=int, default=40, help="how long to watch")
    parser.add_argument("--live-groups", default="orders,payments")
    parser.add_argument("--describe-group", default="payments")
    args = parser.parse_args(argv)
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        events = record_watch(args.bootstrap_server, args.seconds, work / "events.ndjson")
        made = watch_pictures(events, args.live_groups.split(","))
        made.append(describe_picture(args.bootstrap_server, args.describe_group))
        made.append(analyze_picture(args.broker_log, work / "events.ndjson", work))
    for path in made:
        print(f"wrote {path.relative_to(IMAGES.parents[1])}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
