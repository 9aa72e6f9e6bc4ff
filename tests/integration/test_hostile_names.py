"""Names from the cluster reach a real terminal shown, never obeyed (issue 36).

A group whose id, and a librdkafka consumer whose client.id and group.instance.id, hold
a corpus of terminal attacks: CSI 2J (clear the screen), OSC 0 (set the window title),
OSC 52 (write the clipboard), OSC 8 (a hidden link), a newline that forges a row, a bidi
override, a zero-width joiner and C1's CSI (0x9b). Kafka takes any string as a group id,
client id or instance id (topic names are [a-zA-Z0-9._-] only; the lab broker checks).

Every command that shows names runs in a tmux pane (its own server, 160x50, a clear
screen not kept in its history) that first prints a marker line and waits for Enter; after
the command: the marker is still in the pane (the screen was not cleared), the pane's title
is what it was, tmux got no clipboard write, no line starts with the forged row, the
escapes are on the screen as text (`\\x1b`, `\\u202e`), and the bytes the command wrote
to the terminal (tmux pipe-pane) hold no OSC, no C1, no bidi or zero-width character and
no control sequence but rich's own (colours, and the live view's cursor moves).
"""
from __future__ import annotations

import getpass
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from waiting import wait_until

from groupctl.observe.reads.model import coordinator_partition

pytestmark = pytest.mark.broker

TMUX = "/usr/bin/tmux"
CORPUS = ("\x1b[2J\x1b[H" "\x1b]0;PWNED-TITLE\x07" "\x1b]52;c;UFdORUQ=\x07"
          "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\" "\nFORGED ROW\r"
          "\u202eevil\u200djoin\x9b2J\t.")
MARKER = "MARKER-BEFORE-THE-COMMAND"
# what no output may send: OSC, a control sequence rich does not write (its colours `m`,
# the live view's cursor moves `A` `K` `h` `l` `G`), other C0 but newline and carriage
# return (the pty turns \n into \r\n), C1, bidi controls and zero-width characters
UNSAFE_OUTPUT = re.compile("\x1b\\]|\x1b\\[[0-9;?]*[^0-9;?mAKhlG]|\x1b[^\\[]|"
                           "[\x00-\x09\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\u200b-\u200f"
                           "\u202a-\u202e\u2066-\u2069\ufeff]")
LAUNCH = ("import json, os, sys; args = json.load(open(sys.argv[1])); "
          "os.execv(args[0], args)")


class Terminal:
    """A private tmux server; each command in a session of its own."""

    def __init__(self, tmp_path: Path):
        self.tmp = tmp_path
        self.socket = f"groupctl-hostile-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.conf = tmp_path / "tmux.conf"
        # set-clipboard on: an OSC 52 reaching tmux would become a paste buffer
        self.conf.write_text("set -g status off\nset -g remain-on-exit on\n"
                             "set -g set-clipboard on\nset -g allow-rename on\n"
                             "set -g history-limit 5000\nset -g scroll-on-clear off\n")
        self.runs = 0

    def tmux(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, "-f", str(self.conf), *args],
                              check=True, text=True, capture_output=True, timeout=20).stdout

    def run(self, argv: list[str], timeout: float = 60) -> "Screen":
        """`argv` (exact bytes, through a launcher: no shell quoting) in a fresh session:
        the marker, Enter, the command; the screen once it has ended."""
        self.runs += 1
        name = f"s{self.runs}"
        args = self.tmp / f"{name}.json"
        args.write_text(json.dumps(argv))
        shell = (f"printf '%s\\n' {MARKER}; read go; {sys.executable} -c {_q(LAUNCH)} "
                 f"{_q(str(args))}; echo EXIT=$?")
        self.tmux("new-session", "-d", "-s", name, "-x", "160", "-y", "50", shell)
        wait_until(lambda: MARKER in self.screen(name), 20, "the marker")
        title = self.title(name)
        raw = self.tmp / f"{name}.raw"
        self.tmux("pipe-pane", "-t", name, "-o", f"cat > {_q(str(raw))}")
        self.tmux("send-keys", "-t", name, "Enter")
        text = wait_until(lambda: _ended(self.screen(name)), timeout, f"{argv[3:]} to end")
        written = wait_until(lambda: _ended(raw.read_bytes().decode("utf-8", "replace")), 20,
                             "the pane's bytes")
        return Screen(text, title, self.title(name), self.tmux("list-buffers"), written)

    def screen(self, name: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", name, "-S", "-")

    def title(self, name: str) -> str:
        return self.tmux("display-message", "-p", "-t", name, "#{pane_title}").strip()

    def kill(self) -> None:
        try:
            path = self.tmux("display-message", "-p", "#{socket_path}").strip()
        except subprocess.CalledProcessError:
            return
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=20)
        if path:
            Path(path).unlink(missing_ok=True)


