"""groupctl's witnesses of the scenarios' groups, all running at once while the scenarios run
(one lab, one run, every witness):

    describe-0.5   watch -o ndjson --interval 0.5
    describe-1     watch -o ndjson --interval 1 --metrics-port 0 (and its /metrics: `metrics`)
    records        watch --source records -o ndjson
    auto           watch --source auto --interval 0.5 -o ndjson (the records and describe)
    history        history -o ndjson, after the fact
    probe          join --watch -o ndjson (only where a scenario puts the probe in its group)

Each is started before the groups exist, so it sees each group from its first round.
"""
from __future__ import annotations

import io
import json
import re
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from watch_support import WatchProcess  # noqa: E402

WATCHES = {   # name -> (interval in seconds or None for records, extra args)
    # the source named: a new default source must not change what these columns hold
    "describe-0.5": (0.5, ("--source", "describe", "--interval", "0.5")),
    "describe-1": (1.0, ("--source", "describe", "--interval", "1", "--metrics-port", "0")),
    "records": (None, ("--source", "records")),
    "auto": (None, ("--source", "auto", "--interval", "0.5")),   # the records' rounds
}
_PORT = re.compile(r"serving metrics on http://[^:]+:(\d+)/metrics")
_SAMPLE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$')


@dataclass
class Reading:
    """What one witness told of the groups: its events and summaries per group."""
    name: str
    interval: float | None
    events: dict[str, list[dict]] = field(default_factory=dict)
    summaries: dict[str, dict] = field(default_factory=dict)
    stderr: str = ""

    def of(self, group: str, kind: str | None = None) -> list[dict]:
        return [e for e in self.events.get(group, ()) if kind is None or e["event"] == kind]


class Watches:
    """The watch witnesses of a set of groups, as processes."""

    def __init__(self, lab, groups: list[str]):
        self.groups = groups
        self.procs = {name: WatchProcess(lab, *args, *groups)
                      for name, (_, args) in WATCHES.items()}

    def metrics_port(self) -> int | None:
        m = _PORT.search(self.procs["describe-1"].stderr())
        return int(m.group(1)) if m else None

    def told_empty(self, group: str) -> bool:
        """Every watch has told the group Empty (or Dead) after telling it has members."""
        for proc in self.procs.values():
            states = [e["state"] for e in proc.events
                      if e["group"] == group and e["event"] in ("state", "snapshot")]
            if not states or states[-1] not in ("Empty", "Dead") or len(states) < 2:
                return False
        return True

    def scrape(self) -> str:
        port = self.metrics_port()
        if port is None:
            return ""
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            return r.read().decode()

    def stop(self) -> dict[str, Reading]:
        metrics = self.scrape()
        out = {}
        for name, proc in self.procs.items():
            proc.stop()
            out[name] = reading(name, WATCHES[name][0], proc.out.items, proc.stderr())
        out["metrics"] = Reading("metrics", 1.0)
        out["metrics"].summaries = parse_metrics(metrics)
        return out


def reading(name: str, interval: float | None, lines: list[dict], stderr: str = "") -> Reading:
    r = Reading(name, interval, stderr=stderr)
    for item in lines:
        if "event" in item:
            r.events.setdefault(item["group"], []).append(item)
        elif "summary" in item:
            r.summaries[item["summary"]["group"]] = item["summary"]
    return r


def parse_metrics(text: str) -> dict[str, dict]:
    """{group: {metric name: summed value}} of the group series in a /metrics text; each
    metric is summed over its other labels (reason, basis, ...)."""
    out: dict[str, dict] = {}
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(2)))
        if "group" not in labels or labels.get("le"):
            continue
        per = out.setdefault(labels["group"], {})
        per[m.group(1)] = per.get(m.group(1), 0.0) + float(m.group(3))
    return out


def history(lab, groups: list[str]) -> Reading:
    """`history -o ndjson` of the groups, in-process."""
    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", lab.bootstrap, "--timeout", "30", "-o", "ndjson", "history", *groups], env)
    lines = [json.loads(ln) for ln in env.stdout.getvalue().splitlines() if ln.startswith("{")]
    r = reading("history", None, lines, env.stderr.getvalue())
    if code != 0:
        r.stderr = f"exit {code}: {r.stderr}"
    return r
