"""What the live commands (`watch`, `join --watch`) put on screen and how they end
(issue 23): no `None` anywhere (unknown is `-`; a KIP-848 group shows its epochs and
server assignor; an unknown classic generation is explained once), one partition
notation with describe, the reason cut at a word boundary, plurals, a header that ticks
without events, a closed pipe noticed in a calm stream, the summary in the -o format,
and --record paths refused before any work (exit 2)."""
from __future__ import annotations

import asyncio
import io
import os
from dataclasses import dataclass, field

import pytest
import yaml
from rich.console import Console

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.cli.live import READER_GONE, follow, open_record
from groupctl.errors import UsageError
from groupctl.events import envelope, iso_ts
from groupctl.render.groups import partitions_text as describe_partitions
from groupctl.render.live import open_sinks, stdout_closed
from groupctl.render.notation import clip, plural
from groupctl.render.watch import (
    _LiveSink,
    header_text,
    plain_line,
    render_model,
    summary_line,
    timeline_row,
)
from groupctl.render.watch_lines import UNKNOWN_GENERATION, summary_text

T01 = [{"topic": "orders", "partitions": [0, 1]}]


@dataclass
class Shown:
    """What render_model / header_text read of a group's model (WatchModel's interface),
    set directly: how events fill it (the reducer) is not what these tests are about."""

    group: str | None = None
    type: str | None = None
    state: str | None = None
    generation: int | None = None
    protocol: str | None = None
    leader: str | None = None
    epochs: tuple | None = None
    member_id: str | None = None
    member_state: str | None = None
    member_epoch: int | None = None
    last_rebalance: str | None = None
    members: dict = field(default_factory=dict)
    gains: dict = field(default_factory=dict)
    targets: dict = field(default_factory=dict)
    tasks: dict = field(default_factory=dict)
    timeline: list = field(default_factory=list)
    diffs: list = field(default_factory=list)
    errors: list = field(default_factory=list)

    @property
    def group_epoch(self):
        return None if self.epochs is None else self.epochs[0]

    @property
    def assignment_epoch(self):
        return None if self.epochs is None else self.epochs[1]

    def reconciliation(self, mid: str) -> str:
        return "-"


def ev(body: dict, source: str = "describe", at: float = 0.0) -> dict:
    return envelope(body, group="g", cluster=None, source=source, at=at)


def screen(model, now: float | None = None) -> str:
    console = Console(width=250, record=True, color_system=None)
    console.print(render_model(model, now))
    return console.export_text()


# ---- no None on screen -------------------------------------------------------------------

def test_every_event_with_unknown_fields_reads_dash_not_none():
    bodies = [
        {"event": "state", "state": "Stable"},
        {"event": "epoch"},
        {"event": "type_changed", "type": "consumer"},
        {"event": "generation", "generation": 5},
        {"event": "assignment", "member_id": "a", "assigned": T01},
        {"event": "rebalance", "from_generation": None, "to_generation": 5,
         "duration_ms": 54, "members_after": None},
        {"event": "member_joined", "member_id": "a"},
        {"event": "member_left", "member_id": "a"},
        {"event": "probe", "action": "joined"},
        {"event": "error", "api": "Heartbeat", "code": 27, "name": "REBALANCE_IN_PROGRESS"},
    ]
    for body in bodies:
        line = plain_line(ev(body))
        assert "None" not in line, line
    # the pipeline's `snapshot` (docs/reference/events.md), as it will come: not in events.py here yet
    snapshot = {"v": 1, "ts": iso_ts(0), "source": "describe", "cluster": None, "group": "g",
                "event": "snapshot", "state": "Stable", "type": "classic", "generation": None,
                "protocol": None, "members": [{"member_id": "a", "assignment": T01}]}
    assert plain_line(snapshot).endswith(
        f"g snapshot state Stable type classic generation unknown ({UNKNOWN_GENERATION}) "
        "protocol - members 1: a orders:0-1")
    assert plain_line(ev(bodies[3])).endswith("generation 5 protocol=- leader=-")
    assert plain_line(ev(bodies[5])).endswith(
        "rebalance - -> 5 in 54 ms, members -, moved -, reason: -")