def _q(text: str) -> str:
    import shlex

    return shlex.quote(text)


class _Ended(str):
    pass


def _ended(screen: str) -> str | None:
    return _Ended(screen) if "EXIT=" in screen else None


class Screen:
    def __init__(self, text: str, title_before: str, title_after: str, buffers: str,
                 raw: str):
        self.text, self.title_before, self.title_after = text, title_before, title_after
        self.buffers, self.raw = buffers, raw
        self.exit = int(text.rsplit("EXIT=", 1)[1].split()[0])

    def check(self, what: str, shows_escapes: bool = True) -> None:
        assert MARKER in self.text, f"{what}: the screen was cleared:\n{self.text}"
        assert self.title_after == self.title_before, (what, self.title_after)
        assert "PWNED" not in self.title_after
        assert self.buffers.strip() == "", f"{what}: a clipboard write reached tmux: {self.buffers}"
        lines = self.text.splitlines()
        assert not any(ln.startswith("FORGED ROW") for ln in lines), f"{what}:\n{self.text}"
        obeyed = UNSAFE_OUTPUT.findall(self.raw)
        assert not obeyed, f"{what}: the terminal was sent {obeyed}"
        if shows_escapes:
            joined = self.text.replace("\n", "")   # a long line wraps at the pane's edge
            assert "\\x1b" in joined and "\\u202e" in joined, f"{what}:\n{self.text}"


def test_hostile_names_in_a_real_terminal(kafka, topic_factory, consumer_factory, tmp_path):
    group = f"hx-{uuid.uuid4().hex[:6]}-{CORPUS}"
    topic = topic_factory(2)
    consumer = consumer_factory(group, topic, name=f"c{CORPUS}", instance_id=f"i{CORPUS}",
                                config={"enable.auto.commit": False})  # short decode output
    consumer.wait_assigned(count=2)
    gc = [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap]
    term = Terminal(tmp_path)
    try:
        prefix = f"^{group[:9]}"
        for argv, what, code in [
            (["list"], "list", 0),
            (["describe", group], "describe", 0),
            (["-o", "wide", "describe", group], "describe -o wide", 0),
            (["describe", group + "-missing"], "an error on stderr", 5),
            (["wait", group, "--state", "Stable", "--timeout", "20"], "wait", 0),
            (["watch", group, "--duration", "3"], "watch", 0),
            (["watch", "--all", "--regex", prefix, "--duration", "3"], "watch --all", 0),
            (["history", group], "history", 0),
            (["join", group, "--watch", "--duration", "4", "--yes"], "join --watch", 0),
            (["force-rebalance", group, "--yes"], "force-rebalance", 0),
        ]:
            screen = term.run(gc + argv)
            assert screen.exit == code, f"{what}: exit {screen.exit}:\n{screen.text}"
            screen.check(what)

        segments = tmp_path / "segments"
        partition = coordinator_partition(group)
        for node in kafka.nodes:
            for path in glob.glob(os.path.join(node.data_dir, f"__consumer_offsets-{partition}",
                                               "*.log")):
                target = segments / f"__consumer_offsets-{partition}"
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy(path, target)
        files = sorted(str(p) for p in segments.glob("*/*.log"))
        screen = term.run(gc + ["decode", "records", *files, "--group", group])
        assert screen.exit == 0, screen.text
        screen.check("decode records")

        screen = term.run(gc + ["remove-member", group, "--instance-id", f"i{CORPUS}", "--yes"])
        assert screen.exit == 0, screen.text
        screen.check("remove-member")

        # the reason the broker logged names no user and no host (issue 36)
        log = kafka.log_file.read_text(errors="replace")
        assert "groupctl force-rebalance: no reason given" in log
        assert f"{getpass.getuser()}@{socket.gethostname()}" not in log
    finally:
        term.kill()
