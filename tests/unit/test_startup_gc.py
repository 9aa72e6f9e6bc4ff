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
    invoke(["-b", "127.0.0.1:1", "--timeout", "0.2", "describe", "g"], env)  # unreachable
    assert gc.isenabled()



def test_no_full_collections_only_in_the_console_script(monkeypatch):
    before = gc.get_threshold()
    monkeypatch.setattr(startup, "_console", False)
    startup.no_full_collections()
    assert gc.get_threshold() == before  # a test process keeps its own thresholds
    monkeypatch.setattr(startup, "_console", True)
    try:
        startup.no_full_collections()
        assert gc.get_threshold() == (before[0], before[1], startup._NEVER)
    finally:
        gc.set_threshold(*before)


def test_the_console_script_describe_makes_no_full_collection():
    """describe (as the console script runs it) walks its result in young collections
    only; an unreachable broker is enough to get there."""
    probe = textwrap.dedent("""
        import gc, json, sys
        sys.argv = ["groupctl", "-b", "127.0.0.1:1", "--timeout", "0.3", "describe", "g"]
        from groupctl.__main__ import main
        try:
            main()
        except SystemExit:
            pass
        sys.stderr.write("\\n" + json.dumps(gc.get_threshold()) + "\\n")
        """)
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=False)
    assert json.loads(proc.stderr.strip().splitlines()[-1])[2] == startup._NEVER, proc.stderr
