"""`join` of a group that does not exist would create it with the probe as its only member
and leader (a typo's usual result): on a terminal it asks first; a script is warned on
stderr and goes on; --yes neither asks nor warns. Ground truth: the broker's own log
(the coordinator logs every group it creates a generation for) and its DescribeGroups."""
from __future__ import annotations

import io
import json

import pytest
from probe_support import cli, describe

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.exitcodes import ExitCode

pytestmark = pytest.mark.broker


def _on_terminal(kafka, answer: str, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO(answer),
              stdin_is_terminal=True, stderr_is_terminal=True, stdout_is_terminal=False)
    code = invoke(["-b", kafka.bootstrap, *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def _warning(group: str) -> str:
    return (f"groupctl: warning: group {group!r} does not exist: joining creates it, with "
            "the probe as its only member and leader (--yes: no warning)\n")


def _broker_log_mentions(kafka, group: str) -> bool:
    with open(kafka.log_file, encoding="utf-8", errors="replace") as f:
        return f"group {group} " in f.read()


def test_a_terminal_is_asked_and_no_creates_nothing(kafka, unique_group):
    code, out, err = _on_terminal(kafka, "n\n", "join", unique_group)
    assert (code, out) == (ExitCode.INTERRUPTED, "")
    assert err == (f"groupctl: group {unique_group!r} does not exist: joining creates it, "
                   "with the probe as its only member and leader. Join anyway? [y/N] "
                   f"groupctl: error: join: not confirmed; group {unique_group!r} was not "
                   "created\n")
    assert not _broker_log_mentions(kafka, unique_group)
    assert describe(kafka, unique_group)["group_state"] == "Dead"


def test_a_terminal_that_answers_yes_joins(kafka, unique_group):
    code, out, err = _on_terminal(kafka, "y\n", "-o", "json", "join", unique_group)
    assert code == 0, err
    data = json.loads(out)
    assert data["is_leader"] is True and data["generation"] == 1
    assert _broker_log_mentions(kafka, unique_group)


def test_a_script_is_warned_and_joins(kafka, unique_group):
    code, out, err = cli(kafka, "-o", "json", "join", unique_group)
    assert code == 0 and err == _warning(unique_group)
    assert json.loads(out)["is_leader"] is True


def test_yes_neither_asks_nor_warns(kafka, unique_group):
    code, out, err = _on_terminal(kafka, "", "-o", "json", "join", unique_group, "--yes")
    assert (code, err) == (0, "")
    assert json.loads(out)["is_leader"] is True


def test_an_existing_group_is_joined_without_a_word(kafka, unique_group):
    code, out, _ = cli(kafka, "-o", "json", "join", unique_group, "--yes")
    first = json.loads(out)["generation"]
    assert describe(kafka, unique_group)["group_state"] == "Empty"  # it exists now
    code, out, err = _on_terminal(kafka, "", "-o", "json", "join", unique_group)
    assert (code, err) == (0, "")
    # the probe's leave moved the Empty group one generation on; this join one more
    assert json.loads(out)["generation"] == first + 2