def test_a_kip848_probe_line_shows_its_member_epoch_not_gen_none():
    line = plain_line(ev({"event": "probe", "action": "joined", "member_id": "m",
                          "member_epoch": 4}, "probe"))
    assert line.endswith("probe joined member=m member_epoch=4")
    line = plain_line(ev({"event": "assignment", "member_id": "m", "assigned": [],
                          "added": [], "revoked": [], "member_epoch": 4}, "probe"))
    assert "gen" not in line and line.endswith("added=(none) revoked=(none) member_epoch=4")


def test_a_records_watch_line_names_its_group_as_the_describe_one_does():
    """Issue 32: `watch --source records g1 g2` into a pipe: which group a line is of."""
    for source in ("describe", "records"):
        line = plain_line(ev({"event": "state", "state": "Stable", "previous": None}, source))
        assert " g group state - -> Stable" in line, (source, line)
    line = plain_line(ev({"event": "probe", "action": "joined", "member_id": "m"}, "probe"))
    assert " g " not in line
    # a group that only committed offsets has no generation: nothing to explain
    line = plain_line(ev({"event": "snapshot", "state": "Empty", "type": "classic",
                          "generation": None, "members": []}, "records"), set())
    assert line.endswith(" g snapshot state Empty type classic generation - protocol - members 0")


def test_a_rebalance_under_way_at_the_first_look_reads_as_a_lower_bound():
    r = {"event": "rebalance", "from_generation": 4, "to_generation": 5, "started": None,
         "ended": iso_ts(1.0), "duration_ms": 1000, "members_after": ["a"],
         "moved_partitions": 0, "reason": "member a joined", "duration_is_lower_bound": True}
    assert "rebalance 4 -> 5 in at least 1000 ms (under way when first seen)," in plain_line(ev(r))
    assert timeline_row(r)[3] == "≥1000"
    assert timeline_row({**r, "duration_is_lower_bound": False})[3] == "1000"


def test_an_unknown_classic_generation_is_explained_once_per_stream():
    said: set = set()
    unknown = ev({"event": "rebalance", "from_generation": None, "to_generation": None,
                  "duration_ms": 54, "members_after": ["a"], "moved_partitions": 0,
                  "reason": "member a joined"})
    first, second = plain_line(unknown, said), plain_line(unknown, said)
    assert f"rebalance generation unknown ({UNKNOWN_GENERATION}) in 54 ms" in first
    assert "rebalance generation unknown in 54 ms" in second
    assert "- -> -" not in first + second


def test_the_kip848_header_shows_epochs_and_the_server_assignor():
    m = Shown(group="g", state="Stable", protocol="uniform", epochs=(8, 8),
                   member_id="me", member_epoch=7, members={"me": [], "a": T01})
    head = header_text(m)
    assert head.startswith("group g  group epoch 8  assignment epoch 8  state Stable "
                           "(probe -)  members 2  assignor uniform  last rebalance -")
    assert head.endswith("\nprobe me  member epoch 7")   # the broker assigns: no leader
    assert "None" not in screen(m)


def test_the_classic_header_before_anything_is_known_is_dashes():
    m = Shown(group="g", member_id="me")
    head = header_text(m)
    assert "None" not in head
    assert head == ("group g  generation -  state - (probe -)  members 0  protocol -  "
                    "last rebalance -\nprobe me  leader -")


def test_a_passive_view_of_eager_librdkafka_members_says_why_there_is_no_generation():
    m = Shown(group="g", state="Stable", protocol="range", members={"a": T01},
                   last_rebalance=iso_ts(10.0))
    m.timeline.append(ev({"event": "rebalance", "from_generation": None, "to_generation": None,
                          "ended": iso_ts(10.0), "duration_ms": 54, "members_after": ["a"],
                          "moved_partitions": 2, "reason": "member a joined"}))
    text = screen(m, now=13.0)
    assert f"generation unknown ({UNKNOWN_GENERATION})" in text
    assert text.count(UNKNOWN_GENERATION) == 1 and "None" not in text
    assert "3 s ago" in text
    assert timeline_row(m.timeline[0])[:2] == ["-", "-"]


# ---- one notation, clipped reasons, plurals ---------------------------------------------

