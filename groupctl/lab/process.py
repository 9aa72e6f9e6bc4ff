"""Processes and ports for the lab: free-port picking, starting a JVM detached (or tied to
its parent), telling whether a pid is still *our* JVM, and stopping it (SIGTERM, then
SIGKILL after a deadline). All waiting is polling a condition against a deadline."""
from __future__ import annotations

import errno
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

from ..errors import LabError, UsageError

T = TypeVar("T")
HOST = "127.0.0.1"

# Popen objects of JVMs this Python process started: polling them reaps the zombie, so a
# stopped node is seen as gone by the process that started it.
_CHILDREN: dict[int, subprocess.Popen] = {}


def poll_until(condition: Callable[[], T], timeout: float, what: str,
               interval: float = 0.1, on_timeout: Callable[[], str] | None = None,
               max_interval: float = 0.5) -> T:
    """Call `condition` until it returns something truthy (returned) or `timeout` seconds
    pass (LabError naming `what`). The interval grows gently up to `max_interval`."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() >= deadline:
            detail = on_timeout() if on_timeout else ""
            raise LabError(f"timed out after {timeout:g}s waiting for {what}{detail}")
        time.sleep(min(interval, max(0.0, deadline - time.monotonic())))
        interval = min(interval * 1.5, max_interval)


# --- ports ---------------------------------------------------------------------------

def ports_needed(brokers: int, extra_listeners: int = 0) -> int:
    """How many ports a lab takes: per node its client and controller listeners and the
    extra ones."""
    return brokers * (2 + extra_listeners)


def pick_ports(brokers: int, port: int | None, extra_listeners: int = 0):
    """(client ports, controller ports, extra): extra[k] holds every node's port for the
    k-th additional listener (SASL_PLAINTEXT, SSL, SASL_SSL). With `port`, every one is
    derived from it, one block of `brokers` ports after another: the client ports (node N:
    port+N-1), then the controller ports, then each extra listener's (all checked free);
    without, free ports are picked."""
    count = ports_needed(brokers, extra_listeners)
    if port is not None:
        picked = list(range(port, port + count))
        check_ports_free(picked)
    else:
        picked = free_ports(count)
    blocks = [picked[brokers * k:brokers * (k + 1)] for k in range(2 + extra_listeners)]
    return blocks[0], blocks[1], blocks[2:]


def check_ports_free(ports: list[int]) -> None:
    taken = [p for p in ports if port_in_use(p)]
    if taken:
        # the user's choice of --port: a usage error (exit 2), not a lab failure
        raise UsageError(f"port {taken[0]} on {HOST} is already in use "
                         f"(choose another --port, or leave it out to pick free ports)")


def port_in_use(port: int, host: str = HOST) -> bool:
    """True if `port` can't be bound on `host` (someone listens there). SO_REUSEADDR as the
    JVM sets it, so sockets lingering in TIME_WAIT don't count as taken."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return True
            raise
    return False


def _ephemeral_range() -> tuple[int, int]:
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return int(low), int(high)
    except (OSError, ValueError):
        return 32768, 60999


