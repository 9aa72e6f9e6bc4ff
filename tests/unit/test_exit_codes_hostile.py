"""Exit codes under attack: what a broker sends is input (never exit 1, "a bug"), a name
too long for Kafka is said before anything is sent, the machine's own limits are one line
(exit 2)."""
from __future__ import annotations

import asyncio
import errno
import io
import time

import pytest
from test_hostile_broker import HostileCluster, _run_cli

from groupctl.cli.app import invoke
from groupctl.cli.env import Env


def _cli(*argv: str, config: str | None = None) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    if config is not None:
        env.environ = {**env.environ, "GROUPCTL_CONFIG": config}
    code = invoke(list(argv), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


LONG = "g" * 32768


@pytest.mark.parametrize("argv", [
    ["describe", LONG], ["watch", LONG, "--duration", "1"], ["history", LONG],
    ["join", LONG], ["force-rebalance", LONG, "--yes"], ["wait", LONG, "--state", "Stable"],
    ["remove-member", LONG, "--all-static"]])
def test_a_group_id_over_kafkas_string_limit_is_exit_2_before_sending(argv):
    started = time.monotonic()
    code, out, err = _cli("-b", "127.0.0.1:1", *argv)
    assert (code, out) == (2, "")
    assert err == ("groupctl: error: a group id cannot be longer than 32,767 bytes (Kafka's "
                   "string limit); this one is 32,768\n")
    assert time.monotonic() - started < 2   # no connection tried (port 1 retries 10 s)


def test_a_group_id_of_32767_bytes_goes_on():
    code, _, err = _cli("-b", "127.0.0.1:1", "--timeout", "0.5", "describe", "é" * 16383)
    assert code == 3, err   # 32,766 bytes: sent (and port 1 refuses)


def test_set_context_in_an_uncreatable_directory_is_exit_2():
    config = "/proc/groupctl-no-such-dir/config.yaml"   # /proc takes no new directory
    code, _, err = _cli("-b", "k:9092", "config", "set-context", "c", config=config)
    assert (code, err) == (2, f"groupctl: error: {config}: cannot write: No such file or "
                              f"directory; the file is unchanged\n")


def test_out_of_file_descriptors_is_one_short_line_at_once(monkeypatch):
    async def emfile(*args, **kwargs):
        raise OSError(errno.EMFILE, "Too many open files")
    monkeypatch.setattr(asyncio, "open_connection", emfile)
    started = time.monotonic()
    code, out, err = _cli("-b", "127.0.0.1:9092,127.0.0.1:9093", "list")
    assert (code, out) == (2, "")
    assert err.startswith("groupctl: error: out of file descriptors: this process's "
                          "(ulimit -n: ")
    assert err.count("\n") == 1 and len(err) < 200
    assert time.monotonic() - started < 2   # not retried for --timeout


def test_an_undecodable_answer_is_exit_3_not_a_bug():
    def garbage(req):
        body = req.corr.to_bytes(4, "big") + b"\x00" + b"\xff" * 40   # no ListGroups body
        return len(body).to_bytes(4, "big") + body
    with HostileCluster(garbage) as cluster:
        code, out, err, _ = _run_cli(cluster.broker.port, "list")
    assert code == 3, err
    assert err.startswith("groupctl: error: cannot decode the ListGroups v")
    assert err.count("\n") == 1
