"""Usage errors of force-rebalance, wait and remove-member: exit 2 with one line on stderr,
before any broker is contacted (the bootstrap address here accepts no connection)."""
from __future__ import annotations

import pytest

from cli_runner import run_cli

NOWHERE = "127.0.0.1:1"


def run(*args, terminal=False, stdin=""):
    return run_cli(*args, bootstrap=NOWHERE, timeout=1, stdin=stdin, terminal=terminal)


@pytest.mark.parametrize("args,words", [
    (["force-rebalance", "g"], "pass --yes"),
    (["remove-member", "g", "--instance-id", "a"], "pass --yes"),
    (["remove-member", "g", "--yes"], "--instance-id ID"),
    (["remove-member", "g", "--instance-id", "a", "--all-static", "--yes"], "not both"),
    (["wait", "g", "--state", "Stabel"], "valid states: Empty, PreparingRebalance"),
    (["wait", "g"], "give a condition"),
    (["wait", "g", "--state", "stable", "--interval", "0"], "--interval must be positive"),
    (["wait", "g", "--members", "-1"], "--members must not be negative"),
    (["wait", "g", "--settled", "0"], "--settled must be positive"),
])
def test_usage_errors(args, words):
    code, out, err = run(*args)
    assert code == 2, err
    assert out == ""
    assert err.startswith("groupctl: error: ") and words in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_help_says_it_changes_the_group(capsys):
    for command in ("force-rebalance", "remove-member"):
        code, _, _ = run(command, "--help")
        out = capsys.readouterr().out
        assert code == 0 and "CHANGES the group" in out and "--yes" in out
    code, _, _ = run("wait", "--help")
    out = capsys.readouterr().out
    assert code == 0 and "Read-only" in out and "--must-exist" in out
