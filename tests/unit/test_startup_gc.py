"""groupctl.startup: the console script holds the cyclic GC off while a command imports,
and every command turns it back on before it does its work (network commands in
run_async, the others in the app callback)."""
from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
import textwrap

import pytest

from groupctl import startup
from groupctl.cli.app import invoke
from groupctl.cli.env import Env


@pytest.fixture
def held():
    was = gc.isenabled()
    gc.enable()
    startup.hold()
    assert not gc.isenabled()
    yield
    startup._held = False
    startup._console = False  # hold() stands for the console script: not this process
    gc.unfreeze()  # release() froze the test process's objects: give them back
    if was:
        gc.enable()


def test_release_without_hold_changes_nothing():
    was = gc.isenabled()
    gc.disable()
    try:
        startup.release()
        assert not gc.isenabled()  # someone else's choice, not ours to undo
    finally:
        if was:
            gc.enable()


def test_hold_then_release(held):
    startup.release()
    assert gc.isenabled() and gc.get_freeze_count() > 0
    startup.release()  # once only
    assert gc.isenabled()


def test_a_command_without_run_async_releases_in_the_callback(held):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert invoke(["errors", "27"], env) == 0
    assert gc.isenabled()


def test_a_network_command_releases_in_run_async(held):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    invoke(["-b", "127.0.0.1:1", "--timeout", "0.2", "join", "g"], env)  # unreachable
    assert gc.isenabled()


def test_a_one_shot_command_ends_start_up_with_the_collector_off(held):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    invoke(["-b", "127.0.0.1:1", "--timeout", "0.2", "describe", "g"], env)  # unreachable
    assert not gc.isenabled() and not startup._held



def test_one_shot_only_in_the_console_script(monkeypatch):
    was = gc.isenabled()
    gc.enable()
    try:
        monkeypatch.setattr(startup, "_console", False)
        startup.one_shot()
        assert gc.isenabled()  # a test process keeps its own GC
        monkeypatch.setattr(startup, "_console", True)
        monkeypatch.setattr(startup, "_held", True)
        startup.one_shot()
        assert not gc.isenabled()
        startup.release()  # run_async's release leaves it off
        assert not gc.isenabled()
    finally:
        if was:
            gc.enable()


def test_settled_freezes_the_state_built_in_the_console_script_only(monkeypatch):
    """A watch's fleet told (metrics_server's build ahead calls settled()): what it built
    is frozen, so that a full collection no longer walks it; a test keeps its GC."""
    was = gc.isenabled()
    gc.enable()
    try:
        gc.unfreeze()
        monkeypatch.setattr(startup, "_console", False)
        monkeypatch.setattr(startup, "_settled", False)
        startup.settled()
        assert gc.get_freeze_count() == 0
        monkeypatch.setattr(startup, "_console", True)
        fleet = [{"group": f"g{i}"} for i in range(1000)]
        startup.settled()
        assert gc.get_freeze_count() >= len(fleet)
        gc.unfreeze()
        startup.settled()   # once per process: a second would freeze that moment's garbage
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()
        if not was:
            gc.disable()


@pytest.mark.parametrize("command,off", [(["describe", "g"], True), (["list"], True),
                                         (["errors", "27"], False)])
def test_the_console_script_runs_one_shot_commands_without_the_collector(command, off):
    """describe and list (as the console script runs them) end with the collector off and
    skip the interpreter's teardown (os._exit); other commands keep both. An unreachable
    broker is enough to get there."""
    probe = textwrap.dedent("""
        import gc, json, os, sys
        at_once = []
        def _exit(code):   # os._exit, seen: the probe still says what it saw
            at_once.append(code)
            raise SystemExit(code)
        os._exit = _exit
        sys.argv = ["groupctl", "-b", "127.0.0.1:1", "--timeout", "0.3", *json.loads(sys.argv[1])]
        from groupctl.__main__ import main
        try:
            main()
        except SystemExit:
            pass
        sys.stderr.write("\\n" + json.dumps([gc.isenabled(), bool(at_once)]) + "\\n")
        """)
    proc = subprocess.run([sys.executable, "-c", probe, json.dumps(command)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert json.loads(proc.stderr.strip().splitlines()[-1]) == [not off, off], proc.stderr


def test_an_exit_at_once_writes_everything_first():
    """The output a one-shot command left in stdout's and stderr's buffers is written
    before the process ends, and the exit code is the command's."""
    probe = textwrap.dedent("""
        import sys
        from groupctl.cli.app import _exit_at_once
        sys.stdout.write("x" * 1_000_000)
        sys.stderr.write("said")
        _exit_at_once(5)
        """)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=False)
    assert (proc.returncode, len(proc.stdout), proc.stderr) == (5, 1_000_000, "said")
