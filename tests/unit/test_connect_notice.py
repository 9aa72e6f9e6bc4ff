"""An unreachable broker is not seconds of silence for a person: on a terminal (stderr is
a tty) groupctl says once what it is retrying; a script (stderr not a terminal) gets only
the error. The client layer reports through a callback (Cluster.on_slow_bootstrap); the
CLI prints."""
from __future__ import annotations

import io
import socket

from groupctl.cli.app import invoke
from groupctl.cli.env import Env


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens: every connect is refused at once
    return port


def _run(terminal: bool, port: int) -> tuple[int, list[str]]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stderr_is_terminal=terminal,
              environ={})
    code = invoke(["-b", f"127.0.0.1:{port}", "--timeout", "2.5", "list"], env)
    assert env.stdout.getvalue() == ""
    return code, env.stderr.getvalue().splitlines()


def test_a_terminal_is_told_what_is_retried_once():
    port = _closed_port()
    code, lines = _run(True, port)
    assert code == 3
    assert lines[0] == (f"groupctl: connecting to 127.0.0.1:{port} (no answer yet; retrying "
                        "for up to 2.5 s) ...")
    assert len(lines) == 2 and lines[1].startswith("groupctl: error: no Kafka broker reachable")


def test_a_script_gets_only_the_error():
    code, lines = _run(False, _closed_port())
    assert code == 3 and len(lines) == 1
    assert lines[0].startswith("groupctl: error: no Kafka broker reachable")
