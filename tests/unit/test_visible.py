"""render/visible.py: names from the cluster are shown, never obeyed (issue 36). The
function itself against Unicode's tables, the cuts, and every human-readable writer fed
the corpus: tables (emit), rich's own strings (markup and emoji codes are text), the live
view, the plain event lines, the watch summary, confirmation prompts and stderr."""
from __future__ import annotations

import io
import re
import sys
import unicodedata

import pytest

from groupctl.cli.env import Env, Settings
from groupctl.render.cells import short_id
from groupctl.render.notation import clip
from groupctl.render.visible import cut_head, cut_tail, visible, visible_data

CORPUS = {
    "CSI 2J": "\x1b[2J",
    "OSC 0 title": "\x1b]0;PWNED\x07",
    "OSC 52 clipboard": "\x1b]52;c;UFdORUQ=\x07",
    "OSC 8 link": "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "a forged row": "\nFORGED ROW",
    "carriage return": "\rover",
    "tab": "\tx",
    "DEL": "\x7f",
    "bidi override": "\u202eevil",
    "bidi isolate": "\u2066x\u2069",
    "zero-width joiner": "a\u200db",
    "zero-width space": "a\u200bb",
    "BOM": "\ufeff",
    "C1 CSI": "\x9b2J",
    "line separator": "a\u2028b",
    "lone surrogate": "\udce9",
}
HOSTILE = "g-" + "".join(CORPUS.values())
# what no human-readable output may hold (colour codes are off: the writers get no terminal)
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069"
                 "\ufeff\ud800-\udfff]")
ESCAPED = {"\n", "\r", "\t"}


def test_every_control_format_and_separator_character_is_escaped():
    categories = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    newer_cf = range(0x13439, 0x13440)   # Cf from Unicode 15 on (Egyptian format controls)
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        escaped = visible(ch) != ch
        assert escaped == (unicodedata.category(ch) in categories or code in newer_cf), hex(code)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_each_attack_is_shown_as_an_escape(name):
    shown = visible(CORPUS[name])
    assert RAW.search(shown) is None, (name, shown)
    assert shown.isprintable(), shown
    assert visible(shown) == shown   # escaping twice is escaping once


