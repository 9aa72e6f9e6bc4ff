"""`lab up --sasl --tls`: its passwords reach no other local user (file modes, the command
lines of the processes it starts, what stays after `lab down`) and `--port` pins every
listener of the lab, not only the client ports."""
from __future__ import annotations

import json
import stat
import threading
from pathlib import Path

import pytest

from groupctl.lab import process

from test_lab import lab_home, run_cli  # noqa: F401  (lab_home is a fixture)


class CommandLines:
    """Every command line of a process seen under /proc while it runs (a 5 ms poll)."""

    def __init__(self):
        self.seen: set[tuple[str, ...]] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while not self._stop.wait(0.005):
            for proc in Path("/proc").iterdir():
                if proc.name.isdigit():
                    try:
                        raw = (proc / "cmdline").read_bytes()
                    except OSError:
                        continue
                    if raw:
                        self.seen.add(tuple(raw.decode(errors="replace").split("\0")))

    def __enter__(self) -> CommandLines:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _free_block(count: int) -> int:
    for first in process.free_ports(40):
        if first + count < 65536 and not any(process.port_in_use(p)
                                            for p in range(first, first + count)):
            return first
    raise AssertionError("no block of free ports")


def _private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


@pytest.mark.broker
def test_lab_secrets_stay_private_and_port_pins_every_listener(lab_home):  # noqa: F811
    port = _free_block(5)   # 1 node: client, controller, SASL, SSL, SASL_SSL
    with CommandLines() as lines:
        code, out, err = run_cli("lab", "up", "--sasl", "--tls", "--name", "sec",
                                 "--port", str(port), "-o", "json")
    assert code == 0, err
    lab_dir = lab_home / "sec"
    state = json.loads((lab_dir / "state.json").read_text())
    passwords = [state["sasl"]["password"], state["sasl"]["guest_password"]]
    try:
        node = state["nodes"][0]
        assert sorted((node["broker_port"], node["controller_port"], node["sasl_port"],
                       node["ssl_port"], node["sasl_ssl_port"])) == list(range(port, port + 5))

        # the format JVMs were seen, and no process had a password on its command line
        assert any(any("format.args" in a or "StorageTool" in a for a in cmd)
                   for cmd in lines.seen)
        leaked = [" ".join(cmd)[:200] for cmd in lines.seen
                  if any(p in " ".join(cmd) for p in passwords)]
        assert leaked == []

        assert stat.S_IMODE(lab_dir.stat().st_mode) == 0o700
        written = [p for p in lab_dir.iterdir() if p.is_file()] + [
            lab_dir / "node-1" / "server.properties"]
        assert {p.name for p in written} >= {"state.json", "server.properties", "log4j2.xml",
                                             "client-scram-sha-256.properties"}
        assert [p.name for p in written if not _private(p)] == []
        assert not (lab_dir / "node-1" / "format.args").exists()
    finally:
        code, _, err = run_cli("lab", "down", "--name", "sec")
        assert code == 0, err
    holding = [str(p) for p in lab_dir.rglob("*") if p.is_file()
               and any(pw.encode() in p.read_bytes() for pw in passwords)]
    assert holding == []


def test_port_leaves_room_for_every_listener(lab_home):  # noqa: F811
    code, out, err = run_cli("lab", "up", "--port", "65535", "--name", "high")
    assert (code, out) == (2, "")
    assert err == ("groupctl: error: --port must be a TCP port number of 1..65534 (this lab "
                   "takes 2 ports from it), not 65535\n")
    code, _, err = run_cli("lab", "up", "--sasl", "--tls", "--port", "65532", "--name", "high")
    assert code == 2 and "1..65531 (this lab takes 5 ports" in err