def test_the_live_view_writes_partitions_as_describe_does():
    m = Shown(group="g", state="Stable", generation=3, members={"a": T01})
    m.gains["a"] = (T01, [])
    assert describe_partitions(T01) == "orders:0-1"
    text = screen(m)
    assert "orders:0-1" in text and "orders:0,1" not in text
    line = plain_line(ev({"event": "assignment", "member_id": "a", "generation": 3,
                          "assigned": T01, "added": T01, "revoked": []}))
    assert line.endswith("assignment gen 3 a: orders:0-1 added=orders:0-1 revoked=(none)")


def test_the_reason_column_is_cut_at_a_word_boundary():
    reason = "; ".join(f"member consumer-{i}-0123456789abcdef (client c{i}, host /10.0.0.{i}) "
                       "joined" for i in range(4))
    row = timeline_row({"from_generation": 1, "to_generation": 2, "ended": iso_ts(0),
                        "duration_ms": 5, "members_after": [], "moved_partitions": 0,
                        "reason": reason})
    cut = row[-1]
    assert len(cut) <= 120 and cut.endswith("…")
    kept = cut[:-1]
    assert reason.startswith(kept) and reason[len(kept)] in " ;,"   # a whole word kept
    assert clip("short reason", 120) == "short reason"
    assert clip("x" * 200, 10) == "x" * 9 + "…"


def test_plurals():
    assert plural(1, "rebalance") == "1 rebalance" and plural(2, "time") == "2 times"
    s = {"group": "g", "state": None, "rebalances": 1, "rebalancing_ms_total": 5,
         "rebalancing_ms_longest": 5, "flapping_members": []}
    assert summary_line(s) == ("summary g: 1 rebalance, 5 ms rebalancing (longest 5 ms), "
                               "state -, flapping members: none")


def test_the_watchers_condition_message_counts_right(monkeypatch):
    from test_watch_story import classic, m, run_watcher

    from groupctl.observe.watch import ConditionViolated, WatchSettings

    rounds = [classic("Stable", 1, m("a", ("t", [0]))), classic("Stable", 2, m("a", ("t", [0])),
                                                                 m("b", ("t", [1])))]
    from groupctl.observe.reads.describe import DescribeResult

    code, *_ = run_watcher([DescribeResult([d], {}) for d in rounds],
                           WatchSettings(groups=["g"], interval=0.01, duration=5,
                                         max_rebalances=0), monkeypatch)
    assert isinstance(code, ConditionViolated)
    assert "rebalanced 1 time (--max-rebalances 0)" in str(code)


# ---- the summary in the -o format -------------------------------------------------------

SUMMARY = {"group": "g", "state": "Stable", "rebalances": 2, "rebalancing_ms_total": 300,
           "rebalancing_ms_longest": 200, "flapping_members": ["x"]}


def test_the_yaml_summary_is_yaml_and_the_json_one_json():
    docs = list(yaml.safe_load_all(summary_text([SUMMARY, {**SUMMARY, "group": "h"}], "yaml")))
    assert docs == [{"summary": SUMMARY}, {"summary": {**SUMMARY, "group": "h"}}]
    assert not summary_text([SUMMARY], "yaml").lstrip("-\n").startswith("{")
    import json

    assert [json.loads(line) for line in summary_text([SUMMARY], "ndjson").splitlines()] == [
        {"summary": SUMMARY}]
    assert summary_text([SUMMARY], "table").startswith("summary g: 2 rebalances")


# ---- the header ticks ---------------------------------------------------------------------

class _Clock:
    def __init__(self, t: float):
        self.t = t

    def __call__(self) -> float:
        return self.t


def test_the_live_view_redraws_on_its_tick_without_events():
    out = io.StringIO()
    env = Env(stdout=out, stderr=io.StringIO(), stdout_is_terminal=True)
    clock = _Clock(100.0)
    with _LiveSink(env) as live:
        live.now = clock
        live(ev({"event": "rebalance", "from_generation": 1, "to_generation": 2,
                 "ended": iso_ts(100.0), "duration_ms": 5, "members_after": ["a"],
                 "moved_partitions": 0, "reason": "member a joined"}))
        live.draw()
        assert "last rebalance 0 s ago" in out.getvalue()
        clock.t = 100.5
        drawn = len(out.getvalue())
        live.draw()                       # nothing new and under a second: not drawn
        assert len(out.getvalue()) == drawn
        clock.t = 103.0
        live.draw()                       # no event, but the clock moved on
        assert "last rebalance 3 s ago" in out.getvalue()


# ---- a closed pipe -----------------------------------------------------------------------

