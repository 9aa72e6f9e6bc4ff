"""A Spark standalone cluster on 127.0.0.1 from the pyspark install: one master and N
workers (each its own JVM), for the tests and bench/analyze.py. Started with Spark's own
`spark-class` launcher, waited on through the master's JSON status page, stopped by pid.

    with StandaloneCluster(workers=2, root=tmpdir) as cluster:
        run(master=cluster.url)
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

from ..errors import DeadlineError
from .session import log4j_file


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class StandaloneCluster:
    def __init__(self, workers: int = 2, root: Path | str = ".", cores_per_worker: int = 1,
                 memory: str = "1g", start_timeout: float = 90.0):
        self.workers = workers
        self.root = Path(root)
        self.cores = cores_per_worker
        self.memory = memory
        self.start_timeout = start_timeout
        self.port = _free_port()
        self.ui_port = _free_port()
        self.procs: list[subprocess.Popen] = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _env(self) -> dict:
        home = spark_home()
        env = dict(os.environ, SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_LOG_DIR=str(self.root / "logs"), SPARK_NO_DAEMONIZE="1",
                   SPARK_DAEMON_JAVA_OPTS=f"-Dlog4j2.configurationFile=file:{log4j_file()}",
                   SPARK_WORKER_DIR=str(self.root / "work"))
        return env

    def _spawn(self, name: str, *args: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        out = open(self.root / f"{name}.out", "w")
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        self.procs.append(subprocess.Popen(cmd, env=self._env(), stdin=subprocess.DEVNULL,
                                           stdout=out, stderr=subprocess.STDOUT,
                                           start_new_session=True))

    def start(self) -> "StandaloneCluster":
        self._spawn("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui_port))
        for i in range(self.workers):
            self._spawn(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", self.url,
                        "--host", "127.0.0.1", "--cores", str(self.cores), "--memory",
                        self.memory, "--webui-port", str(_free_port()),
                        "--work-dir", str(self.root / f"work-{i}"))
        self.wait_workers(self.workers)
        return self

    def status(self) -> dict | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as r:
                return json.loads(r.read())
        except Exception:  # not up yet
            return None

    def wait_workers(self, count: int) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            for p in self.procs:
                if p.poll() is not None:
                    # p.args: the list[str] we gave Popen (typeshed: any command form)
                    daemon: str = p.args[1]  # type: ignore[index,assignment]
                    raise DeadlineError(f"a Spark daemon exited ({daemon}); see {self.root}")
            status = self.status()
            if status and status.get("aliveworkers", 0) >= count:
                return
            time.sleep(0.2)
        self.stop()
        raise DeadlineError(f"Spark standalone cluster not up in {self.start_timeout:g}s; "
                            f"see {self.root}")

    def stop(self, timeout: float = 20.0) -> None:
        """Workers first, then the master: SIGTERM by pid, SIGKILL after `timeout`."""
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for p in reversed(self.procs):
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(5)
        self.procs.clear()

    def __enter__(self) -> "StandaloneCluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