def free_ports(count: int, avoid: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """`count` distinct free ports, chosen at random below the kernel's ephemeral range (so
    outgoing connections can't grab them between now and the broker's bind) and away from
    `avoid`. Random choice keeps concurrent sessions from picking the same ones."""
    low, _ = _ephemeral_range()
    lo, hi = (10000, low - 1) if low > 12000 else (20000, 29999)
    rng = random.SystemRandom()
    chosen: list[int] = []
    for _ in range(2000):
        port = rng.randint(lo, hi)
        if port in chosen or port in avoid or port_in_use(port):
            continue
        chosen.append(port)
        if len(chosen) == count:
            return chosen
    raise LabError(f"could not find {count} free ports on {HOST}")


def accepts(port: int, host: str = HOST, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


# --- processes -----------------------------------------------------------------------

@dataclass
class ProcInfo:
    pid: int
    start_time: str | None  # /proc/<pid>/stat field 22 (clock ticks since boot)
    cmdline: list[str]
    zombie: bool


def proc_info(pid: int) -> ProcInfo | None:
    """What the OS says about `pid`, or None if there is no such process."""
    if pid <= 0:
        return None
    child = _CHILDREN.get(pid)
    if child is not None and child.poll() is not None:
        _CHILDREN.pop(pid, None)
        return None
    proc = Path(f"/proc/{pid}")
    if proc.is_dir() or Path("/proc/self").is_dir():
        try:
            stat = (proc / "stat").read_text()
            cmd = (proc / "cmdline").read_bytes().split(b"\0")
        except (FileNotFoundError, ProcessLookupError):
            return None
        except PermissionError:
            return ProcInfo(pid, None, [], False)
        fields = stat[stat.rindex(")") + 2:].split()
        return ProcInfo(pid, fields[19], [c.decode(errors="replace") for c in cmd if c],
                        fields[0] == "Z")
    # No /proc (macOS, BSD): ask ps.
    ps = shutil.which("ps")
    if not ps:
        return None
    out = subprocess.run([ps, "-o", "stat=,command=", "-p", str(pid)], capture_output=True,
                         text=True)
    line = out.stdout.strip()
    if out.returncode != 0 or not line:
        return None
    stat, _, command = line.partition(" ")
    return ProcInfo(pid, None, command.split(), stat.startswith("Z"))


def is_ours(pid: int, marker: str, start_time: str | None = None) -> bool:
    """True if `pid` is alive and still the JVM we started: its command line names `marker`
    (the node's own config file) and, where known, its start time is unchanged."""
    info = proc_info(pid)
    if info is None or info.zombie:
        return False
    if start_time and info.start_time and info.start_time != start_time:
        return False  # the pid was reused
    if not info.cmdline:
        # /proc/<pid>/cmdline reads empty while the process is still inside execve (its
        # new memory is mapped but argv not yet): the start time alone identifies it.
        return bool(start_time) and info.start_time == start_time
    return any(marker in arg for arg in info.cmdline)


def spawn(cmd: list[str], cwd: Path, stdout_file: Path, env: dict[str, str] | None = None,
          tie_to_parent: bool = False) -> tuple[int, str | None]:
    """Start `cmd` in its own session (Ctrl-C at the terminal that ran `lab up` won't reach
    it), output appended to `stdout_file`. With `tie_to_parent` (test fixtures) the kernel
    kills it if this process dies, via util-linux `setpriv --pdeathsig`, where available.
    Returns (pid, start_time)."""
    if tie_to_parent and sys.platform.startswith("linux"):
        setpriv = shutil.which("setpriv")
        if setpriv:
            cmd = [setpriv, "--pdeathsig", "KILL", "--", *cmd]
    stdout_file.parent.mkdir(parents=True, exist_ok=True)
    with open(stdout_file, "ab") as out:
        try:
            proc = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env=env, close_fds=True,
                                    start_new_session=True)
        except OSError as exc:
            raise LabError(f"cannot start {cmd[0]}: {exc}") from None
    _CHILDREN[proc.pid] = proc
    info = proc_info(proc.pid)
    return proc.pid, info.start_time if info else None


def stop(procs: list[tuple[int, str, str | None]], timeout: float = 30.0,
         kill_timeout: float = 10.0) -> list[int]:
    """Stop processes given as (pid, marker, start_time), all at once: SIGTERM, wait up to
    `timeout`, then SIGKILL the rest and wait up to `kill_timeout`. Only pids that are still
    ours get signals. Returns the pids that had to be killed."""
    live = [(pid, m, st) for pid, m, st in procs if is_ours(pid, m, st)]
    for pid, _, _ in live:
        _signal(pid, signal.SIGTERM)

    def remaining():
        return [p for p in live if is_ours(*p)]

    def all_gone():
        return not remaining()

    killed: list[int] = []
    try:
        poll_until(all_gone, timeout, "the lab's JVMs to exit")
    except LabError:
        for pid, _m, _st in remaining():
            killed.append(pid)
            _signal(pid, signal.SIGKILL)
        poll_until(all_gone, kill_timeout, "the lab's JVMs to die after SIGKILL",
                   on_timeout=lambda: f" (still running: {[p for p, _, _ in remaining()]})")
    for pid, _, _ in procs:
        _CHILDREN.pop(pid, None)
    return killed


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    except PermissionError as exc:
        raise LabError(f"not allowed to signal pid {pid}: {exc}") from None
