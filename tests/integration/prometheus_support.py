"""A real Prometheus server for the metrics tests: Debian's /usr/bin/prometheus (installed
by `./dev setup`), on 127.0.0.1 on a free port, its data in a temp dir, scraping the
given targets; queried through its HTTP API; stopped by its pid.

    prom = PrometheusServer.start(tmp_path, ["127.0.0.1:9308"], scrape_interval="1s")
    prom.query('sum(groupctl_group_rebalances_total{group="g"})', at=t)   # instant vector
    prom.samples('groupctl_up', seconds=600)        # {labels: [(t, v), ...]} (raw samples)
    prom.stop()

Missing prometheus is a failure, never a skip (the suite needs it, as promtool)."""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from waiting import wait_until

BINARY = "/usr/bin/prometheus"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PrometheusServer:
    def __init__(self, proc: subprocess.Popen, port: int, root: Path):
        self.proc, self.port, self.root = proc, port, root
        self.base = f"http://127.0.0.1:{port}"

    @classmethod
    def start(cls, root: Path, targets: list[str], *, scrape_interval: str = "1s",
              job: str = "groupctl") -> "PrometheusServer":
        binary = shutil.which("prometheus") or BINARY
        assert Path(binary).exists(), "prometheus is missing: ./dev setup installs Debian's package"
        root.mkdir(parents=True, exist_ok=True)
        config = root / "prometheus.yml"
        config.write_text(json.dumps({   # YAML is a superset of JSON
            "global": {"scrape_interval": scrape_interval, "scrape_timeout": scrape_interval,
                       "evaluation_interval": scrape_interval},
            "scrape_configs": [{"job_name": job, "static_configs": [{"targets": targets}]}],
        }))
        port = _free_port()
        log = open(root / "prometheus.log", "wb")
        proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={root / 'data'}",
             f"--web.listen-address=127.0.0.1:{port}", "--log.level=info"],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        server = cls(proc, port, root)
        try:
            wait_until(server._ready, 60, f"prometheus ready on 127.0.0.1:{port}")
        except BaseException:
            server.stop()
            raise
        return server

    def _ready(self):
        assert self.proc.poll() is None, f"prometheus exited: {self.log()[-2000:]}"
        try:
            with urllib.request.urlopen(self.base + "/-/ready", timeout=5) as r:
                return r.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def log(self) -> str:
        return (self.root / "prometheus.log").read_text(errors="replace")

    def stop(self) -> None:
        """SIGTERM by pid, SIGKILL if it does not end within 30 s."""
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)

    # ---- the HTTP API ------------------------------------------------------------------
    def api(self, path: str, **params) -> dict:
        url = f"{self.base}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=30) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str, at: float | None = None) -> dict[tuple, float]:
        """An instant query: {sorted label pairs: value}."""
        params = {"query": expr, **({"time": f"{at:.3f}"} if at is not None else {})}
        data = self.api("query", **params)
        assert data["resultType"] == "vector", data
        return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in data["result"]}

    def samples(self, selector: str, seconds: int = 600,
                at: float | None = None) -> dict[tuple, list[tuple[float, float]]]:
        """The raw samples of `selector` over the last `seconds` (a range vector)."""
        params = {"query": f"{selector}[{seconds}s]",
                  **({"time": f"{at:.3f}"} if at is not None else {})}
        data = self.api("query", **params)
        assert data["resultType"] == "matrix", data
        return {tuple(sorted(r["metric"].items())): [(float(t), float(v)) for t, v in r["values"]]
                for r in data["result"]}

    def targets_up(self) -> list[dict]:
        return self.api("targets")["activeTargets"]


def wait_scraped(prom: PrometheusServer, what: str, timeout: float = 60):
    """Until Prometheus has scraped its target successfully once."""
    return wait_until(lambda: [t for t in prom.targets_up() if t["health"] == "up"], timeout,
                      f"a successful scrape of {what}")
