"""A broker log's lines keep the log's own order through the parse (extract.read_lines'
`pos`), however Spark splits the files: lines of one millisecond are told in the order the
broker wrote them, across splits, rotated files and several brokers' logs."""
from __future__ import annotations

import gzip
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest
from pyspark.sql import functions as F

from groupctl.analytics import episodes as E
from groupctl.analytics import extract

pytestmark = pytest.mark.timeout(900)

T0 = datetime(2026, 11, 27, 8, 0, 0)
# lines the coordinator did not write, between the group's: they put a group's lines of
# one millisecond into different splits of the file
FILLER = ("INFO [LocalLog partition=filler-0, dir=/var/lib/kafka] Rolled new log segment at "
          "offset {n} in 1 ms. (org.apache.kafka.storage.internals.log.LocalLog)")


@contextmanager
def small_splits(spark, size: int = 4096):
    """Files cut into splits of `size` bytes (Spark's default: 128 MiB); the small job's
    one shuffle partition (pipeline.SMALL_JOB_CONF) after them."""
    conf = {"spark.sql.files.maxPartitionBytes": str(size),
            "spark.sql.files.openCostInBytes": "0", "spark.sql.shuffle.partitions": "1"}
    before = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        yield
    finally:
        for k, v in before.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)


def _stamp(ms: float) -> str:
    t = T0 + timedelta(milliseconds=ms)
    return f"[{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}]"


def _coordinator(ms: float, text: str, broker: int) -> str:
    return (f"{_stamp(ms)} INFO [GroupCoordinator id={broker} topic=__consumer_offsets "
            f"partition=14] {text} (org.apache.kafka.coordinator.group.GroupMetadataManager)")


def group_story(group: str, at: float, broker: int = 1, fillers: int = 12) -> list[str]:
    """A KIP-848 group's lines as a broker writes them, every millisecond shared by lines a
    rule-order would tell otherwise: b joins (.588), its bump (.589), r's join the broker
    refused (.589, no bump of its own), the target (.590); later a leaves and c joins in
    one millisecond, each with its bump and target. FILLER lines after each."""
    g = f"[GroupId {group}]"
    joins = lambda m: f"{g} Member {m} joins the consumer group using the consumer protocol."  # noqa: E731
    bump = lambda e: f"{g} Bumped group epoch to {e} with metadata hash 1."  # noqa: E731
    target = lambda e: (f"{g} Computed a new target assignment for epoch {e} with 'uniform' "  # noqa: E731
                        "assignor in 0ms.")
    story = [(0, joins("a")), (0, bump(2)), (1, target(2)),
             (588, joins("b")), (589, bump(3)), (589, joins("r")), (590, target(3)),
             (700, f"{g} Member a left the consumer group."), (700, bump(4)), (700, target(4)),
             (700, joins("c")), (700, bump(5)), (700, target(5))]
    out = []
    for ms, text in story:
        out.append(_coordinator(at + ms, text, broker))
        out += [f"{_stamp(at + ms)} " + FILLER.format(n=i) for i in range(fillers)]
    return out


# what group_story's group tells: (to_generation, members before, after, trigger)
STORY_EPISODES = [(2, 0, 1, "a"), (3, 1, 2, "b"), (4, 2, 1, "a"), (5, 1, 2, "c")]


def episodes_of(spark, paths: list[str]) -> dict[str, list[tuple]]:
    # dealt round-robin over partitions: the rows reach the episodes out of the file's
    # order (as after any shuffle), so only `pos` can put them back
    events = extract.broker_events(extract.read_lines(spark, paths)).repartition(7)
    out: dict[str, list[tuple]] = {}
    for e in E.consumer_episodes(events).collect():
        out.setdefault(e["group"], []).append(
            (e["to_generation"], e["members_before"], e["members_after"], e["trigger_member"]))
    return {g: sorted(eps) for g, eps in out.items()}


def test_a_files_lines_ordered_by_pos_are_in_the_files_order_across_splits(spark, tmp_path):
    """Numbered lines of three files (one gzipped, which Spark cannot split) read as many
    4 KiB splits: ordered by `pos`, each file's lines are 0, 1, 2, ... and the files'
    places are the rotation's, oldest first."""
    sizes = {"server.log.2": 3000, "server.log.1.gz": 500, "server.log": 2200}
    for name, n in sizes.items():
        text = "".join(f"line {i:06d} {'x' * (i % 53)}\n" for i in range(n))
        if name.endswith(".gz"):
            with gzip.open(tmp_path / name, "wt") as f:
                f.write(text)
        else:
            (tmp_path / name).write_text(text)
    paths = sorted(str(tmp_path / n) for n in sizes)
    with small_splits(spark):
        lines = extract.read_lines(spark, paths)
        assert lines.rdd.getNumPartitions() >= 20
        rows = lines.select("file", "line", "pos").collect()
    by_file: dict[str, list] = {}
    for r in rows:
        by_file.setdefault(r["file"].rsplit("/", 1)[-1], []).append(r)
    for name, n in sizes.items():
        ordered = sorted(by_file[name], key=lambda r: tuple(r["pos"]))
        assert [int(r["line"].split()[1]) for r in ordered] == list(range(n)), name
    assert {name: rs[0]["pos"]["file"] for name, rs in by_file.items()} == {
        "server.log.2": 0, "server.log.1.gz": 1, "server.log": 2}


