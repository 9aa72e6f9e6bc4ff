"""The local lab cluster: `lab up`, `lab status`, `lab down`, also used by the test suite.

    lab = Lab.up(brokers=1)            # returns when Metadata lists every broker
    lab.bootstrap, lab.log_file, lab.libs
    lab.down()

A lab lives in ``<lab root>/<name>/`` (lab root: ``$GROUPCTL_LAB_HOME`` or
``~/.cache/groupctl/lab``): ``state.json`` (pids, ports, dirs, bootstrap), ``log4j2.xml``
and one ``node-<id>/`` per node with ``server.properties``, ``data/`` and
``logs/server.log`` (Kafka's layout, group coordinator INFO lines included) and
``logs/stdout.log`` (the JVM's own output). Operations on one lab name hold an flock on
``<lab root>/.<name>.lock``; the kernel drops it when the process ends, so it never goes stale.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
import re
import shutil
import signal
import tempfile
from pathlib import Path

from .. import jvm_cds
from ..errors import LabError, UsageError
from ..safe_files import write_atomic
from . import dist, process, tools
from . import sasl as labsasl
from . import tls as labtls
from .config import (
    LOG4J2_XML, LOG4J_PROPERTIES, NodeLayout, dynamic_quorum, initial_controllers,
    kafka_uuid, server_properties,
)
from .ready import metadata_brokers, secure_listeners_ready
from .state import (
    DEFAULT_NAME, LabState, NodeState, already_running, check_name, check_writable, lab_root,
)

START_TIMEOUT = 120.0
JVM_OPTS = (
    "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC",  # small heap, no GC threads on a 2-core box
    "-XX:TieredStopAtLevel=1",                   # C1 only: starts faster, plenty for a lab
    "-Xss512k", "-Xshare:auto", "-XX:-UsePerfData",
    "-Xlog:disable", "-Xlog:all=warning:stderr",  # JVM warnings to stdout.log's stderr
    "-Djava.awt.headless=true", "-Djava.net.preferIPv4Stack=true",
)


class Lab(LabState):
    """A lab cluster to start, stop and ask (what state.json records: state.LabState)."""

    # --- lifecycle ---------------------------------------------------------------
    @classmethod
    def up(cls, name: str = DEFAULT_NAME, brokers: int = 1, port: int | None = None,
           kafka_home: str | None = None, kafka_version: str | None = None,
           root: Path | str | None = None, extra_config: dict[str, str] | None = None,
           timeout: float = START_TIMEOUT, tie_to_parent: bool = False,
           progress=None, sasl: bool = False, tls: bool = False) -> "Lab":
        """Start a fresh lab and return once Metadata lists all its brokers.

        `port`: the first of the lab's ports (process.pick_ports: node N's client port is
        port+N-1, the controller and other listeners follow on); by default free ports are
        picked (and picked again if a race loses one). `tie_to_parent`:
        the JVMs die with this process (test fixtures). `progress(msg)` gets status lines.
        `sasl`: add a SASL_PLAINTEXT listener with SCRAM and PLAIN users and the standard
        authorizer (sasl.py). `tls`: add an SSL listener (and SASL_SSL with `sasl`) with a
        generated CA and broker certificate (tls.py)."""
        check_name(name)
        if brokers not in (1, 3):
            raise UsageError(f"--brokers must be 1 or 3, not {brokers}")
        needed = process.ports_needed(brokers, sum((sasl, tls, sasl and tls)))
        if port is not None and not 1 <= port <= 65536 - needed:
            raise UsageError(f"--port must be a TCP port number of 1..{65536 - needed} "
                             f"(this lab takes {needed} ports from it), not {port}")
        say = progress or (lambda msg: None)
        root = Path(root or lab_root())
        check_writable(root)
        old = cls.load(name, root)
        if old is not None and any(n.alive() for n in old.nodes):
            raise already_running(old)  # before fetching jars or probing ports
        if port is not None:
            process.check_ports_free(list(range(port, port + needed)))
        libs = dist.kafka_libs(kafka_version, kafka_home)
        if kafka_home:
            kafka_home = str(Path(kafka_home).expanduser().resolve())
        version = dist.libs_version(libs) if kafka_home else (kafka_version or dist.DEFAULT_KAFKA_VERSION)
        java = dist.java_cmd()
        with _lab_lock(root, name):
            old = cls.load(name, root)
            if old is not None:
                if any(n.alive() for n in old.nodes):
                    raise already_running(old)
                old._stop(old.nodes, timeout=1)
            attempts = 1 if port is not None else 3
            for attempt in range(1, attempts + 1):
                lab = cls._create(name, root, brokers, port, libs, version, kafka_home,
                                  extra_config, sasl, tls)
                say(f"starting {brokers} node(s) at {lab.bootstrap} (Kafka {version})")
                lab._tied = tie_to_parent   # this process's, never saved: start_node's default
                try:
                    lab._start_all(java, tie_to_parent)
                    lab.save()
                    lab.wait_ready(timeout)
                    return lab
                except _PortRace as exc:
                    lab._abort()
                    if attempt == attempts:
                        raise LabError(str(exc)) from None
                    say(f"{exc}; retrying with other ports")
                except BaseException:
                    lab._abort()
                    raise
        raise AssertionError("unreachable")

    @classmethod
    def _create(cls, name, root: Path, brokers, port, libs, version, kafka_home, extra, sasl,
                tls=False):
        kinds = [k for k, on in (("sasl", sasl), ("ssl", tls), ("sasl_ssl", sasl and tls)) if on]
        ports, controller_ports, extra_ports = process.pick_ports(brokers, port, len(kinds))
        listener_ports = {k: extra_ports[i] for i, k in enumerate(kinds)}
        lab_dir = root / name
        if lab_dir.exists():
            shutil.rmtree(lab_dir)  # a fresh lab every time: data, logs, configs
        lab_dir.mkdir(parents=True, mode=0o700)   # passwords and keys: the owner's only
        lab_dir.chmod(0o700)   # whatever the umask

        def node_port(kind: str, i: int) -> int | None:
            return listener_ports[kind][i] if kind in listener_ports else None

        layouts = [NodeLayout(i + 1, ports[i], controller_ports[i], lab_dir / f"node-{i + 1}",
                              node_port("sasl", i), node_port("ssl", i), node_port("sasl_ssl", i))
                   for i in range(brokers)]
        settings = labsasl.new_settings(lab_dir, tls=tls) if sasl else None
        tls_settings = labtls.new_settings(lab_dir) if tls else None
        if tls_settings:
            labtls.write_files(tls_settings)
        if dist.log4j1(version):
            write_atomic(lab_dir / "log4j.properties", LOG4J_PROPERTIES)
        else:
            write_atomic(lab_dir / "log4j2.xml", LOG4J2_XML)
        for n in layouts:
            n.log_dir.mkdir(parents=True)
            write_atomic(n.config_file,   # the PLAIN users' passwords: 0600
                         server_properties(n, layouts, extra, settings, tls_settings,
                                           dist.version_tuple(version)))
        if settings:
            labsasl.write_client_configs(settings, tls_settings)
        lab = cls(name=name, lab_dir=str(lab_dir), kafka_version=version, libs=str(libs),
                  kafka_home=kafka_home, cluster_id=kafka_uuid(), created=_now(),
                  nodes=[NodeState(n.node_id, 0, None, n.broker_port, n.controller_port,
                                   str(n.node_dir), str(n.config_file), str(n.data_dir),
                                   str(n.log_file), str(n.stdout_file), sasl_port=n.sasl_port,
                                   ssl_port=n.ssl_port, sasl_ssl_port=n.sasl_ssl_port)
                         for n in layouts], sasl=settings, tls=tls_settings)
        lab._format(layouts)
        return lab

    def _format(self, layouts: list[NodeLayout]) -> None:
        if not dynamic_quorum(dist.version_tuple(self.kafka_version)):
            quorum = []  # the static controller.quorum.voters of server.properties
        elif len(layouts) == 1:
            quorum = ["--standalone"]
        else:
            quorum = ["--initial-controllers", initial_controllers(layouts)]
        tools.format_storage(Path(self.libs), self.cluster_id,
                            [(n.node_id, n.config_file) for n in layouts],
                            quorum + labsasl.format_args(self.sasl))

    def _start_all(self, java: str, tie_to_parent: bool) -> None:
        dumping = False
        for n in self.nodes:
            dumping = self._spawn(n, java, tie_to_parent, may_dump=not dumping) or dumping

    def _spawn(self, n: NodeState, java: str, tie_to_parent: bool, may_dump: bool) -> bool:
        """Start node `n`'s JVM; True if it will dump the broker CDS archive at exit."""
        cds_flags, dump = tools.cds_options(Path(self.libs), "broker")
        if dump is not None and not may_dump:
            cds_flags, dump = [], None  # one node creates the archive, the others run plain
        if dist.log4j1(self.kafka_version):
            log4j = f"-Dlog4j.configuration=file:{Path(self.lab_dir) / 'log4j.properties'}"
        else:
            log4j = f"-Dlog4j2.configurationFile={Path(self.lab_dir) / 'log4j2.xml'}"
        cmd = [java, *JVM_OPTS, *cds_flags, *os.environ.get("GROUPCTL_LAB_JAVA_OPTS", "").split(),
               log4j,
               f"-Dkafka.logs.dir={Path(n.log_file).parent}",
               "-cp", tools.classpath(Path(self.libs)), "kafka.Kafka", n.config_file]
        n.pid, n.start_time = process.spawn(cmd, Path(n.node_dir), Path(n.stdout_file),
                                            tie_to_parent=tie_to_parent)
        n.cds_dump = str(dump) if dump else None
        return dump is not None

    def _stop(self, nodes: list[NodeState], timeout: float) -> list[int]:
        killed = process.stop([n.proc() for n in nodes if n.pid], timeout=timeout)
        for n in nodes:
            if n.cds_dump:
                jvm_cds.commit(n.cds_dump, n.pid not in killed)
                n.cds_dump = None
        return killed

    def wait_ready(self, timeout: float = START_TIMEOUT, nodes: list[int] | None = None) -> None:
        """Poll until every node's client port answers and Metadata lists every broker
        (or only `nodes`); fail at once, with the log tail, if a JVM exits."""
        want = set(nodes or [n.node_id for n in self.nodes])
        watched = [n for n in self.nodes if n.node_id in want]
        seen: set[int] = set()

        def ready():
            for n in watched:
                if not n.alive():
                    tail = self.log_tail(n)
                    if "Address already in use" in tail:
                        raise _PortRace(f"node {n.node_id}: a port was taken meanwhile")
                    info = process.proc_info(n.pid)
                    why = ("exited" if info is None or info.zombie else
                           f"is no longer the JVM started (pid {n.pid}: {' '.join(info.cmdline)[:200]!r})")
                    raise LabError(f"lab node {n.node_id} {why} during start-up; "
                                   f"see {n.log_file}{tail}")
            if not all(process.accepts(n.broker_port) for n in watched):
                return False
            seen.clear()
            seen.update(metadata_brokers(",".join(n.address for n in watched), timeout=2.0)
                        or ())
            return want <= seen and secure_listeners_ready(self, watched, want)

        process.poll_until(ready, timeout, f"lab {self.name!r} to list brokers {sorted(want)}",
                           interval=0.05, max_interval=0.2,
                           on_timeout=lambda: f" (Metadata lists {sorted(seen) or 'none'}); "
                                              f"see {self.log_file}")

    def down(self, timeout: float = 30.0) -> list[int]:
        """Stop the lab's JVMs (only those still ours), wait for them to exit, remove the
        state file, data and every file holding a password (the brokers' server.properties,
        the client configs); logs stay until the next `up` of this name. Returns the pids
        that needed SIGKILL."""
        with _lab_lock(Path(self.lab_dir).parent, self.name):
            killed = self._stop(self.nodes, timeout)
            self.state_file.unlink(missing_ok=True)
            for n in self.nodes:
                shutil.rmtree(n.data_dir, ignore_errors=True)
                Path(n.config_file).unlink(missing_ok=True)
            for path in labsasl.secret_files(self.sasl):
                Path(path).unlink(missing_ok=True)
            return killed

    def stop_node(self, node_id: int, timeout: float = 30.0) -> list[int]:
        """Stop one node (SIGTERM, then SIGKILL); the lab stays recorded (fault tests)."""
        killed = self._stop([self.node(node_id)], timeout)
        self.save()
        return killed

    def freeze_node(self, node_id: int) -> None:
        """SIGSTOP one node's JVM: a broker that stops answering but keeps its connections
        open (a long GC pause, a hung disk), as a kill never shows; `thaw_node` resumes it
        (fault tests)."""
        self._send(node_id, signal.SIGSTOP)

    def thaw_node(self, node_id: int) -> None:
        """SIGCONT a node `freeze_node` stopped."""
        self._send(node_id, signal.SIGCONT)

    def _send(self, node_id: int, sig: int) -> None:
        n = self.node(node_id)
        if not n.alive():   # only our own JVM gets the signal
            raise LabError(f"node {node_id} of lab {self.name!r} is not running")
        os.kill(n.pid, sig)

    def start_node(self, node_id: int, timeout: float = START_TIMEOUT,
                   tie_to_parent: bool | None = None) -> None:
        """Restart a stopped node on its old ports and data; wait until it is listed.
        `tie_to_parent`: by default as the lab was started by this process (a fixture's
        node restarted by a fault test dies with the test run too)."""
        n = self.node(node_id)
        if n.alive():
            raise LabError(f"node {node_id} of lab {self.name!r} is running")
        if tie_to_parent is None:
            tie_to_parent = getattr(self, "_tied", False)
        self._spawn(n, dist.java_cmd(), tie_to_parent, may_dump=False)
        self.save()
        self.wait_ready(timeout)

    # --- for tests and scripts ------------------------------------------------------
    @property
    def libs_path(self) -> Path:
        return Path(self.libs)

    def consumer_group_command(self, *args: str, timeout: float = 60):
        """Kafka's ConsumerGroupCommand (kafka-consumer-groups.sh) against this lab."""
        return tools.consumer_group_command(self.bootstrap, *args, timeout=timeout,
                                           libs=Path(self.libs))

    def share_group_command(self, *args: str, timeout: float = 60):
        """Kafka's ShareGroupCommand (kafka-share-groups.sh) against this lab."""
        return tools.share_group_command(self.bootstrap, *args, timeout=timeout,
                                        libs=Path(self.libs))

    def streams_group_command(self, *args: str, timeout: float = 60):
        """Kafka's StreamsGroupCommand (kafka-streams-groups.sh) against this lab."""
        return tools.streams_group_command(self.bootstrap, *args, timeout=timeout,
                                          libs=Path(self.libs))

    def metadata_brokers(self, timeout: float = 5.0) -> list[int] | None:
        """Broker ids the cluster's Metadata lists now (None: nobody answered)."""
        return metadata_brokers(self.bootstrap, timeout)

    def _abort(self) -> None:
        with contextlib.suppress(Exception):
            self._stop(self.nodes, timeout=5)
        self.state_file.unlink(missing_ok=True)

    def log_tail(self, node: NodeState, lines: int = 12) -> str:
        text = []
        for path in (node.stdout_file, node.log_file):
            with contextlib.suppress(OSError):
                text += [ln for ln in Path(path).read_text(errors="replace").splitlines()
                         if ln.strip()][-lines:]
        important = [ln for ln in text if re.search(r"ERROR|FATAL|Exception|Error:", ln)]
        return dist.output_tail("\n".join((important or text)[-lines:]), lines)


class _PortRace(LabError):
    pass


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@contextlib.contextmanager
def _lab_lock(root: Path, name: str):
    with dist._file_lock(Path(root) / f".{name}.lock", START_TIMEOUT * 2,
                         f"another groupctl is starting or stopping lab {name!r}"):
        yield


@contextlib.contextmanager
def throwaway(name: str, brokers: int = 1):
    """A lab for one run (the benches): its own temp root, its JVMs tied to this process,
    stopped and removed however the block ends."""
    root = tempfile.mkdtemp(prefix="groupctl-bench-")
    try:
        lab = Lab.up(name=name, brokers=brokers, root=root, tie_to_parent=True)
        try:
            yield lab
        finally:
            lab.down()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def down(name: str = DEFAULT_NAME, root: Path | str | None = None,
         timeout: float = 30.0) -> Lab | None:
    """Stop the lab `name` if it is recorded; returns it (None if there was none)."""
    check_name(name)
    lab = Lab.load(name, root)
    if lab is not None:
        lab.down(timeout)
    return lab
