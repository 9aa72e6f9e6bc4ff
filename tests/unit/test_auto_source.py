"""`watch --source auto` (observe/sources/auto.py), sans broker: what describe's looks add
to the records' rounds (a classic round's start to an interval, its states), which looks
say nothing (older than the records' last change, of a round before), and the choice of
witness (the records refused: describe alone, said once). Times are given, not read."""
from __future__ import annotations

import asyncio

import pytest
from groupctl.client.partition_reader import TopicAuthorizationError
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.sources.auto import BOTH, DESCRIBE_ALONE, AutoSource, Look, DescribeLooks
from groupctl.observe.sources.observations import Seen
from groupctl.observe.story.round import UNKNOWN_DURATION, Basis, Duration
from groupctl.observe.watch import Watcher, WatchSettings


def test_a_start_seen_by_describe_bounds_a_records_round_by_the_looks():
    looks = DescribeLooks()
    looks.record(10.0, 1)                                  # the records' first look: gen 1
    assert looks.look(Look(10.4, 10.5, "Stable")) is None   # nothing the records do not say
    assert looks.look(Look(10.9, 11.0, "PreparingRebalance")) == "PreparingRebalance"
    assert looks.look(Look(11.4, 11.5, "CompletingRebalance")) == "CompletingRebalance"
    looks.record(11.7, 2)                                  # the generation's record
    started, duration = looks.round(1, 2)
    # begun after the settled look was asked (10.4), by the first look under way (11.0)
    assert started == 11.0
    assert duration == Duration.between(700, 1300)
    assert (duration.basis, duration.min_ms, duration.max_ms) == (Basis.INTERVAL, 700, 1300)


def test_a_round_no_look_saw_under_way_lies_between_nothing_and_the_settled_look():
    looks = DescribeLooks()
    looks.record(10.0, 1)
    looks.look(Look(10.4, 10.5, "Stable"))
    looks.look(Look(10.9, 11.0, "Stable"))
    looks.record(11.2, 2)
    assert looks.round(1, 2) == (None, Duration.between(0, 300))


def test_no_settled_look_before_the_round_is_a_lower_bound_and_no_look_is_unknown():
    looks = DescribeLooks()
    looks.record(10.0, 1)
    looks.look(Look(10.9, 11.0, "PreparingRebalance"))
    looks.record(11.5, 2)
    assert looks.round(1, 2) == (11.0, Duration.at_least(500))
    bare = DescribeLooks()
    bare.record(10.0, 1)
    bare.record(11.5, 2)
    assert bare.round(1, 2) == (None, UNKNOWN_DURATION)


def test_a_look_under_way_before_the_records_last_round_ended_is_not_this_rounds_start():
    looks = DescribeLooks()
    looks.look(Look(5.0, 5.1, "Stable"))
    looks.record(5.2, 1)
    looks.look(Look(5.5, 5.6, "PreparingRebalance"))    # round 2 under way
    looks.record(6.0, 2)                                 # round 2 ended; no settled look since
    looks.look(Look(6.5, 6.6, "PreparingRebalance"))    # round 3 under way
    looks.record(7.0, 3)
    started, duration = looks.round(2, 3)
    assert started == 6.6 and (duration.min_ms, duration.max_ms) == (400, 2000)


def test_rounds_the_records_jumped_over_are_left_to_them():
    looks = DescribeLooks()
    looks.record(10.0, 1)
    looks.look(Look(10.4, 10.5, "Stable"))
    looks.record(12.0, 3)   # generation 2 never synced: the story tells it unseen
    assert looks.round(2, 3) is None


def test_a_look_older_than_the_records_last_change_tells_no_state_and_a_round_undone_is():
    looks = DescribeLooks()
    looks.record(10.0, 1)
    assert looks.look(Look(10.4, 10.5, "PreparingRebalance")) == "PreparingRebalance"
    looks.record(11.7, 2)
    # asked before the record, answered after: the round it shows is over
    assert looks.look(Look(11.6, 11.75, "CompletingRebalance")) is None
    assert looks.look(Look(12.0, 12.1, "Stable")) is None   # the records told Stable
    assert looks.look(Look(12.5, 12.6, "PreparingRebalance")) == "PreparingRebalance"
    # the round came to nothing (a coordinator moved, the group loaded as before): told back
    assert looks.look(Look(13.0, 13.1, "Stable")) == "Stable"
    assert looks.look(Look(13.5, 13.6, "Stable")) is None


def test_looks_before_the_settled_look_before_the_last_are_let_go():
    looks = DescribeLooks()
    looks.record(1.0, 1)
    for i in range(50):
        looks.look(Look(2.0 + i, 2.1 + i, "Stable"))
    assert len(looks.looks) == 2


# ---- the source, with its two witnesses' observations given --------------------------------

def _m(mid, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h", subscription={"topics": ["t"]},
                  assignment=[TopicPartitions("t", list(parts))])


def _classic(state, gen, *members):
    return GroupDescription("g", type="classic", state=state, protocol="range",
                            generation=gen, members=list(members))


GONE = object()   # described(): its next look only after the records failed


def _auto(records, described, notices):
    source = AutoSource(None, ["g"], interval=0.5, notice=notices.append)
    gone = asyncio.Event()

    async def from_records(*, until=None):
        for o in records():
            if isinstance(o, asyncio.Event):
                await o.wait()
            elif isinstance(o, BaseException):
                gone.set()   # (put on the merge's queue before describe's next look)
                raise o
            else:
                source.records.on_round(0.01, False)   # a Fetch answered: READ proven
                yield o

    async def from_describe(*, until=None):
        for o in described():
            if o is GONE:
                await gone.wait()   # the records' failure first
            elif isinstance(o, asyncio.Event):
                o.set()
            else:
                source.describe.on_round(0.1, False)   # the round before its looks
                yield o

    source.records.observations = from_records
    source.describe.observations = from_describe
    return source