def test_escapes_are_written_as_python_writes_them():
    assert visible("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert visible("\n\r\t\x7f\x9b") == "\\n\\r\\t\\x7f\\x9b"
    assert visible("\u202e\u200d\U000e0041") == "\\u202e\\u200d\\U000e0041"
    assert visible("orders-ä-日本-🙂 [bold] :smile:") == "orders-ä-日本-🙂 [bold] :smile:"


def test_visible_data_reaches_every_string_and_leaves_the_rest():
    data = {"group\x1b": [{"member": "m\n", "n": 3, "none": None}], "t": ("a\u202e",)}
    assert visible_data(data) == {"group\\x1b": [{"member": "m\\n", "n": 3, "none": None}],
                                  "t": ["a\\u202e"]}


def test_cuts_never_split_an_escape():
    text = visible("ab\x1bcdefgh\u202e")     # ab\x1bcdefgh\u202e
    for width in range(len(text) + 1):
        head, tail = cut_head(text, width), cut_tail(text, width)
        assert len(head) <= width and len(tail) <= width
        assert text.startswith(head) and text.endswith(tail)
        for piece in (head, tail):   # a cut escape would leave a `\` or `\x1` behind
            assert re.search(r"\\(?!x[0-9a-f]{2}|u[0-9a-f]{4})", piece) is None, (width, piece)
    long = visible("client\x1b]0;PWNED\x07-0123456789abcdef")
    cut = short_id(long)
    assert "…" in cut and re.search(r"\\(?!x[0-9a-f]{2})", cut) is None, cut
    clipped = clip(visible("\x1b" * 20), 9)
    assert clipped == "\\x1b\\x1b…", clipped


def _env(fmt: str = "table", terminal: bool = False) -> Env:
    return Env(stdout=io.StringIO(), stderr=io.StringIO(), stdout_is_terminal=terminal,
               settings=Settings(output=fmt, no_color=True))


def _clean(text: str) -> None:
    assert RAW.search(text.replace("\n", "")) is None, repr(text)
    assert "FORGED" not in "".join(ln[:6] for ln in text.splitlines()), text
    assert "\\x1b" in text or "\\u202e" in text, text


def test_tables_list_and_describe_show_the_corpus_escaped():
    from groupctl.cli.groups import _describe_table
    from groupctl.observe.reads import model
    from groupctl.render.groups import list_table
    from groupctl.render.output import emit

    g = model.GroupDescription(group=HOSTILE, type="classic", state="Stable",
                               protocol_type="consumer", protocol="range", generation=3,
                               coordinator={"id": 1, "host": "h", "port": 9092},
                               coordinator_partition=7)
    g.members = [model.Member(f"c{HOSTILE}-0123", client_id=f"c{HOSTILE}", host="/10.0.0.1",
                              instance_id=f"i{HOSTILE}",
                              assignment=[model.TopicPartitions(f"t{HOSTILE}", [0])])]
    for fmt in ("table", "wide"):
        env = _env(fmt)
        emit(env, [g.to_dict()], _describe_table)
        out = env.stdout.getvalue()
        _clean(out)
        assert "GROUP g-" in out.replace("\n", "")
    env = _env()
    emit(env, [{"group": HOSTILE, "state": "Stable", "type": "classic",
                "protocol_type": "consumer", "coordinator": 1}], list_table)
    _clean(env.stdout.getvalue())


def test_rich_reads_no_markup_or_emoji_in_a_name():
    env = _env()
    console = env.console()
    console.print("group [/x] :smile: [bold]b")          # raised MarkupError before
    console.print(f"name {HOSTILE}")
    out = env.stdout.getvalue()
    assert "group [/x] :smile: [bold]b" in out
    _clean(out.split("\n", 1)[1])


def test_the_analyze_summary_shows_the_corpus_escaped():
    from groupctl.render.analyze import summary_table
    from groupctl.render.output import emit

    metric = {"group": HOSTILE, "type": "classic", "rebalances": 2, "duration_ms_p50": 1,
              "duration_ms_p95": 1, "duration_ms_max": 1, "time_rebalancing_ms": 2,
              "failed_members": 0, "left_members": 0, "storms": 0,
              "top_reason": f"member {HOSTILE} joined", "client_unowned_partition_ms_total": 0}
    env = _env()
    emit(env, {"metrics": [metric], "episodes": [], "storms": [], "moves": [],
               "out": "o", "report": "r"}, summary_table)
    _clean(env.stdout.getvalue())


def _events():
    base = {"ts": "2026-11-26T20:00:00.000Z", "group": HOSTILE, "source": "describe"}
    return [
        {**base, "event": "member_joined", "member_id": f"c{HOSTILE}-1", "client_id": HOSTILE,
         "host": "/10.0.0.1"},
        {**base, "event": "rebalance", "from_generation": 1, "to_generation": 2,
         "ended": base["ts"], "duration_ms": 5, "members_after": [f"c{HOSTILE}-1"],
         "moved_partitions": 0, "reason": f"member c{HOSTILE}-1 joined"},
        {**base, "event": "error", "api": "JoinGroup", "name": HOSTILE, "code": 1},
    ]


def test_the_plain_event_lines_and_the_summary_show_the_corpus_escaped():
    from groupctl.render.live import open_sinks
    from groupctl.render.watch_lines import summary_text

    env = _env()
    with open_sinks(env) as sinks:
        for e in _events():
            sinks(e)
    out = env.stdout.getvalue()
    assert len(out.splitlines()) == 3, out   # one line an event: no forged row
    _clean(out)
    summary = summary_text([{"group": HOSTILE, "rebalances": 1, "rebalancing_ms_total": 5,
                             "rebalancing_ms_longest": 5, "state": "Stable",
                             "flapping_members": [HOSTILE]}], "table")
    assert len(summary.splitlines()) == 1
    _clean(summary)


@pytest.mark.parametrize("view", ["full", "top"])
def test_the_live_view_shows_the_corpus_escaped(view):
    from groupctl.render.watch import _LiveSink

    env = _env(terminal=True)
    with _LiveSink(env, view) as live:
        for e in _events():
            live(e)
        live.draw(force=True)
    out = env.stdout.getvalue()
    out = re.sub("\x1b\\[[0-9;?]*[A-Za-z]|\r", "", out)   # rich's own cursor moves
    _clean(out)


def _owned_by_a_watch():
    """Hostile names in a group's one status, as its owner (a Watcher's reducer: the
    stories fold into it) holds them: as the cluster wrote them, unescaped. Returns the
    reducer and the events it folded, which the live sink is then told."""
    from groupctl.observe.sources.lag import GroupLag
    from groupctl.observe.state.reducer import Reducer

    member, topic = f"c{HOSTILE}-1", f"t{HOSTILE}"
    asg = [{"topic": topic, "partitions": [0]}]
    base = {"ts": "2026-11-26T20:00:00.000Z", "group": HOSTILE, "source": "describe"}
    events = [
        {**base, "event": "snapshot", "state": f"Stable{HOSTILE}", "type": "classic",
         "generation": 1, "protocol": HOSTILE,
         "members": [{"member_id": member, "client_id": HOSTILE, "assignment": asg}]},
        {**base, "event": "probe", "action": "joined", "member_id": f"p{HOSTILE}"},
        {**base, "event": "generation", "generation": 2, "protocol": HOSTILE,
         "leader": f"l{HOSTILE}", "members": [member]},
        {**base, "event": "assignment", "member_id": member, "generation": 2,
         "assigned": asg, "added": asg, "revoked": []},
        {**base, "event": "assignment", "member_id": None, "generation": 2,
         "assigned": asg, "added": asg, "revoked": []},
        {**base, "event": "rebalance", "from_generation": 1, "to_generation": 2,
         "ended": base["ts"], "duration_ms": 5, "members_after": [member],
         "assignments": {member: asg}, "moved_partitions": 0,
         "reason": f"member {member} joined"},
        {**base, "event": "error", "api": "Heartbeat", "name": HOSTILE, "code": 1},
    ]
    reducer = Reducer()
    for e in events:
        reducer.apply(e)
    reducer.apply_lag(GroupLag(HOSTILE, 1.0, 2.0, {(topic, 0): 5, ("other", 0): 1}))
    status = reducer.groups[HOSTILE]
    assert RAW.search(status.group) and RAW.search(next(iter(status.members)))   # raw
    return reducer, events


@pytest.mark.parametrize("view", ["full", "top"])
def test_the_live_view_draws_the_owners_hostile_names_escaped(view):
    """Issue 30: the live view draws each group's one status (not a fold of escaped
    events of its own), so every group, member, topic, state, protocol, leader and reason
    it draws from the status is made visible as drawn."""
    from rich.console import Console

    from groupctl.render.top import render_top
    from groupctl.render.watch import _LiveSink, render_model

    reducer, events = _owned_by_a_watch()
    env = _env(terminal=True)
    with _LiveSink(env, view) as live:
        live.read_from(reducer.groups, lag=True)
        for e in events:
            live(e)
        assert live.models[HOSTILE].status is reducer.groups[HOSTILE]
        live.draw(force=True)
    out = re.sub("\x1b\\[[0-9;?]*[A-Za-z]|\r", "", env.stdout.getvalue())   # rich's cursor
    _clean(out)
    # drawn on a console that escapes nothing itself: the view's own escapes, each of them
    plain = Console(file=io.StringIO(), width=400, color_system=None)
    model = live.models[HOSTILE]
    plain.print(render_model(model, 3.0, lag=True) if view == "full"
                else render_top(reducer.groups.values(), 3.0, 400, 30, lag=True))
    drawn = plain.file.getvalue()
    _clean(drawn)
    names = ([f"c{HOSTILE}-1", f"t{HOSTILE}", f"l{HOSTILE}", f"p{HOSTILE}",
              f"member c{HOSTILE}-1 joined"] if view == "full" else [f"Stable{HOSTILE}"])
    for name in [HOSTILE, *names]:
        assert visible(name)[:40] in drawn.replace("\n", ""), name


def test_stderr_errors_warnings_and_notes_show_the_corpus_escaped():
    env = _env()
    env.fail(f"group {HOSTILE} not found", 5)
    env.warn(HOSTILE)
    env.note(f"groupctl: watch: {HOSTILE}")
    lines = env.stderr.getvalue().splitlines()
    assert len(lines) == 3, lines
    _clean(env.stderr.getvalue())


def test_a_confirmation_prompt_shows_the_corpus_escaped():
    from types import SimpleNamespace

    from groupctl.render.steer import confirm_summary

    member = SimpleNamespace(member_id=f"c{HOSTILE}", client_id=HOSTILE, instance_id=HOSTILE,
                             assignment=[])
    desc = SimpleNamespace(group=HOSTILE, type="classic", state="Stable", generation=1,
                           members=[member])
    text = confirm_summary(desc)
    assert len(text.splitlines()) == 2
    _clean(text)
