"""The fleet on a terminal (issue 22): `watch --all` as one row per group, read from the
one reducer. Pure rendering with fixed state and an injected clock: the exact rows, most
recent activity first, fitted to the height (a footer counting the rest) and the width
(columns dropped in rank order, the name cut), the clock and ages ticking; the reducer's
fields behind it (activity time, rebalances in a sliding window, members behind their
target); and when the live sink chooses the top view."""
from __future__ import annotations

import io
import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.events import envelope, iso_ts
from groupctl.observe.state.reducer import REBALANCE_WINDOW_S, Reducer
from groupctl.render.top import COLUMNS, by_activity, fit_columns, render_top
from groupctl.render.watch import _LiveSink

T = 1_800_000_000.0   # 2027-01-15T08:00:00Z
TP = [{"topic": "t", "partitions": [0]}]
TP01 = [{"topic": "t", "partitions": [0, 1]}]


def tell(reducer: Reducer, group: str, body: dict, at: float) -> None:
    reducer.apply(envelope(body, group=group, cluster=None, source="describe", at=at))


def snapshot(kind: str, *, generation=None, epochs=(None, None), members=()) -> dict:
    return {"event": "snapshot", "state": "Stable", "type": kind, "generation": generation,
            "group_epoch": epochs[0], "assignment_epoch": epochs[1], "protocol": "range",
            "members": [{"member_id": m, "assignment": TP,
                         **({"target_assignment": target} if target is not None else {})}
                        for m, target in members]}


def rebalance(ended: float, to_generation=None, members=("a",)) -> dict:
    return {"event": "rebalance", "from_generation": None, "to_generation": to_generation,
            "started": iso_ts(ended - 0.05), "ended": iso_ts(ended), "duration_ms": 50,
            "members_before": [], "members_after": list(members), "moved_partitions": 1,
            "reason": "member a joined"}


def fleet() -> Reducer:
    """Five groups as a watch would have folded them, the last event at T + 10."""
    r = Reducer()
    tell(r, "orders", snapshot("consumer", epochs=(7, 7),
                               members=[("a", TP01), ("b", None)]), T)
    tell(r, "orders", rebalance(T + 5, members=("a", "b")), T + 5)
    tell(r, "payments", snapshot("classic", generation=3, members=[("c", None)]), T)
    tell(r, "payments", {"event": "state", "state": "PreparingRebalance",
                         "previous": "Stable"}, T + 10)
    tell(r, "idle", snapshot("classic", members=[]), T)
    tell(r, "shared", snapshot("share", epochs=(4, 3), members=[("s", None)]), T)
    tell(r, "gone", {"event": "state", "state": "Dead", "previous": None}, T + 1)
    return r


def lines(text) -> list[str]:
    console = Console(width=400, color_system=None, record=True)
    console.print(text)
    return console.export_text().rstrip("\n").split("\n")


# ---- the reducer's fields ------------------------------------------------------------------

def test_activity_is_the_last_event_a_first_look_aside():
    r = fleet()
    assert r.groups["idle"].active_at is None          # only its snapshot
    assert r.groups["orders"].active_at == T + 5
    assert r.groups["payments"].active_at == T + 10
    assert [s.group for s in by_activity(r.groups.values())] == \
        ["payments", "orders", "gone", "idle", "shared"]   # then the calm ones by name


def test_a_screenful_is_the_first_rows_of_the_whole_order():
    r = Reducer()
    for i in range(40):   # rounds share their time: ties go by name
        tell(r, f"g{i:02d}", snapshot("classic"), T)
        if i % 3:
            tell(r, f"g{i:02d}", {"event": "state", "state": "Empty", "previous": "Stable"},
                 T + i % 4)
    whole = [s.group for s in by_activity(r.groups.values())]
    assert whole[:3] == ["g07", "g11", "g19"] and whole[-1] == "g39"
    for limit in (1, 5, 26, 27, 30, 40, 50):
        assert [s.group for s in by_activity(r.groups.values(), limit)] == whole[:limit]


def test_rebalances_are_counted_in_a_sliding_window():
    r = Reducer()
    for t in (T, T + 100, T + 250, T + 400):
        tell(r, "g", rebalance(t), t)
    s = r.groups["g"]
    assert s.rebalances == 4
    assert s.rebalances_within(REBALANCE_WINDOW_S, T + 400) == 2     # (T + 100, T + 400]
    assert s.rebalances_within(REBALANCE_WINDOW_S, T + 560) == 1     # only T + 400 left
    assert s.rebalances_within(60, T + 420) == 1
    assert s.rebalances_within(REBALANCE_WINDOW_S, T + 701) == 0
    assert list(s.rebalance_ends) == [T + 250, T + 400]              # older ones pruned


