"""Every command, in every output format, ends quietly with exit 0 when stdout's reader
has gone (`groupctl ... | head -1` under `set -o pipefail`): one mechanism
(cli/env.ReaderGuard and the console's broken-pipe hook), whoever writes.

Each case runs in-process through the real CLI entry with stdout a real pipe whose
reading end is closed before the command starts: its first write meets EPIPE, as
`| head -1` makes the writes after the first line meet it. One group with a committed
offset on the session broker serves every case."""
from __future__ import annotations

import io
import os

import pytest

from groupctl.cli.app import invoke
from groupctl.cli.env import Env

from records_support import snapshot

FORMATS = ("table", "wide", "json", "yaml", "ndjson")
COMMANDS = {
    "list": ("list",),
    "describe": ("describe", "{group}"),
    "describe --all": ("describe", "--all"),
    "history": ("history", "{group}"),
    "decode records": ("decode", "records", "{segment}"),
    "errors": ("errors",),
    "watch": ("watch", "{group}", "--duration", "30"),
    "wait": ("wait", "{group}", "--state", "empty"),
    "join": ("join", "{group}-join"),
    "config get-contexts": ("config", "get-contexts"),
}


@pytest.fixture(scope="module")
def case(kafka, tmp_path_factory):
    from groupctl.lab.consumer import LabConsumer
    from groupctl.lab.workload import create_topic

    group, topic = "closed-reader", "closed-reader"
    create_topic(kafka.bootstrap, topic, 1, 1, None, exist_ok=True)
    consumer = LabConsumer(kafka.bootstrap, group, [topic]).start()
    try:
        consumer.wait_assigned(timeout=60)
    finally:
        consumer.close()   # commits, leaves: the group's records are in the log
    where = tmp_path_factory.mktemp("closed-reader")
    segments = snapshot(kafka, str(where))
    segment = max(segments, key=os.path.getsize)   # one with records to write
    return {"group": group, "segment": segment, "bootstrap": kafka.bootstrap,
            "config": str(where / "config.yaml")}   # no contexts: not the user's file


def closed_pipe():
    """A text stream on a pipe nobody reads any more."""
    read, write = os.pipe()
    os.close(read)
    return os.fdopen(write, "w")


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("command", COMMANDS)
def test_closed_reader_is_exit_0_quietly(case, command, fmt):
    args = [a.format(**case) for a in COMMANDS[command]]
    stdout, stderr = closed_pipe(), io.StringIO()
    try:
        env = Env(stdout=stdout, stderr=stderr, environ={"GROUPCTL_CONFIG": case["config"]})
        code = invoke(["-b", case["bootstrap"], "-o", fmt, *args], env)
    except SystemExit as exc:   # click's and rich's own answer to EPIPE: exit 1
        code = exc.code
    finally:
        try:
            stdout.close()
        except BrokenPipeError:
            pass
    # (watch's line naming its witnesses is said before anything is written: --source auto)
    err = [line for line in stderr.getvalue().splitlines()
           if "warning:" not in line and "watch: source auto:" not in line]
    assert code == 0, stderr.getvalue()
    assert not err, stderr.getvalue()