def test_lines_of_one_millisecond_keep_the_logs_order_in_a_split_file(spark, tmp_path):
    """Four groups' stories in one log cut into 4 KiB splits, a group's lines of one
    millisecond in different splits: every group's rounds as the broker told them (a rule
    order, joins before bumps, gives r's refused join b's bump, and c's join to the round
    of a's leave)."""
    lines = []
    for i in range(4):
        lines += group_story(f"g{i}", at=i * 2000, fillers=6)
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n")
    with small_splits(spark):
        events = extract.broker_events(extract.read_lines(spark, [str(log)]))
        split_ms = (events.groupBy("group", "ts").agg(F.countDistinct("pos.split").alias("n"))
                    .filter("n > 1").count())
        got = episodes_of(spark, [str(log)])
    assert split_ms >= 2   # milliseconds whose lines lie in more than one split
    assert got == {f"g{i}": STORY_EPISODES for i in range(4)}


def test_rotated_files_oldest_first_and_two_brokers_merged_by_time_then_broker(spark, tmp_path):
    """Broker 1's log rotated between b's bump and r's refused join, both at .589:
    server.log.1 ends with the bump, server.log starts with the join; given in any order
    (here by name, the live file first), the rotated file is read first. Broker 2's log
    holds a group whose lines share broker 1's milliseconds, and the rounds of a group
    whose coordinator moved from broker 1 to broker 2: every round told once, in order."""
    b1, b2 = tmp_path / "b1", tmp_path / "b2"
    b1.mkdir()
    b2.mkdir()
    story = group_story("k", at=0, fillers=0)
    cut = next(i for i, line in enumerate(story) if "Bumped group epoch to 3" in line) + 1
    moved_1 = group_story("moved", at=-9000, broker=1)[:7 * 13]    # up to epoch 3's target
    moved_2 = [_coordinator(5000, "[GroupId moved] Member d joins the consumer group using "
                            "the consumer protocol.", 2),
               _coordinator(5000, "[GroupId moved] Bumped group epoch to 4 with metadata "
                            "hash 1.", 2),
               _coordinator(5001, "[GroupId moved] Computed a new target assignment for "
                            "epoch 4 with 'uniform' assignor in 0ms.", 2)]
    (b1 / "server.log.2").write_text("\n".join(moved_1) + "\n")
    (b1 / "server.log.1").write_text("\n".join(story[:cut]) + "\n")
    (b1 / "server.log").write_text("\n".join(story[cut:]) + "\n")
    (b2 / "server.log").write_text("\n".join(group_story("two", at=0, broker=2) + moved_2)
                                   + "\n")
    paths = sorted(str(p) for p in tmp_path.glob("*/server.log*"))
    assert [p.rsplit("/", 1)[-1] for p in paths[:3]] == [
        "server.log", "server.log.1", "server.log.2"]
    with small_splits(spark):
        got = episodes_of(spark, paths)
    assert got == {"k": STORY_EPISODES, "two": STORY_EPISODES,
                   "moved": [(2, 0, 1, "a"), (3, 1, 2, "b"), (4, 2, 3, "d")]}


def test_rotated_files_sort_oldest_first_the_live_file_last():
    """log4j's size rotation (`.1` the newest), date suffixes (hourly, daily, with an
    index), compressed or not; each log's files together (a log keeps one pattern)."""
    paths = ["/b/server.log", "/a/server.log.1", "/a/server.log", "/a/server.log.10.gz",
             "/a/server.log.2", "/b/server.log.2026-11-27-10", "/b/server.log.2026-11-26-23.gz",
             "/b/server.log.2026-11-27-09", "/c/x.log.20261127", "/c/x.log.20261126",
             "/d/x.log.2026-11-27.2", "/d/x.log.2026-11-27.10", "/d/x.log.2026-11-26.3"]
    assert sorted(paths, key=extract.rotation_key) == [
        "/a/server.log.10.gz", "/a/server.log.2", "/a/server.log.1", "/a/server.log",
        "/b/server.log.2026-11-26-23.gz", "/b/server.log.2026-11-27-09",
        "/b/server.log.2026-11-27-10", "/b/server.log",
        "/c/x.log.20261126", "/c/x.log.20261127",
        "/d/x.log.2026-11-26.3", "/d/x.log.2026-11-27.2", "/d/x.log.2026-11-27.10"]