def test_members_behind_target_only_where_the_broker_sets_targets():
    r = fleet()
    assert r.groups["orders"].members_behind_target == 1    # a holds t:0 of its t:0-1
    assert r.groups["payments"].members_behind_target is None
    assert r.groups["shared"].members_behind_target is None
    tell(r, "orders", {"event": "assignment", "member_id": "a", "assigned": TP01,
                       "added": [{"topic": "t", "partitions": [1]}], "revoked": [],
                       "target": TP01, "reconciled_ms": 40}, T + 12)
    assert r.groups["orders"].members_behind_target == 0
    assert r.groups["orders"].active_at == T + 12


# ---- the rows --------------------------------------------------------------------------------

def test_the_fleet_as_rows_most_recent_activity_first():
    shown = lines(render_top(fleet().groups.values(), T + 20, 100, 30))
    assert shown == [
        "groupctl watch · 5 groups: 3 Stable, 1 Dead, 1 PreparingRebalance · 1 rebalance in 5m "
        "· 08:00:20 UTC",
        "GROUP     STATE               TYPE      MEMBERS  GEN/EPOCH  REBAL/5m  LAST REBAL  BEHIND",
        "payments  PreparingRebalance  classic         1          3         0           -       -",
        "orders    Stable              consumer        2        7/7         1     15s ago       1",
        "gone      Dead                -               -          -         0           -       -",
        "idle      Stable              classic         0          -         0           -       -",
        "shared    Stable              share           1        4/3         0           -       -",
        "most recent activity first · watch GROUP shows one group in full",
    ]


def test_the_clock_and_the_ages_tick_without_events():
    r = fleet()
    before = lines(render_top(r.groups.values(), T + 20, 100, 30))
    after = lines(render_top(r.groups.values(), T + 21, 100, 30))
    assert before[0].endswith("08:00:20 UTC") and after[0].endswith("08:00:21 UTC")
    assert "15s ago" in before[3] and "16s ago" in after[3]
    later = lines(render_top(r.groups.values(), T + 5 + 3725, 100, 30))
    assert "1h02m ago" in later[3]
    assert later[3].split()[-4] == "0"   # out of the window now


def test_rows_fit_the_height_and_the_footer_counts_the_rest():
    r = Reducer()
    for i in range(50):
        tell(r, f"g{i:02d}", snapshot("classic", generation=1, members=[("m", None)]), T)
        tell(r, f"g{i:02d}", {"event": "state", "state": "Empty", "previous": "Stable"}, T + i)
    shown = lines(render_top(r.groups.values(), T + 60, 100, 12))
    assert len(shown) == 11                   # the terminal's last line stays free
    assert [ln.split()[0] for ln in shown[2:10]] == [f"g{i}" for i in range(49, 41, -1)]
    assert shown[-1] == "… 42 more groups not shown (most recent activity first)"
    assert shown[0].startswith("groupctl watch · 50 groups: 50 Empty · 0 rebalances in 5m")


@pytest.mark.parametrize("width", [100, 80, 60, 45, 30])
def test_narrow_terminals_drop_columns_in_rank_order_and_cut_names(width):
    r = fleet()
    tell(r, "billing-service-eu-west-1-consumers-of-the-invoices", snapshot("classic"), T)
    tell(r, "billing-service-eu-west-1-consumers-of-the-invoices",
         {"event": "state", "state": "Empty", "previous": "Stable"}, T + 15)
    shown = lines(render_top(r.groups.values(), T + 20, width, 30))
    assert all(cell_len(ln) <= width for ln in shown), shown
    header = shown[1]
    assert header.split()[:2] == ["GROUP", "STATE"]            # never dropped
    dropped = [c.title for c in COLUMNS if c.title not in header]
    ranks = sorted((c for c in COLUMNS if c.drop), key=lambda c: -c.drop)
    assert dropped == sorted([c.title for c in ranks[:len(dropped)]],
                             key=[c.title for c in COLUMNS].index)   # highest ranks first
    first = shown[2].split()[0]
    if width < 100:
        assert first.endswith("…") and "billing-service".startswith(first[:5])
    assert {100: [], 80: ["TYPE", "GEN/EPOCH"], 60: ["TYPE", "MEMBERS", "GEN/EPOCH", "BEHIND"],
            }.get(width, dropped) == dropped


