"""Peers for the share / streams / mixed group tests, none written by groupctl:

    ShareMembers(bootstrap, group, topic, n=2)   n confluent-kafka ShareConsumers (client ids
                                                 GROUP-share-1.., GROUP-NAME-1.. with name=),
                                                 each polling (implicit acknowledgement) on
                                                 its own thread; .close() leaves the group
    StreamsApp(bootstrap, app_id, input, output, state_dir, endpoint)
                                                 one instance of tests/java/StreamsGroupApp
                                                 (Kafka Streams, group.protocol=streams),
                                                 compiled once with javac against
                                                 kafka-streams from Maven Central
    streams_tasks(text)                          StreamsGroupCommand's ASSIGNMENTS cell
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from groupctl.lab.dist import cache_root, java_cmd, streams_libs

APP_SOURCE = Path(__file__).resolve().parents[1] / "java" / "StreamsGroupApp.java"


# ---- share consumers ------------------------------------------------------------------------

class ShareMembers:
    """`n` confluent-kafka ShareConsumers in `group`, subscribed to `topic`. Each polls on
    its own thread (a ShareConsumer is not thread-safe) and counts the records it got."""

    def __init__(self, bootstrap: str, group: str, topic: str, n: int = 2, name: str = "share"):
        from confluent_kafka import ShareConsumer

        self._stop = threading.Event()
        self.received = [0] * n
        self.errors: list[str] = []
        self.client_ids = [f"{group}-{name}-{i + 1}" for i in range(n)]
        self._consumers = [ShareConsumer({"bootstrap.servers": bootstrap, "group.id": group,
                                          "client.id": cid}) for cid in self.client_ids]
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True,
                                          name=cid) for i, cid in enumerate(self.client_ids)]
        for c in self._consumers:
            c.subscribe([topic])
        for t in self._threads:
            t.start()

    def _run(self, i: int) -> None:
        consumer = self._consumers[i]
        try:
            while not self._stop.is_set():
                for msg in consumer.poll(0.2):
                    if msg.error() is None:
                        self.received[i] += 1
        except Exception as exc:  # noqa: BLE001 - reported by close()
            self.errors.append(f"{self.client_ids[i]}: {exc}")
        finally:
            consumer.close()  # acknowledges and leaves the share group

    def close(self, timeout: float = 30) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout)
        alive = [t.name for t in self._threads if t.is_alive()]
        assert not alive and not self.errors, (alive, self.errors)


# ---- the Kafka Streams application --------------------------------------------------------------

def app_classes() -> tuple[Path, Path]:
    """(kafka-streams libs, compiled classes dir) — javac runs once per source version,
    into a temp dir renamed into place, so parallel sessions never see half a build."""
    libs = streams_libs()
    digest = hashlib.sha256(APP_SOURCE.read_bytes()).hexdigest()[:16]
    classes = cache_root() / "kafka-streams" / f"app-{digest}"
    if (classes / "StreamsGroupApp.class").is_file():
        return libs, classes
    classes.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".app-", dir=classes.parent))
    javac = Path(java_cmd()).with_name("javac")
    javac = str(javac) if javac.exists() else (shutil.which("javac") or "javac")
    proc = subprocess.run([javac, "-d", str(tmp), "-cp", f"{libs}/*", str(APP_SOURCE)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"javac failed:\n{proc.stdout}{proc.stderr}"
    try:
        os.rename(tmp, classes)
    except OSError:  # another session finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return libs, classes


class StreamsApp:
    """One instance of StreamsGroupApp. Its stdout lines `STATE <state>` are collected;
    closing its stdin stops it cleanly (KafkaStreams.close() leaves the group)."""

    def __init__(self, bootstrap: str, app_id: str, input_topic: str, output_topic: str,
                 state_dir: Path, endpoint: str):
        libs, classes = app_classes()
        self.states: list[str] = []
        self.stderr: list[str] = []
        self.proc = subprocess.Popen(
            [java_cmd(), "-Xmx256m", "-XX:+UseSerialGC", "-cp", f"{libs}/*{os.pathsep}{classes}",
             "StreamsGroupApp", bootstrap, app_id, input_topic, output_topic, str(state_dir),
             endpoint],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self._readers = [threading.Thread(target=self._read, args=(self.proc.stdout, True),
                                          daemon=True),
                         threading.Thread(target=self._read, args=(self.proc.stderr, False),
                                          daemon=True)]
        for t in self._readers:
            t.start()

    def _read(self, stream, is_stdout: bool) -> None:
        for line in stream:
            if is_stdout and line.startswith("STATE "):
                self.states.append(line.split()[1])
            elif not is_stdout:
                self.stderr.append(line.rstrip())

    @property
    def state(self) -> str | None:
        return self.states[-1] if self.states else None

    def wait_running(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while self.state != "RUNNING":
            if self.state in ("ERROR", "CLOSED") or self.proc.poll() is not None:
                raise AssertionError(f"streams app failed: {self.states}\n" +
                                     "\n".join(self.stderr[-30:]))
            if time.monotonic() > deadline:
                raise AssertionError(f"streams app not RUNNING in {timeout}s: {self.states}")
            time.sleep(0.1)

    def close(self, timeout: float = 60) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                raise AssertionError("streams app did not stop on stdin EOF") from None
        for t in self._readers:
            t.join(5)


# ---- Kafka's tools' tables --------------------------------------------------------------------

_TASK = re.compile(r"^([\w-]+):\[([\d,]*)\];?$")


def streams_tasks(text: str) -> dict[str, dict[str, list[int]]]:
    """'ACTIVE: 0:[1,3]; 1:[1,3]; TARGET-ACTIVE: 0:[1,3];' ->
    {"ACTIVE": {"0": [1, 3], "1": [1, 3]}, "TARGET-ACTIVE": {"0": [1, 3]}}."""
    out: dict[str, dict[str, list[int]]] = {}
    kind = None
    for token in text.split():
        if token.endswith(":") and token[:-1].replace("-", "").isupper():
            kind = token[:-1]
            out.setdefault(kind, {})
            continue
        m = _TASK.match(token)
        assert m and kind, f"unexpected token {token!r} in {text!r}"
        out[kind][m.group(1)] = [int(p) for p in m.group(2).split(",") if p]
    return out


def tasks_by_kind(member: dict) -> dict[str, dict[str, list[int]]]:
    """A groupctl streams member's tasks in streams_tasks' shape (empty kinds left out)."""
    out = {}
    for label, key in (("", "tasks"), ("TARGET-", "target_tasks")):
        for kind in ("active", "standby", "warmup"):
            tasks = {t["subtopology_id"]: t["partitions"] for t in member[key][kind]
                     if t["partitions"]}
            if tasks:
                out[label + kind.upper()] = tasks
    return out
