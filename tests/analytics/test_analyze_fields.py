"""A line's fields come from one regex run (extract._all_groups: the pattern rewrites the
message to its groups joined by FIELD_SEP, then split); a line whose field holds FIELD_SEP
itself is read field by field (_one_group) and gives the same fields as any other; a line
without it needs no fallback."""
from __future__ import annotations

from groupctl.analytics import extract

PREPARE = ("[2026-11-23 13:09:56,466] INFO [GroupCoordinator id=1 topic=__consumer_offsets "
           "partition=6] Preparing to rebalance group {group} in state PreparingRebalance with "
           "old generation 4 (reason: {reason}). "
           "(org.apache.kafka.coordinator.group.GroupMetadataManager)")
STABILIZED = ("[2026-11-23 13:09:59,470] INFO [GroupCoordinator id=1 topic=__consumer_offsets "
              "partition=6] Stabilized group {group} generation 5 with 2 members. "
              "(org.apache.kafka.coordinator.group.GroupMetadataManager)")


def _events(spark, lines: list[str]) -> list[dict]:
    df = spark.createDataFrame([("f", line, (0, 0, i)) for i, line in enumerate(lines)],
                               "file string, line string, pos struct<file:int,split:bigint,row:bigint>")
    rows = extract.broker_events(df).orderBy("ts").collect()
    return [{k: r[k] for k in ("kind", "group", "state", "generation", "reason", "members",
                               "broker")} for r in rows]


def test_fields_are_the_same_with_and_without_the_separator_in_them(spark):
    sep = extract.FIELD_SEP
    got = _events(spark, [
        PREPARE.format(group="g1", reason="Adding new member m-1; client reason: x"),
        PREPARE.format(group=f"g{sep}2", reason=f"a{sep}b{sep}"),
        STABILIZED.format(group=f"g{sep}2"),
    ])
    assert got == [
        {"kind": "prepare", "group": "g1", "state": "PreparingRebalance", "generation": 4,
         "reason": "Adding new member m-1; client reason: x", "members": None, "broker": 1},
        {"kind": "prepare", "group": f"g{sep}2", "state": "PreparingRebalance",
         "generation": 4, "reason": f"a{sep}b{sep}", "members": None, "broker": 1},
        {"kind": "stabilized", "group": f"g{sep}2", "state": None, "generation": 5,
         "reason": None, "members": 2, "broker": 1},
    ]


def test_a_plain_lines_fields_come_from_the_one_regex_run(spark, monkeypatch):
    # with the field-by-field fallback giving nothing, a line without FIELD_SEP still has
    # every field: they came from _all_groups (a broken one would leave them null here,
    # while the test above passes through the fallback)
    from pyspark.sql import functions as F

    monkeypatch.setattr(extract, "_one_group", lambda *a: F.lit(None).cast("string"))
    assert _events(spark, [
        PREPARE.format(group="g1", reason="Adding new member m-1; client reason: x"),
        STABILIZED.format(group="g1"),
    ]) == [
        {"kind": "prepare", "group": "g1", "state": "PreparingRebalance", "generation": 4,
         "reason": "Adding new member m-1; client reason: x", "members": None, "broker": 1},
        {"kind": "stabilized", "group": "g1", "state": None, "generation": 5,
         "reason": None, "members": 2, "broker": 1},
    ]