def test_fit_columns_keeps_everything_when_there_is_room():
    widths = {c.title: len(c.title) for c in COLUMNS}
    kept, name = fit_columns(widths, 8, 200)
    assert kept == list(COLUMNS) and name == 8


def test_an_unknown_view_is_a_usage_error_before_any_work():
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", "127.0.0.1:1", "watch", "--all", "--view", "tops"], env)
    assert code == 2
    assert env.stderr.getvalue() == \
        "groupctl: error: --view must be one of auto, top, full, not 'tops'\n"


# ---- which view ------------------------------------------------------------------------------

def _text(out: io.StringIO) -> str:
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())


def _sink(view: str, fleet: bool, height: int = 30) -> tuple[_LiveSink, io.StringIO]:
    out = io.StringIO()
    sink = _LiveSink(Env(stdout=out, stderr=io.StringIO(), stdout_is_terminal=True),
                     view, fleet)
    sink.console.size = (100, height)
    sink.now = lambda: T + 20
    return sink, out


def _feed(sink: _LiveSink, groups: int) -> None:
    for i in range(groups):
        sink(envelope(snapshot("classic", generation=2, members=[("m1", None), ("m2", None)]),
                      group=f"g{i}", cluster=None, source="describe", at=T))


def test_watch_all_shows_the_top_view_and_one_group_stays_in_full():
    sink, out = _sink("auto", fleet=True)
    with sink:
        _feed(sink, 1)
    assert "GROUP  STATE" in _text(out) and "members" not in _text(out)
    sink, out = _sink("auto", fleet=False)
    with sink:
        _feed(sink, 1)
    assert "GROUP  STATE" not in _text(out)
    assert "group g0  type classic  generation 2  state Stable  members 2" in _text(out)


def test_named_groups_go_top_once_they_no_longer_fit_in_full_and_stay():
    sink, out = _sink("auto", fleet=False, height=40)
    with sink:
        _feed(sink, 2)
        sink.draw(force=True)
        assert not sink.top                      # two groups fit 40 lines in full
        _feed(sink, 6)
        sink.draw(force=True)
        assert sink.top
        del sink.models["g5"], sink.models["g4"], sink.models["g3"]
        sink.draw(force=True)
        assert sink.top                          # no flipping back
    last = _text(out).rstrip().split("\n")
    assert last[-1] == "most recent activity first · watch GROUP shows one group in full"
    assert [ln.split()[0] for ln in last[-4:-1]] == ["g0", "g1", "g2"]


def test_view_full_keeps_every_group_in_full():
    sink, out = _sink("full", fleet=True, height=60)
    with sink:
        _feed(sink, 3)
    assert not sink.top and "group g2  type classic  generation 2" in _text(out)
    assert "GROUP  STATE" not in _text(out)


# ---- watch --lag -----------------------------------------------------------------------------

def _lag(reducer: Reducer, group: str, by_partition: dict, at: float) -> None:
    from groupctl.observe.sources.lag import GroupLag

    reducer.apply_lag(GroupLag(group, at - 0.05, at, by_partition))


def test_lag_is_a_column_of_the_top_view_with_watch_lag_only():
    r = fleet()
    _lag(r, "orders", {("t", 0): 100, ("t", 1): 20}, T + 18)
    _lag(r, "payments", {}, T + 18)   # no commits: unknown, not 0
    shown = lines(render_top(r.groups.values(), T + 20, 100, 30, lag=True))
    assert shown[1].split()[-1] == "LAG"
    rows = {ln.split()[0]: ln.split()[-1] for ln in shown[2:7]}
    assert rows == {"payments": "-", "orders": "120", "gone": "-", "idle": "-", "shared": "-"}
    assert "LAG" not in lines(render_top(r.groups.values(), T + 20, 100, 30))[1]
    # narrow: LAG goes after BEHIND (same rank, later in the row), before MEMBERS
    narrow = lines(render_top(r.groups.values(), T + 20, 64, 30, lag=True))[1]
    assert "BEHIND" not in narrow and "LAG" in narrow and "MEMBERS" in narrow


def _told(reducer: Reducer, sink: _LiveSink, group: str, body: dict, at: float) -> None:
    """As a Watcher tells: the event folded into the group's one status, then to the sink."""
    event = envelope(body, group=group, cluster=None, source="describe", at=at)
    reducer.apply(event)
    sink(event)


