"""Arguments: --since / --until, one parser for `history` and `analyze` (cli/timearg.py),
refused in one line with exit 2 when out of range; an empty group id is a usage error
(exit 2) for `history` as for `describe`; click's own usage errors in groupctl's words.
No broker is asked (the address refuses)."""
from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from cli_runner import run_cli
from groupctl.exitcodes import ExitCode

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "analyze"


def run(*args: str) -> tuple[int, str, str]:
    return run_cli(*args, bootstrap="127.0.0.1:1")


@pytest.mark.parametrize("value, words", [
    ("99999999999999999999", "'99999999999999999999' is after 9999"),
    ("99999999999999999999d", "is before 1970"),
    ("yesterday", "not a time: 'yesterday'")])
@pytest.mark.parametrize("command", [
    ["history", "g"], ["analyze", "--events", str(FIXTURES / "probe.ndjson")]])
def test_bad_times_are_one_line_exit_2_the_same_for_both(command, value, words):
    code, out, err = run(*command, "--since", value)
    assert (code, out) == (ExitCode.USAGE, ""), err
    assert err.splitlines() == [err.rstrip("\n")]
    assert err.startswith("groupctl: error: --since: ") and words in err, err


def test_analyze_takes_what_history_takes():
    from groupctl.cli.analyze import _time

    before = datetime.now(timezone.utc).replace(tzinfo=None)
    since = _time("15m", "--since")
    assert abs((before - since).total_seconds() - 900) < 5
    assert _time("1795499486407", "--since") == datetime(2026, 11, 24, 5, 51, 26, 407000)
    assert _time("2026-11-24T05:51:26.407Z", "--until") == datetime(2026, 11, 24, 5, 51, 26, 407000)


@pytest.mark.parametrize("command", [["history", ""], ["history", "g", ""], ["describe", ""]])
def test_an_empty_group_id_is_exit_2(command):
    start = time.monotonic()
    code, out, err = run(*command)
    assert (code, out, err) == (ExitCode.USAGE, "", "groupctl: error: a group id cannot be empty\n")
    assert time.monotonic() - start < 5   # said at once, not after retrying a connection


@pytest.mark.parametrize("args, message", [
    (["--timeout", "abc", "list"], "--timeout 'abc' is not a number"),
    (["watch", "g", "--duration", "x"], "--duration 'x' is not a number"),
    (["watch", "g", "--duration", "3", "--max-rebalances", "1.5"],
     "--max-rebalances '1.5' is not a whole number"),
    (["describe", "--nope"], "no such option: --nope (possible options: --type)"),
    (["nosuchcmd"], "no such command 'nosuchcmd'"),
    (["wait"], "missing argument 'GROUP'"),
])
def test_clicks_usage_errors_read_as_groupctls_own(args, message):
    code, out, err = run(*args)
    assert (code, out, err) == (ExitCode.USAGE, "", f"groupctl: error: {message}\n")
