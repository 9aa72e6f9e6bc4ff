"""The matrix's clients that are not librdkafka consumers, each as a member the scenarios
drive the way they drive a LabConsumer (start, close, kill; .name, .events, .assignment):

    JavaMember     Kafka's own org.apache.kafka.tools.VerifiableConsumer from the lab's jars
                   (classic range, or group.protocol=consumer); its JSON lines
                   partitions_assigned / partitions_revoked, with their own `timestamp`,
                   are the callbacks' ground truth
    ShareMember    one confluent-kafka ShareConsumer (KIP-932): no assignment callbacks
    StreamsMember  one instance of tests/java/StreamsGroupApp (KIP-1071)

Java starts slowly on a loaded machine: everything here waits on what the process prints,
with a deadline, never on a sleep.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "integration")]

from groupctl.lab import dist  # noqa: E402

VERIFIABLE = "org.apache.kafka.tools.VerifiableConsumer"
JVM = ("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
       "-XX:-UsePerfData", "-Dlog4j2.level=WARN")
KINDS = {"partitions_assigned": "assign", "partitions_revoked": "revoke"}


class JavaMember:
    """One VerifiableConsumer process. Its events follow LabConsumer's (ts in seconds,
    kind assign/revoke, partitions a frozenset of (topic, partition)); `assignment` is what
    its callbacks left it holding (eager: revoke all, assign all; consumer protocol:
    incremental)."""

    def __init__(self, lab, group: str, topic: str, name: str, protocol: str, workdir: Path,
                 instance_id: str | None = None):
        self.name, self.group, self.protocol = name, group, protocol
        self.events: list[SimpleNamespace] = []
        self.lines: list[dict] = []
        self.stderr: list[str] = []
        self._assignment: set[tuple[str, int]] = set()
        self._cond = threading.Condition()
        conf = workdir / f"{name}.properties"
        conf.write_text(f"client.id={name}\n")
        args = [dist.java_cmd(), *JVM, "-cp", str(Path(lab.libs) / "*"), VERIFIABLE,
                "--bootstrap-server", lab.bootstrap, "--topic", topic, "--group-id", group,
                "--group-protocol", protocol, "--command-config", str(conf),
                "--close-timeout", "10000"]
        if protocol == "classic":
            args += ["--session-timeout", "10000"]
        if instance_id:
            args += ["--group-instance-id", instance_id]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self._readers = [threading.Thread(target=self._read_out, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for t in self._readers:
            t.start()

    def start(self) -> "JavaMember":
        return self

    def _read_out(self) -> None:
        for line in self.proc.stdout:
            if not line.startswith("{"):
                continue
            try:
                item = json.loads(line)
            except ValueError:
                continue
            with self._cond:
                self.lines.append(item)
                kind = KINDS.get(item.get("name"))
                if kind:
                    parts = frozenset((p["topic"], p["partition"]) for p in item.get("partitions", ()))
                    if kind == "assign":
                        self._assignment |= parts
                    else:
                        self._assignment -= parts
                    self.events.append(SimpleNamespace(ts=item["timestamp"] / 1000, kind=kind,
                                                       partitions=parts))
                self._cond.notify_all()

    def _read_err(self) -> None:
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip())
            del self.stderr[:-40]

    @property
    def assignment(self) -> frozenset:
        with self._cond:
            return frozenset(self._assignment)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def _raise_failure(self) -> None:
        if self.proc.poll() is not None and not any(i.get("name") == "shutdown_complete"
                                                      for i in self.lines):
            raise AssertionError(f"{self.name} exited {self.proc.returncode}: "
                                 + " / ".join(self.stderr[-5:]))

    def begin_close(self) -> None:
        if self.running:
            self.proc.terminate()   # its shutdown hook closes the consumer: it leaves the group

    def close(self, timeout: float = 30) -> None:
        self.begin_close()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
            raise AssertionError(f"{self.name} did not stop on SIGTERM in {timeout:g}s") from None
        finally:
            for t in self._readers:
                t.join(5)

    def kill(self) -> None:
        """SIGKILL: no leave, the broker drops it at its session's end."""
        self.proc.kill()
        self.proc.wait(10)
        for t in self._readers:
            t.join(5)


def member(ctx, name: str, opts: dict):
    """ctx's member `name` of the client its options name (truth_scenarios.CLIENTS)."""
    full = f"{ctx.group}-{name}"
    if "java" in opts:
        return JavaMember(ctx.lab, ctx.group, ctx.topic, full, opts["java"], ctx.workdir,
                          instance_id=opts.get("instance_id"))
    if opts["kind"] == "share":
        return ShareMember(ctx.lab, ctx.group, ctx.topic, full, kill=opts.get("kill", False))
    return StreamsMember(ctx.lab, ctx.group, ctx.topic, full, ctx.workdir)


# ---- share (KIP-932) and streams (KIP-1071) members -----------------------------------------

class ShareMember:
    """One confluent-kafka ShareConsumer polling on its own thread (implicit
    acknowledgement); close() leaves the group. kill=True runs it in a process of its own
    (kill(): SIGKILL, no leave: the broker fences it at its session's end)."""

    SCRIPT = ("import sys\nfrom confluent_kafka import ShareConsumer\n"
              "c = ShareConsumer({'bootstrap.servers': sys.argv[1], 'group.id': sys.argv[2],"
              " 'client.id': sys.argv[4], 'log_level': 2})\nc.subscribe([sys.argv[3]])\n"
              "print('subscribed', flush=True)\nwhile True:\n    c.poll(0.2)\n")

    def __init__(self, lab, group: str, topic: str, name: str, kill: bool = False):
        self.name, self.events = name, []
        self.assignment: frozenset = frozenset()
        self.proc = None
        if kill:
            self.proc = subprocess.Popen([sys.executable, "-c", self.SCRIPT, lab.bootstrap, group,
                                          topic, name], stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL)
            return
        from group_types_support import ShareMembers

        self._members = ShareMembers(lab.bootstrap, group, topic, n=1, name=name.rsplit("-", 1)[-1])

    def start(self):
        return self

    @property
    def running(self) -> bool:
        if self.proc is not None:
            return self.proc.poll() is None
        return not self._members._stop.is_set()

    def begin_close(self) -> None:
        if self.proc is None:
            self._members._stop.set()
        elif self.running:
            self.proc.terminate()

    def close(self, timeout: float = 30) -> None:
        if self.proc is None:
            self._members.close(timeout)
        else:
            self.kill()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


class StreamsMember:
    """One StreamsGroupApp instance (tests/java): `states` its KafkaStreams states;
    close() (stdin EOF) leaves the group, kill() is SIGKILL."""

    def __init__(self, lab, group: str, topic: str, name: str, workdir: Path):
        import socket

        from group_types_support import StreamsApp

        with socket.socket() as s:   # an endpoint of its own (the app only names it)
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.name, self.events = name, []
        self.assignment: frozenset = frozenset()
        self.app = StreamsApp(lab.bootstrap, group, topic, f"{topic}-out", workdir / name,
                              f"localhost:{port}")

    def start(self):
        return self

    @property
    def running(self) -> bool:
        return self.app.proc.poll() is None

    def begin_close(self) -> None:
        if self.running and not self.app.proc.stdin.closed:
            self.app.proc.stdin.close()

    def close(self, timeout: float = 60) -> None:
        self.app.close(timeout)

    def kill(self) -> None:
        self.app.proc.kill()
        self.app.proc.wait(10)
