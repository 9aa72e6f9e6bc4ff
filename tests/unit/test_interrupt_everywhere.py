"""Every Ctrl-C is one line, `groupctl: interrupted`, exit 130: in a command that talks to
no cluster (here `decode` blocked reading stdin), and the second Ctrl-C of a command that
does (run_async: the first cancels and cleans up, the second stops at once by raising
KeyboardInterrupt, which typer alone turns into a silent exit 130)."""
from __future__ import annotations

import asyncio
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from groupctl.cli.app import invoke
from groupctl.cli.common import run_async
from groupctl.cli.env import Env, Settings

READ = {"x86_64": "0", "aarch64": "63"}.get(platform.machine())   # read(2)'s number


def _reading_stdin(pid: int) -> bool:
    """Whether process `pid` is blocked in read(0, ...) (/proc/PID/syscall)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return fields[:2] == [READ, "0x0"]


@pytest.mark.skipif(READ is None or not Path("/proc/self/syscall").exists(),
                    reason="needs Linux /proc/PID/syscall on x86_64 or aarch64")
def test_ctrl_c_in_a_command_without_a_cluster_is_one_line_exit_130():
    proc = subprocess.Popen([sys.executable, "-m", "groupctl", "decode", "subscription", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not _reading_stdin(proc.pid):   # past start-up, waiting for its input
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "decode never read its stdin"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (proc.returncode, out) == (130, "")
    assert err.strip().splitlines() == ["groupctl: interrupted"], err


def test_a_second_ctrl_c_stops_at_once_and_is_one_line(monkeypatch):
    """The first SIGINT cancels the command, whose cleanup hangs; the second ends it."""
    env = Env.from_system()
    env.settings = Settings(None, None, None, "table", 10.0, True, False)

    async def hangs_on_cleanup():
        os.kill(os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:   # the first Ctrl-C: a cleanup that never ends
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(30)

    with pytest.raises(KeyboardInterrupt):   # what run_async does on the second
        run_async(env, hangs_on_cleanup(), timeout=None)

    import groupctl.cli.common as common

    def cleanup_hangs(env, coro, **kwargs):   # describe, with a cleanup that hangs
        coro.close()
        return run_async(env, hangs_on_cleanup(), timeout=None)

    monkeypatch.setattr(common, "run_async", cleanup_hangs)
    from io import StringIO

    env = Env.from_system()
    env.stdout, env.stderr = StringIO(), StringIO()
    code = invoke(["-b", "127.0.0.1:9", "describe", "g"], env)
    assert code == 130
    assert env.stderr.getvalue().strip().splitlines() == ["groupctl: interrupted"]
