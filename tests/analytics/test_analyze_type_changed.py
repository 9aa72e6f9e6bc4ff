"""The analytics pipeline reads event records tolerant of an event type it has no rule for:
`type_changed` (a classic group converting to a consumer group and back, issue 13) lines
change none of its results, and are not counted as damaged lines."""
from __future__ import annotations

import json

from groupctl.events import envelope
from groupctl.observe.reads.model import GroupDescription, Member, TopicPartitions
from groupctl.observe.sources.observations import Seen
from groupctl.observe.story.story import RebalanceStory


def _member(mid, protocol, *parts):
    return Member(mid, client_id=f"c-{mid}", host="h", member_protocol=protocol,
                  subscription={"topics": ["t"]},
                  assignment=[TopicPartitions("t", list(parts))],
                  target_assignment=None if protocol == "classic"
                  else [TopicPartitions("t", list(parts))])


def _conversion_records() -> list[dict]:
    """What `watch --record` writes for a classic group converted up and back down (the
    story's own output, not hand-written lines)."""
    t0 = 1_795_000_000.0
    snapshots = [
        GroupDescription("g", type="classic", state="Stable", generation=1,
                         members=[_member("old", "classic", 0, 1)]),
        GroupDescription("g", type="consumer", state="Reconciling", group_epoch=2,
                         assignment_epoch=2, members=[_member("old", "classic", 0, 1),
                                                      _member("new", "consumer")]),
        GroupDescription("g", type="consumer", state="Stable", group_epoch=2,
                         assignment_epoch=2, members=[_member("old", "classic", 0),
                                                      _member("new", "consumer", 1)]),
        GroupDescription("g", type="classic", state="PreparingRebalance",
                         members=[_member("old", "classic", 0)]),
        GroupDescription("g", type="classic", state="Stable", generation=3,
                         members=[_member("old", "classic", 0, 1)]),
    ]
    story = RebalanceStory("g", clock=lambda: t0)
    records = []
    for i, desc in enumerate(snapshots):
        at = t0 + i
        records += [envelope(e, group="g", cluster="c", source="describe", at=at)
                    for e in story.feed(Seen("g", at, "describe", desc))]
    return records


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_type_changed_lines_change_no_result(spark, tmp_path):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Inputs, analyze

    records = _conversion_records()
    kinds = [r["event"] for r in records]
    assert kinds.count("type_changed") == 2 and kinds.count("rebalance") == 2

    def run(recs, name):
        tables = analyze(spark, Inputs(events=[_write(tmp_path / name, recs)]))
        try:
            out = {n: load.rows(df) for n, df in tables.named().items() if n != "files"}
            out["files"] = [{k: v for k, v in row.items() if k != "file"}
                            for row in load.rows(tables.files)]
            out["unparsed"] = [row for row in load.rows(tables.events)
                               if row["kind"] == "unparsed"]
            return out
        finally:
            tables.release()

    with_changes = run(records, "with.ndjson")
    without = run([r for r in records if r["event"] != "type_changed"], "without.ndjson")
    # the records file's line count has the two lines more, none of them damaged
    assert with_changes.pop("files") == [{"events": len(records), "unparsed": 0}]
    assert without.pop("files") == [{"events": len(records) - 2, "unparsed": 0}]
    assert with_changes == without
    assert with_changes["unparsed"] == []
    # the records were read: their two rounds, typed by the records before each
    assert [(e["group_type"], e["from_generation"], e["to_generation"])
            for e in with_changes["episodes"]] == [("consumer", 1, 2), ("classic", 2, 3)]
    (metrics,) = with_changes["metrics"]
    assert (metrics["group"], metrics["group_epoch"], metrics["errors"]) == ("g", 2, 0)
    assert (metrics["first_seen"], metrics["last_seen"]) == (records[0]["ts"], records[-1]["ts"])