def test_the_full_view_shows_the_lag_the_watchs_reducer_read():
    """The live sink reads the lag from the watch's reducer (observe.watch folds the lag
    source's reads there, on their own interval): total, per topic, the largest partition,
    the read's age; `-` until a read knows it; nothing of lag without --lag."""
    sink, out = _sink("full", fleet=False)
    with sink:
        _feed(sink, 1)
        sink.draw(force=True)
        assert "lag" not in _text(out)
    sink, out = _sink("full", fleet=False)
    watch_reducer = Reducer()
    with sink:
        sink.read_from(watch_reducer.groups, lag=True)
        _told(watch_reducer, sink, "g0", snapshot("classic", generation=2), T)
        sink.draw(force=True)
        assert "\nlag -\n" in _text(out)
        _lag(watch_reducer, "g0", {("orders", 0): 100, ("orders", 1): 5, ("audit", 0): 20}, T + 17)
        sink.draw(force=True)
    told = [ln.strip() for ln in _text(out).split("\n") if ln.startswith("lag ")]
    assert told[-1] == "lag 125: audit 20, orders 105  (largest partition 100, read 3 s ago)"


def test_the_top_view_shows_the_lag_column_when_the_watch_reads_lag():
    sink, out = _sink("top", fleet=True)
    watch_reducer = Reducer()
    with sink:
        sink.read_from(watch_reducer.groups, lag=True)
        for g in ("g0", "g1"):
            _told(watch_reducer, sink, g, snapshot("classic", generation=2), T)
        _lag(watch_reducer, "g1", {("t", 0): 7}, T + 19)
        sink.draw(force=True)
    last = _text(out).rstrip().split("\n")
    header = [ln for ln in last if ln.startswith("GROUP")][-1]
    assert header.split()[-1] == "LAG"
    rows = {ln.split()[0]: ln.split()[-1] for ln in last if ln.startswith("g")}
    assert rows == {"g0": "-", "g1": "7"}


def test_the_live_sink_draws_the_owners_status_and_folds_none_of_its_own():
    """Issue 30: one owner of each group's state. Given the watch's statuses the sink's
    models hold those very objects: an event the owner did not fold changes nothing on
    screen (a second fold would show it), one it did shows at once."""
    sink, out = _sink("full", fleet=False)
    watch_reducer = Reducer()
    with sink:
        sink.read_from(watch_reducer.groups)
        _told(watch_reducer, sink, "g0", snapshot("classic", generation=2,
                                                  members=[("m1", None)]), T)
        assert sink.models["g0"].status is watch_reducer.groups["g0"]
        sink(envelope({"event": "member_joined", "member_id": "not-folded"}, group="g0",
                      cluster=None, source="describe", at=T + 1))
        _told(watch_reducer, sink, "g0", {"event": "member_joined", "member_id": "m2"}, T + 2)
        sink.draw(force=True)
    shown = _text(out)
    assert "members 2" in shown and "m2" in shown and "not-folded" not in shown


def test_coord_column_names_each_groups_coordinator_and_marks_the_silent_ones():
    """A describe watch's COORD: the broker that last described the group, `!` when the
    last round got nothing of it; the title counts the silent groups per coordinator."""
    seen = {"orders": (1, False), "payments": (3, True), "idle": (3, True),
            "shared": (None, True), "gone": (None, False)}
    shown = lines(render_top(fleet().groups.values(), T + 20, 180, 30,
                             coordinator_of=lambda g: seen.get(g, (None, False))))
    assert shown[0] == (
        "groupctl watch · 5 groups: 3 Stable, 1 Dead, 1 PreparingRebalance · no answer from "
        "coordinator 3 for 2 groups, no answer for 1 group · 1 rebalance in 5m · 08:00:20 UTC")
    assert shown[1].split()[:3] == ["GROUP", "STATE", "COORD"]
    rows = {ln.split()[0]: ln.split()[2] for ln in shown[2:7]}
    assert rows == {"payments": "3!", "orders": "1", "gone": "-", "idle": "3!", "shared": "-!"}
    # without a describe source (records, replay): no column, no count
    plain = lines(render_top(fleet().groups.values(), T + 20, 140, 30))
    assert "COORD" not in plain[1] and "no answer" not in plain[0]


def test_the_live_sink_draws_coord_from_the_watchs_source():
    sink, out = _sink("auto", fleet=True)
    sink.coordinator_of = lambda g: (2, g == "g1")
    with sink:
        _feed(sink, 2)
    text = _text(out)
    assert "COORD" in text and "no answer from coordinator 2 for 1 group" in text
    assert re.search(r"g1\s+Stable\s+2!", text) and re.search(r"g0\s+Stable\s+2\s", text)