def test_stdout_closed_sees_a_pipe_whose_reader_went(tmp_path):
    r, w = os.pipe()
    with os.fdopen(w, "w") as writer:
        assert not stdout_closed(writer)
        os.close(r)
        assert stdout_closed(writer)
    with open(tmp_path / "f", "w") as f:
        assert not stdout_closed(f)
    assert not stdout_closed(io.StringIO())


class _FakeSinks:
    def __init__(self, gone_after_ticks: int):
        self.ticks = 0
        self.gone_after = gone_after_ticks
        self.reader_gone = False
        self.on_gone = None

    def tick(self):
        self.ticks += 1
        if self.ticks == self.gone_after and not self.reader_gone:
            self.reader_gone = True
            self.on_gone()


def test_follow_stops_calm_work_once_when_the_reader_goes_and_lets_it_clean_up():
    seen: list = []

    async def calm_work():
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError as exc:
            seen.append(exc.args)
            await asyncio.sleep(0.05)     # the probe's leave: not cut short
            seen.append("left")
            raise

    sinks = _FakeSinks(gone_after_ticks=2)
    result = asyncio.run(follow(sinks, calm_work(), tick_s=0.01))
    assert result is None and seen == [(READER_GONE,), "left"]


def test_follow_on_a_signal_waits_for_the_works_cleanup():
    seen: list = []

    async def work():
        try:
            await asyncio.sleep(60)
        finally:
            await asyncio.sleep(0.05)
            seen.append("left")

    async def main():
        task = asyncio.ensure_future(follow(_FakeSinks(gone_after_ticks=-1), work(), 0.01))
        await asyncio.sleep(0.05)
        task.cancel()                     # what run_async does on SIGINT / SIGTERM
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert seen == ["left"]


def test_a_write_into_a_closed_pipe_keeps_the_record_and_ends_quietly(tmp_path):
    r, w = os.pipe()
    os.close(r)
    stdout = os.fdopen(os.dup(w), "w")
    os.close(w)
    env = Env(stdout=stdout, stderr=io.StringIO())
    env.settings.output = "ndjson"
    silenced: list = []
    env.silence_broken_pipe = lambda: silenced.append(True)
    record = open_record(str(tmp_path / "events.ndjson"))
    gone: list = []
    with open_sinks(env, record) as sinks:
        sinks.on_gone = lambda: gone.append(True)
        sinks(ev({"event": "state", "state": "Stable"}))
        sinks(ev({"event": "probe", "action": "left", "member_id": "me"}, "probe"))
    assert sinks.reader_gone and gone == [True] and silenced == [True]
    kinds = [yaml.safe_load(line)["event"] for line in
             (tmp_path / "events.ndjson").read_text().splitlines()]
    assert kinds == ["state", "probe"]
    try:
        stdout.close()
    except BrokenPipeError:
        pass


# ---- --record paths ------------------------------------------------------------------------

@pytest.mark.parametrize("path, words", [
    ("{tmp}/no/such/dir/events.ndjson", "no such directory"),
    ("{tmp}", "is a directory"),
    ("/proc/version", "cannot write: "),
])
def test_open_record_refuses_paths_it_cannot_write(tmp_path, path, words):
    path = path.format(tmp=tmp_path)
    with pytest.raises(UsageError, match=words) as info:
        open_record(path)
    assert path in str(info.value)


@pytest.mark.parametrize("command", [["watch", "g"], ["join", "g", "--watch"]])
@pytest.mark.parametrize("path", ["{tmp}/missing/x.ndjson", "{tmp}", "/proc/version"])
def test_a_bad_record_path_is_exit_2_before_any_work(tmp_path, command, path):
    path = path.format(tmp=tmp_path)
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    # port 9: nothing listens; reaching for the broker first would be exit 3, not 2
    code = invoke(["-b", "127.0.0.1:9", "--timeout", "2", *command, "--record", path], env)
    err = env.stderr.getvalue()
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith(f"groupctl: error: --record {path}: ")


def test_a_summary_holding_enum_values_is_still_yaml():
    from enum import Enum

    class State(str, Enum):
        DEAD = "Dead"

    text = summary_text([{**SUMMARY, "state": State.DEAD}], "yaml")
    assert list(yaml.safe_load_all(text)) == [{"summary": {**SUMMARY, "state": "Dead"}}]
