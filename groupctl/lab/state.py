"""A lab's record and where labs live: ``<lab root>/<name>/state.json`` (LabState, one
NodeState per node: pids, ports, dirs), the lab root (``$GROUPCTL_LAB_HOME`` or
``~/.cache/groupctl/lab``), the names a lab may have, and the checks made before one is
started (a root that can be written, a lab of that name not running).
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TypeVar

from ..errors import LabError, UsageError
from ..safe_files import write_atomic
from . import dist, process
from . import sasl as labsasl
from . import tls as labtls
from .config import HOST

STATE_VERSION = 1
DEFAULT_NAME = "default"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
L = TypeVar("L", bound="LabState")


def lab_root() -> Path:
    env = os.environ.get("GROUPCTL_LAB_HOME")
    return Path(env).expanduser() if env else dist.cache_root() / "lab"


@dataclass
class NodeState:
    node_id: int
    pid: int
    start_time: str | None
    broker_port: int
    controller_port: int
    node_dir: str
    config_file: str
    data_dir: str
    log_file: str
    stdout_file: str
    cds_dump: str | None = None  # this JVM dumps a CDS archive here when it exits
    sasl_port: int | None = None  # `lab up --sasl`
    ssl_port: int | None = None  # `lab up --tls`
    sasl_ssl_port: int | None = None  # `lab up --tls --sasl`

    @property
    def address(self) -> str:
        return f"{HOST}:{self.broker_port}"

    def alive(self) -> bool:
        return process.is_ours(self.pid, self.config_file, self.start_time)

    def proc(self) -> tuple[int, str, str | None]:
        return self.pid, self.config_file, self.start_time


@dataclass
class LabState:
    """A lab as state.json records it (cluster.Lab runs it): its nodes, where its files
    are, what it was started with."""

    name: str
    lab_dir: str
    kafka_version: str | None
    libs: str
    kafka_home: str | None
    cluster_id: str
    created: str
    nodes: list[NodeState] = field(default_factory=list)
    sasl: dict | None = None  # `lab up --sasl`: users, passwords, mechanisms (sasl.py)
    tls: dict | None = None  # `lab up --tls`: CA, key store, client properties (tls.py)
    v: int = STATE_VERSION

    # --- views -------------------------------------------------------------------
    @property
    def bootstrap(self) -> str:
        return ",".join(n.address for n in self.nodes)

    @property
    def sasl_bootstrap(self) -> str | None:
        """The SASL_PLAINTEXT listeners (None without --sasl)."""
        return ",".join(f"{HOST}:{n.sasl_port}" for n in self.nodes) if self.sasl else None

    @property
    def ssl_bootstrap(self) -> str | None:
        """The SSL listeners (None without --tls)."""
        return ",".join(f"{HOST}:{n.ssl_port}" for n in self.nodes) if self.tls else None

    @property
    def sasl_ssl_bootstrap(self) -> str | None:
        """The SASL_SSL listeners (None without --tls --sasl)."""
        return (",".join(f"{HOST}:{n.sasl_ssl_port}" for n in self.nodes)
                if self.tls and self.sasl else None)

    @property
    def log_file(self) -> Path:
        """server.log of the first node (all of them: `log_files`)."""
        return Path(self.nodes[0].log_file)

    @property
    def log_files(self) -> list[Path]:
        return [Path(n.log_file) for n in self.nodes]

    @property
    def state_file(self) -> Path:
        return Path(self.lab_dir) / "state.json"

    def node(self, node_id: int) -> NodeState:
        for n in self.nodes:
            if n.node_id == node_id:
                return n
        raise LabError(f"lab {self.name!r} has no node {node_id}")

    def status(self) -> dict:
        nodes = [{"node_id": n.node_id, "pid": n.pid, "alive": n.alive(),
                  "address": n.address, "controller_port": n.controller_port,
                  "log_file": n.log_file, "stdout_file": n.stdout_file,
                  "data_dir": n.data_dir, "config_file": n.config_file} for n in self.nodes]
        alive = sum(1 for n in nodes if n["alive"])
        return {"name": self.name, "state": ("running" if alive == len(nodes)
                                             else "stopped" if alive == 0 else "degraded"),
                "bootstrap": self.bootstrap, "brokers": len(nodes), "alive": alive,
                "kafka_version": self.kafka_version, "kafka_home": self.kafka_home,
                "libs": self.libs, "cluster_id": self.cluster_id, "lab_dir": self.lab_dir,
                "state_file": str(self.state_file), "created": self.created,
                "sasl": labsasl.status(self.sasl, self.sasl_bootstrap, self.sasl_ssl_bootstrap),
                "tls": labtls.status(self.tls, self.ssl_bootstrap), "nodes": nodes}

    # --- persistence -------------------------------------------------------------
    def save(self) -> None:
        write_atomic(self.state_file, json.dumps(asdict(self), indent=2) + "\n")  # 0600

    @classmethod
    def load(cls: type[L], name: str = DEFAULT_NAME,
             root: Path | str | None = None) -> L | None:
        path = Path(root or lab_root()) / name / "state.json"
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise LabError(f"unreadable lab state {path}: {exc}") from None
        nodes = [NodeState(**n) for n in data.pop("nodes", [])]
        known = set(cls.__dataclass_fields__)
        return cls(nodes=nodes, **{k: v for k, v in data.items() if k in known})


def check_name(name: str) -> None:
    if not _NAME_RE.match(name):
        raise UsageError(f"--name must be letters, digits, '.', '_' or '-', not {name!r}")


def name_opt(name: str) -> str:
    return "" if name == DEFAULT_NAME else f" --name {name}"


def already_running(lab: LabState) -> UsageError:
    """`lab up` of a lab that runs: a usage error (exit 2). The advice starts a second
    lab beside it; stopping this one may stop someone else's work, so it comes second."""
    return UsageError(f"lab {lab.name!r} is already running at {lab.bootstrap}: start "
                      f"another beside it with `groupctl lab up --name NAME` (or stop this "
                      f"one: `groupctl lab down{name_opt(lab.name)}`)")


def check_writable(directory: Path) -> None:
    """A lab root that cannot be created or written is a usage error naming it, found
    before any jar is fetched or process started."""
    hint = "set GROUPCTL_LAB_HOME to a writable directory"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"lab directory {directory}: cannot create it "
                         f"({exc.strerror or exc}); {hint}") from None
    if not directory.is_dir():
        raise UsageError(f"lab directory {directory}: not a directory; {hint}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise UsageError(f"lab directory {directory}: not writable; {hint}")
