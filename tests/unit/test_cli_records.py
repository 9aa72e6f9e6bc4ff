"""`decode records` and `history`'s option parsing, in-process with recorded streams, on
segment files written here (record batches v2 of coordinator records)."""
from __future__ import annotations

import io
import json

import pytest

from cli_runner import run_cli
from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.cli.records import parse_time
from groupctl.errors import UsageError
from groupctl.exitcodes import ExitCode
from groupctl.protocol.records.batch import encode_batch
from groupctl.protocol.types import Writer


def key(rtype: int, group: str) -> bytes:
    w = Writer()
    w.int16(rtype)
    w.string(group)
    return w.getvalue()


def epoch_value(epoch: int) -> bytes:
    w = Writer()
    w.int16(0)
    w.int32(epoch)
    w.uvarint(0)
    return w.getvalue()


def run(*args: str, out: str = "ndjson") -> tuple[int, str, str]:
    return run_cli("-o", out, "decode", "records", *args)


@pytest.fixture
def segment(tmp_path):
    d = tmp_path / "__consumer_offsets-7"
    d.mkdir()
    good = encode_batch([(0, key(3, "g1"), epoch_value(4)), (1, key(3, "g2"), epoch_value(9))],
                        base_offset=0, base_timestamp=1_795_499_486_407)
    bad = bytearray(encode_batch([(0, key(3, "g1"), epoch_value(5))], base_offset=2))
    bad[-1] ^= 0x55
    last = encode_batch([(0, key(3, "g1"), None)], base_offset=3, codec=2)
    path = d / "00000000000000000000.log"
    path.write_bytes(good + bytes(bad) + last)
    return str(path)


def test_records_with_a_damaged_batch_reported_and_skipped(segment):
    code, out, err = run(segment)
    assert code == 0
    items = [json.loads(line) for line in out.splitlines()]
    assert [(i.get("offset"), i.get("type"), i.get("key"), i.get("value")) for i in items] == [
        (0, 3, {"group_id": "g1"}, {"epoch": 4, "metadata_hash": 0}),
        (1, 3, {"group_id": "g2"}, {"epoch": 9, "metadata_hash": 0}),
        (None, None, None, None),
        (3, 3, {"group_id": "g1"}, None)]
    assert items[0]["partition"] == 7 and items[0]["timestamp"] == "2026-11-24T05:51:26.407Z"
    assert items[0]["record"] == "ConsumerGroupMetadata" and items[3]["version"] is None
    assert items[2]["damaged_batch"]["offset"] == 2 and "CRC-32C" in items[2]["damaged_batch"]["error"]
    assert "damaged batch at offset 2" in err and "1 damaged batch skipped" in err


def test_group_filter_json_array_and_two_files_in_order(segment, tmp_path):
    code, out, _ = run("--group", "g2", segment, out="json")
    items = json.loads(out)    # a damaged batch belongs to no group: always reported
    assert code == 0 and [i.get("key") for i in items] == [{"group_id": "g2"}, None]
    code, out, _ = run("--group", "nobody", segment, out="json")
    assert (code, [i.get("key") for i in json.loads(out)]) == (0, [None])
    other = tmp_path / "x.log"
    other.write_bytes(encode_batch([(0, key(2, "g9"), None)], base_offset=50))
    code, out, _ = run(segment, str(other))   # two files: decoded in parallel, in order
    assert [json.loads(line).get("offset") for line in out.splitlines()] == [0, 1, None, 3, 50]


def test_table_view(segment):
    code, out, _ = run(segment, out="table")
    assert code == 0
    assert "ConsumerGroupMetadata" in out and "epoch=9" in out and "DAMAGED BATCH" in out
    assert "<tombstone>" in out


def test_missing_file_is_a_usage_error(tmp_path):
    code, out, err = run(str(tmp_path / "nope.log"))
    assert (code, out) == (ExitCode.USAGE, "")
    assert err.startswith("groupctl: error: ") and "no such file" in err


def test_parse_time():
    now = 1_800_000_000_000
    assert parse_time("15m", "--since", now) == now - 900_000
    assert parse_time("1795499486407", "--since", now) == 1_795_499_486_407
    assert parse_time("2026-11-24T05:51:26.407Z", "--since", now) == 1_795_499_486_407
    assert parse_time("2026-11-24T05:51:26.407", "--since", now) == 1_795_499_486_407
    with pytest.raises(UsageError, match="--until: not a time"):
        parse_time("yesterday", "--until", now)


def test_history_rejects_until_before_since():
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-b", "127.0.0.1:1", "history", "g", "--since", "1h", "--until", "2h"], env)
    assert code == ExitCode.USAGE and "--until must be after --since" in env.stderr.getvalue()


def commit_key(group="g", topic="t", partition=0, rtype=1) -> bytes:
    w = Writer()
    w.int16(rtype)
    w.string(group)
    w.string(topic)
    w.int32(partition)
    return w.getvalue()


def commit_value(version: int, metadata: str = "", tags: bytes | None = None,
                 tail: bytes = b"") -> bytes:
    w = Writer()
    w.int16(version)
    w.int64(42)
    if version >= 3:
        w.int32(7)
    w.string(metadata, compact=version >= 4)
    w.int64(1_795_499_486_407)
    if version == 1:
        w.int64(-1)
    if version >= 4:
        w.raw(b"\x00" if tags is None else tags)
    return w.getvalue() + tail


def test_fast_commit_lines_equal_the_generic_decoder(tmp_path):
    """render.record_lines builds offset-commit lines from the bytes; every shape must give
    exactly the generic decoder's line (and odd shapes fall back to it)."""
    from groupctl.render.record_lines import segment_lines
    from groupctl.render.records import dumps_line, segment_items

    topic_id = b"\x01\x00\x10" + bytes(range(16))
    records = [
        (commit_key(), commit_value(3)),
        (commit_key(), commit_value(4)),
        (commit_key(partition=5), commit_value(4, tags=topic_id)),
        (commit_key(group='q"uo\\te'), commit_value(4, 'mé"ta\n', tags=topic_id)),
        (commit_key(), commit_value(4, "x" * 200)),                     # 2-byte length
        (commit_key(), commit_value(4, tags=b"\x01\x05\x01\x00")),      # an unknown tag
        (commit_key(), commit_value(3, tail=b"\x00")),                  # trailing bytes
        (commit_key(), commit_value(1)),                                # expire timestamp
        (commit_key(rtype=0), commit_value(0)),                         # legacy type 0
        (commit_key(), None),                                           # a tombstone
        (commit_key(), b"\x00\x04\x00"),                                # truncated
        (key(3, "g"), epoch_value(3)),
    ]
    path = tmp_path / "__consumer_offsets-3" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(encode_batch([(i, k, v) for i, (k, v) in enumerate(records)],
                                  base_timestamp=1_795_499_486_000))
    for group in (None, "g"):
        fast = [line for line, _ in segment_lines(str(path), group)]
        generic = [dumps_line(item) for item, _ in segment_items(str(path), group)]
        assert fast == generic
        assert len(fast) == (len(records) if group is None else len(records) - 1)
