"""`groupctl decode records` equals Kafka's own decoder, record by record.

A lab broker with `offsets.topic.compression.codec=2` (snappy: the Java client's xerial
framing, the odd one among the codecs) and the plain session broker each run a workload
of classic eager, cooperative-sticky, consumer (KIP-848) and share groups; every segment
of their __consumer_offsets is copied and decoded by groupctl and by
`kafka.tools.DumpLogSegments --offsets-decoder --print-data-log` from the lab's jars; the
two must agree on every record (offset, timestamp, type, key, value version, value
fields), and the CLI must print the same records.
"""
from __future__ import annotations

import io
import json
import os
from collections import Counter

import pytest

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.lab import dump_log
from groupctl.protocol.records.batch import Batch, read_batches

from records_support import snapshot, workload


@pytest.fixture(scope="module")
def snappy_lab(tmp_path_factory):
    from groupctl.lab.cluster import Lab

    lab = Lab.up(name=f"pytest-{os.getpid()}-records-snappy",
                 root=tmp_path_factory.mktemp("records-snappy"), tie_to_parent=True,
                 extra_config={"offsets.topic.compression.codec": "2",
                               "offsets.topic.num.partitions": "3"})
    try:
        yield lab
    finally:
        lab.down()


def groupctl(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def compare(files: list[str]) -> tuple[list[dict], Counter]:
    """Both decoders over `files`: groupctl's records (Kafka's shape) after asserting they
    equal Kafka's one by one; and the codecs of the batches."""
    theirs = dump_log.parse(dump_log.run(files))
    ours, codecs = [], Counter()
    for path in files:
        with open(path, "rb") as f:
            for batch in read_batches(f.read()):
                assert isinstance(batch, Batch), f"{path}: {batch}"
                codecs[batch.compression] += 1
                ours += [dump_log.canonical(r) for r in batch.records]
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    for a, b in zip(ours, theirs):
        assert a == b, f"groupctl: {a}\nKafka:    {b}"
    return ours, codecs


def check_cli(files: list[str], records: list[dict], group: str) -> None:
    code, out, err = groupctl("-o", "ndjson", "decode", "records", *files)
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(x["offset"], x["timestamp_ms"], x["type"], x["key"], x["version"]) for x in lines] == [
        (r["offset"], r["timestamp"], r["type"], r["key"], r["version"]) for r in records]
    assert all((x["value"] is None) == (r["value"] is None) for x, r in zip(lines, records))
    code, out, err = groupctl("-o", "ndjson", "decode", "records", "--group", group, *files)
    assert code == 0, err
    mine = [json.loads(line) for line in out.splitlines()]
    assert mine and {x["key"].get("group_id", x["key"].get("group")) for x in mine} == {group}


def _types(records: list[dict]) -> set[int]:
    return {r["type"] for r in records}


def test_snappy_segments_equal_dump_log_segments(snappy_lab, tmp_path):
    runs = workload(snappy_lab, "snappy")
    files = snapshot(snappy_lab, str(tmp_path))
    records, codecs = compare(files)
    assert set(codecs) == {"snappy"}, codecs     # every batch the coordinator wrote
    # classic (2), offset commits (1), consumer (3, 5-8), share (10-14) groups
    assert _types(records) >= {1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, 14}, _types(records)
    assert any(r["value"] is None for r in records)                  # tombstones
    check_cli(files, records, runs["consumer"].group)


def test_plain_segments_equal_dump_log_segments(kafka, tmp_path):
    runs = workload(kafka, "plain", share=False)
    files = snapshot(kafka, str(tmp_path))
    records, codecs = compare(files)
    assert set(codecs) == {"none"}, codecs
    assert _types(records) >= {1, 2, 3, 5, 6, 7, 8}, _types(records)
    check_cli(files, records, runs["eager"].group)
