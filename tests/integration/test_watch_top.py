"""The fleet on a real terminal (issue 22): `groupctl watch --all --regex` in a tmux pane
(a private tmux server, 100x30, no status line) against the lab broker, read back with
`tmux capture-pane -p` as a person would see it. Real groups: a classic group of two
librdkafka consumers, a KIP-848 group of one, two Empty groups holding committed offsets.

- the rows show every group with its state, coordinator (as Kafka's ConsumerGroupCommand
  names it), type and members (what the consumers and the commits made), the KIP-848 group's epochs as the broker's log computed them, the title's
  clock ticking without events;
- churning the classic group (a third consumer joins) brings it to the top with as many
  rebalances as the broker's log has "Stabilized" generations since the watch began; a
  second KIP-848 member then brings that group above it (most recent activity first);
- a smaller window (60x7) drops columns and counts the groups not shown in the footer;
- Ctrl-C ends it with exit 0 and the summary of every group.
The tmux server is killed at the end (its own socket: nobody else's sessions are touched).
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from describe_support import cgc_rows, commit, produce
from waiting import wait_until
from watch_support import last_stabilized, stabilized

pytestmark = pytest.mark.broker

TMUX = "/usr/bin/tmux"
CELLS = re.compile(r"\s{2,}")                         # the view's columns: two spaces apart
TARGET_EPOCH = r"\[GroupId {}\] Computed a new target assignment for epoch (\d+)"


class Pane:
    """One command in a detached tmux session on a server of its own."""

    def __init__(self, tmp_path, command: list[str], width: int, height: int):
        self.socket = f"groupctl-top-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        conf = tmp_path / "tmux.conf"
        conf.write_text("set -g status off\nset -g remain-on-exit on\n")
        self.errors = tmp_path / "stderr.txt"
        self.status = tmp_path / "status.txt"
        # the exit status is written by the pane's shell, not asked of tmux: under load tmux
        # may mark the pane dead at the pty's end and never reap the command (seen: the
        # groupctl process a zombie for 20 s, #{pane_dead_status} empty). The trap keeps
        # the shell alive through the Ctrl-C the command gets (a trap's command is reset to
        # the default in the child: the command sees SIGINT as from a plain shell)
        shell = (f"trap true INT; env -u LINES -u COLUMNS {shlex.join(command)} "
                 f"2>{shlex.quote(str(self.errors))}; echo $? >{shlex.quote(str(self.status))}")
        self._tmux("-f", str(conf), "new-session", "-d", "-s", "top", "-x", str(width),
                   "-y", str(height), shell)

    def _tmux(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], check=True, text=True,
                              capture_output=True, timeout=20).stdout

    def screen(self, history: bool = False) -> str:
        return self._tmux("capture-pane", "-p", "-t", "top", *(["-S", "-500"] if history else []))

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", "top", "-x", str(width), "-y", str(height))

    def interrupt(self) -> None:
        self._tmux("send-keys", "-t", "top", "C-c")

    def exit_status(self) -> int | None:
        text = self.status.read_text().strip() if self.status.exists() else ""
        return int(text) if text else None

    def kill(self) -> None:
        try:
            path = self._tmux("display-message", "-p", "#{socket_path}").strip()
        except subprocess.CalledProcessError:   # no server (it never started): nothing to kill
            return
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True, timeout=20)
        if path:
            Path(path).unlink(missing_ok=True)   # tmux leaves its socket file behind


class Seen:
    """The view as read off the screen: its title and rows (column title -> cell)."""

    def __init__(self, screen: str):
        self.screen = screen
        lines = screen.rstrip("\n").split("\n")
        at = next((i for i, ln in enumerate(lines) if ln.startswith("GROUP ")), None)
        self.title = lines[at - 1] if at else ""
        self.columns = CELLS.split(lines[at].strip()) if at is not None else []
        self.rows: list[dict] = []
        self.footer = ""
        for line in lines[at + 1:] if at is not None else ():
            if line.startswith(("… ", "most recent activity")):
                self.footer = line.strip()
                break
            self.rows.append(dict(zip(self.columns, CELLS.split(line.strip()))))

    def row(self, group: str) -> dict:
        return next((r for r in self.rows if r["GROUP"] == group), {})

    @property
    def order(self) -> list[str]:
        return [r["GROUP"] for r in self.rows]

    @property
    def clock(self) -> str | None:
        found = re.search(r"(\d\d:\d\d:\d\d) UTC$", self.title.strip())
        return found.group(1) if found else None

    def __repr__(self) -> str:   # what wait_until shows when it gives up
        return f"screen:\n{self.screen}"


class Unmet(Seen):
    def __bool__(self) -> bool:
        return False


def _look(pane: Pane, check) -> Seen:
    """The screen, truthy when `check(seen)` holds."""
    seen = Seen(pane.screen())
    return seen if check(seen) else Unmet(seen.screen)


def _coordinators(kafka, groups) -> dict[str, str]:
    """{group: its coordinator's id} as Kafka's ConsumerGroupCommand --state shows them."""
    out = kafka.consumer_group_command("--describe", *[a for g in groups for a in ("--group", g)],
                                       "--state")
    return {m.group(1): m.group(2) for m in re.finditer(r"^(\S+)\s+\S+:\d+\s+\((\d+)\)",
                                                         out.stdout, re.M)}


def _epoch(kafka, group: str) -> int | None:
    found = re.findall(TARGET_EPOCH.format(re.escape(group)), kafka.log_file.read_text(errors="replace"))
    return int(found[-1]) if found else None


def test_watch_all_as_a_fleet_in_a_real_terminal(kafka, topic_factory, consumer_factory,
                                                tmp_path):
    prefix = f"top{uuid.uuid4().hex[:6]}"
    empty_a, empty_b, epochs, classic = (f"{prefix}-{n}" for n in ("a", "b", "c", "d"))
    topic = topic_factory(4)
    produce(kafka.bootstrap, topic, {0: 5, 1: 5})
    commit(kafka.bootstrap, empty_a, {(topic, 0): 3})
    commit(kafka.bootstrap, empty_b, {(topic, 0): 5, (topic, 1): 1})
    first = [consumer_factory(classic, topic, name=f"{classic}-{i}") for i in range(2)]
    for c in first:
        c.wait_assigned(count=2)
    kip848 = consumer_factory(epochs, topic, protocol="consumer", name=f"{epochs}-0")
    kip848.wait_assigned(count=4)
    epoch = wait_until(lambda: _epoch(kafka, epochs), 20, "the KIP-848 group's target epoch")
    since = last_stabilized(kafka, classic)

    # describe's view (pinned below); the records would add generations and past rounds
    command = [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, "watch", "--all",
               "--regex", f"^{prefix}-", "--interval", "0.5", "--source", "describe"]
    pane = Pane(tmp_path, command, 100, 30)
    try:
        # COORD: each group's coordinator, as Kafka's own tool names it
        coord = _coordinators(kafka, [empty_a, empty_b, epochs, classic])
        want = {empty_a: ("Empty", coord[empty_a], "classic", "0", "-", "0", "-", "-"),
                empty_b: ("Empty", coord[empty_b], "classic", "0", "-", "0", "-", "-"),
                epochs: ("Stable", coord[epochs], "consumer", "1", f"{epoch}/{epoch}", "0",
                         "-", "0"),
                classic: ("Stable", coord[classic], "classic", "2", "-", "0", "-", "-")}

        def rows(s: Seen) -> dict:
            return {r["GROUP"]: tuple(r.get(k) for k in s.columns[1:]) for r in s.rows}
        calm = wait_until(lambda: _look(pane, lambda s: rows(s) == want), 40,
                          "the four groups as the consumers and commits made them")
        assert calm.columns == ["GROUP", "STATE", "COORD", "TYPE", "MEMBERS", "GEN/EPOCH",
                                "REBAL/5m", "LAST REBAL", "BEHIND"]
        assert "no answer" not in calm.title
        assert calm.title.startswith("groupctl watch · 4 groups: 2 Empty, 2 Stable")
        assert calm.footer.startswith("most recent activity first")
        # nothing happens: the clock in the title still moves on
        wait_until(lambda: _look(pane, lambda s: s.clock not in (None, calm.clock)), 10,
                   "the title's clock ticking")

        # churn the classic group: a third member joins
        consumer_factory(classic, topic, name=f"{classic}-2").wait_assigned()

        def churned(s: Seen) -> bool:
            told = len([n for n in stabilized(kafka, classic) if n > since])
            row = s.row(classic)
            return (s.order[:1] == [classic] and row.get("MEMBERS") == "3"
                    and row.get("STATE") == "Stable" and told >= 1
                    and row.get("REBAL/5m") == str(told))
        seen = wait_until(lambda: _look(pane, churned), 40, f"{classic} on top, rebalanced")
        assert re.fullmatch(r"\d+s ago", seen.row(classic)["LAST REBAL"])

        # then the KIP-848 group: a second member; it goes above (most recent first)
        consumer_factory(epochs, topic, protocol="consumer", name=f"{epochs}-1").wait_assigned()

        def moved(s: Seen) -> bool:
            now = _epoch(kafka, epochs)
            row = s.row(epochs)
            return (s.order[:2] == [epochs, classic] and row.get("MEMBERS") == "2"
                    and now is not None and now > epoch and row.get("GEN/EPOCH") == f"{now}/{now}"
                    and row.get("REBAL/5m", "0") != "0" and row.get("BEHIND") == "0")
        wait_until(lambda: _look(pane, moved), 40, f"{epochs} above {classic}")

        # a small window: columns go, rows go, the footer counts them
        pane.resize(60, 7)

        def small(s: Seen) -> bool:
            return (s.order == [epochs, classic, *s.order[2:]] and len(s.rows) == 3
                    and s.footer.startswith("… 1 more group not shown")
                    and "TYPE" not in s.columns and "STATE" in s.columns)
        narrow = wait_until(lambda: _look(pane, small), 15, "the view fitted to 60x7")
        assert all(len(line) <= 60 for line in narrow.screen.split("\n"))

        pane.interrupt()
        assert _ended(pane) == 0, pane.errors.read_text()
        history = pane.screen(history=True)
        told = len([n for n in stabilized(kafka, classic) if n > since])
        # librdkafka's members report no generation: the count is said to be "at least"
        assert re.search(rf"summary {classic}: (at least )?{told} rebalances?( \([^)]*\))?,",
                         history), history
        for g in (empty_a, empty_b, epochs):
            assert f"summary {g}: " in history, history
        assert "None" not in history and "Traceback" not in pane.errors.read_text()
    finally:
        pane.kill()


def _ended(pane: Pane) -> int:
    box: list[int] = []

    def done() -> bool:
        status = pane.exit_status()
        if status is not None:
            box.append(status)
        return status is not None
    try:
        wait_until(done, 20, "the watch ending after Ctrl-C")
    except AssertionError as exc:   # say what was still there: the screen, its stderr, ps
        ps = subprocess.run(["ps", "-eo", "pid,ppid,stat,etime,args"], capture_output=True,
                            text=True).stdout
        alive = "\n".join(ln for ln in ps.splitlines() if "groupctl" in ln and "watch" in ln)
        raise AssertionError(f"{exc}\nscreen:\n{pane.screen(history=True)}\nstderr:\n"
                             f"{pane.errors.read_text()}\nprocesses:\n{alive}") from None
    return box[0]


def _kafka_lags(kafka, group: str) -> list[int]:
    """ConsumerGroupCommand's LAG column (ground truth groupctl did not write)."""
    rows = cgc_rows(kafka, "--describe", "--group", group)
    return [int(r["LAG"]) for r in rows if r.get("LAG", "-") != "-"]


def _kafka_lag(kafka, group: str) -> int:
    return sum(_kafka_lags(kafka, group))


def test_watch_lag_in_a_real_terminal_top_and_full(kafka, topic_factory, tmp_path):
    """`watch --lag` on a terminal (issue 19): the top view's LAG column and the full
    view's lag line show each group's lag as ConsumerGroupCommand computes it, and follow
    it when records arrive."""
    prefix = f"lag{uuid.uuid4().hex[:6]}"
    behind_a, behind_b = f"{prefix}-a", f"{prefix}-b"
    topic = topic_factory(2)
    produce(kafka.bootstrap, topic, {0: 5, 1: 5})
    commit(kafka.bootstrap, behind_a, {(topic, 0): 3})
    commit(kafka.bootstrap, behind_b, {(topic, 0): 5, (topic, 1): 1})
    assert (_kafka_lag(kafka, behind_a), _kafka_lag(kafka, behind_b)) == (2, 4)
    watch = [sys.executable, "-m", "groupctl", "-b", kafka.bootstrap, "watch",
             "--interval", "0.5", "--lag", "--lag-interval", "0.5"]
    (tmp_path / "top").mkdir()
    (tmp_path / "full").mkdir()
    pane = Pane(tmp_path / "top", [*watch, "--all", "--regex", f"^{prefix}-"], 100, 20)
    try:
        def lags(want: dict):
            return lambda s: s.columns[-1:] == ["LAG"] and {
                r["GROUP"]: r.get("LAG") for r in s.rows} == want
        wait_until(lambda: _look(pane, lags({behind_a: "2", behind_b: "4"})), 40,
                   "each group's lag in the LAG column")
        produce(kafka.bootstrap, topic, {0: 3})
        truth = {g: str(_kafka_lag(kafka, g)) for g in (behind_a, behind_b)}
        assert truth == {behind_a: "5", behind_b: "7"}
        wait_until(lambda: _look(pane, lags(truth)), 40, "the lag following new records")
        pane.interrupt()
        assert _ended(pane) == 0, pane.errors.read_text()
    finally:
        pane.kill()
    pane = Pane(tmp_path / "full", [*watch, behind_b], 120, 20)
    try:
        lags = _kafka_lags(kafka, behind_b)
        line = re.compile(rf"^lag {sum(lags)}  \(largest partition {max(lags)}, "
                          r"read \d+ s ago\)\s*$", re.M)
        wait_until(lambda: line.search(pane.screen()) or None, 40, "the full view's lag line")
        pane.interrupt()
        assert _ended(pane) == 0, pane.errors.read_text()
    finally:
        pane.kill()
