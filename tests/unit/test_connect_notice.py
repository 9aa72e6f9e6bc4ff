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


def test_a_terminal_is_told_the_first_failure_at_once_and_what_is_retried():
    """A refused connection is said as it happens (as Kafka's own tools print the first
    failure), not after a second of silence; then the retries go on to --timeout."""
    import time

    port = _closed_port()
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stderr_is_terminal=True, environ={})
    said_at: list[float] = []
    write = env.stderr.write

    def stamped(text: str) -> int:
        said_at.append(time.monotonic())
        return write(text)

    env.stderr.write = stamped   # type: ignore[method-assign]
    started = time.monotonic()
    code = invoke(["-b", f"127.0.0.1:{port}", "--timeout", "2.5", "list"], env)
    lines = env.stderr.getvalue().splitlines()
    assert code == 3
    assert lines[0] == (f"groupctl: 127.0.0.1:{port}: connection refused (retrying for up to "
                        "2.5 s) ...")
    assert said_at[0] - started < 0.8   # at once, before the 1 s "no answer yet" notice
    assert len(lines) == 2 and lines[1].startswith("groupctl: error: no Kafka broker reachable")


def test_a_silent_address_is_said_after_a_second():
    """No answer at all (a dropped SYN): after a second, that nothing answered yet."""
    from groupctl.cli.common import _say_retrying

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    _say_retrying(env, ["10.255.255.1:9092"], 10.0)
    assert env.stderr.getvalue() == ("groupctl: connecting to 10.255.255.1:9092 (no answer yet; "
                                     "retrying for up to 10 s) ...\n")


def test_a_script_gets_only_the_error():
    code, lines = _run(False, _closed_port())
    assert code == 3 and len(lines) == 1
    assert lines[0].startswith("groupctl: error: no Kafka broker reachable")


def test_ctrl_c_while_connecting_is_one_line_exit_130():
    """Ctrl-C in any command that talks to a cluster: said in one line (click alone ends
    it with a silent 130)."""
    import signal
    import subprocess
    import sys

    silent = socket.socket()   # accepts, never answers: groupctl waits inside its command
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    silent.settimeout(60)
    proc = subprocess.Popen([sys.executable, "-m", "groupctl", "-b",
                             f"127.0.0.1:{silent.getsockname()[1]}", "--timeout", "30",
                             "describe", "g"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        conn, _ = silent.accept()   # it is connecting: past start-up, in the command
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
        conn.close()
    finally:
        silent.close()
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out) == (130, "")
    assert err.strip().splitlines() == ["groupctl: interrupted"], err