def _watch(source) -> list[dict]:
    events: list[dict] = []
    watcher = Watcher(None, WatchSettings(groups=["g"]), emit=events.append, source=source)
    asyncio.run(watcher.run())
    return events


def test_one_story_the_records_rounds_with_describes_states_and_start():
    a, b = _m("a", 0, 1), _m("b", 1)
    looked = asyncio.Event()
    notices: list[str] = []

    def records():
        yield Seen("g", 10.0, "records", _classic("Stable", 1, _m("a", 0, 1)))
        yield looked   # describe's looks come before the generation's record
        yield Seen("g", 11.7, "records", _classic("Stable", 2, _m("a", 0), b))

    def described():
        yield Seen("g", 10.5, "describe", _classic("Stable", None, a))
        yield Seen("g", 11.0, "describe", _classic("PreparingRebalance", None, a))
        yield Seen("g", 11.5, "describe", _classic("CompletingRebalance", None, a, b))
        yield looked

    source = _auto(records, described, notices)
    events = _watch(source)
    told = [(e["source"], e["event"], e.get("state")) for e in events
            if e["event"] in ("snapshot", "state", "rebalance")]
    assert told == [("records", "snapshot", "Stable"), ("records", "state", "Stable"),
                    ("describe", "state", "PreparingRebalance"),
                    ("describe", "state", "CompletingRebalance"),
                    ("records", "state", "Stable"),
                    ("records", "rebalance", None)]
    (r,) = [e for e in events if e["event"] == "rebalance"]
    assert (r["from_generation"], r["to_generation"]) == (1, 2)
    # ended at the record (11.7); begun after the look asked at 10.4, by the look at 11.0
    assert (r["duration_min_ms"], r["duration_max_ms"], r["duration_basis"]) == (700, 1300,
                                                                               "interval")
    assert r["started"] == "1970-01-01T00:00:11.000Z" and r["duration_source"] == BOTH
    assert source.mode == BOTH and source.resumes_exactly
    assert len(notices) == 1 and "records (__consumer_offsets) with describe" in notices[0]


def test_records_refused_at_the_start_is_describe_alone_said_once():
    notices: list[str] = []

    def records():
        yield TopicAuthorizationError("__consumer_offsets", "read")

    def described():
        yield Seen("g", 10.5, "describe", _classic("Stable", None, _m("a", 0)))
        yield Seen("g", 11.0, "describe", _classic("PreparingRebalance", None, _m("a", 0)))

    source = _auto(records, described, notices)
    events = _watch(source)
    assert [(e["source"], e["event"], e.get("state")) for e in events] == [
        ("describe", "snapshot", "Stable"), ("describe", "state", "Stable"),
        ("describe", "state", "PreparingRebalance")]
    assert source.mode == DESCRIBE_ALONE and not source.resumes_exactly
    assert len(notices) == 1 and notices[0].startswith("source auto: describe alone every 0.5 s")
    assert "TOPIC_AUTHORIZATION_FAILED" in notices[0] and "shorter than the interval" in notices[0]


def test_any_failure_of_the_records_start_is_describe_alone_and_describes_errors_stand():
    """A broker that cannot serve the records: describe alone, its own failures raised as
    with --source describe (a named group it may not describe: exit 4)."""
    from groupctl.errors import AuthError, KafkaError

    notices: list[str] = []

    def records():
        yield KafkaError("Fetch", 0, "the records cannot be served")

    def described():
        yield AuthError("not authorized to describe group 'g' (GROUP_AUTHORIZATION_FAILED)")

    source = _auto(records, described, notices)

    async def from_describe(*, until=None):
        for o in described():
            raise o
        yield   # (an async generator)

    source.describe.observations = from_describe
    with pytest.raises(AuthError, match="describe group"):
        _watch(source)
    assert source.mode == DESCRIBE_ALONE
    assert len(notices) == 1 and "the records could not be read" in notices[0], notices


def test_records_failing_during_the_watch_leave_describe_alone_each_group_told_again():
    from groupctl.errors import KafkaError

    notices: list[str] = []
    looked = asyncio.Event()

    def records():
        yield Seen("g", 10.0, "records", _classic("Stable", 1, _m("a", 0)))
        yield looked
        yield KafkaError("Fetch", 0, "a record the tail cannot read")

    def described():
        yield Seen("g", 10.5, "describe", _classic("Stable", None, _m("a", 0)))
        yield looked
        yield GONE
        yield Seen("g", 11.0, "describe", _classic("Stable", None, _m("a", 0)))
        yield Seen("g", 11.5, "describe", _classic("PreparingRebalance", None, _m("a", 0)))

    source = _auto(records, described, notices)
    events: list[dict] = []
    watcher = Watcher(None, WatchSettings(groups=["g"]), emit=events.append, source=source,
                      notice=notices.append)
    asyncio.run(watcher.run())
    told = [(e["source"], e["event"], e.get("state")) for e in events]
    assert told[:2] == [("records", "snapshot", "Stable"), ("records", "state", "Stable")]
    # describe's looks are the story now: the group told again in full, then its changes
    assert told[2:] == [("describe", "snapshot", "Stable"),
                        ("describe", "state", "PreparingRebalance")]
    assert events[2]["gap_ms"] is not None
    assert source.mode == DESCRIBE_ALONE and not source.resumes_exactly
    assert notices[1].startswith("source auto: the records failed (") and \
        "describe alone from now on" in notices[1], notices
