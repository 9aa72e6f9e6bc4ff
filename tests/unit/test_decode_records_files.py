"""`decode records` over what a user points it at: several segments (valid JSON; a table
that tells them apart), a partition directory's whole glob (Kafka's index and checkpoint
files skipped with a note), files that are not segments at all, empty files, a --group
that matched nothing; and the table's cells (lists, nulls, a member's state, a cut)."""
from __future__ import annotations

import json
import os

import pytest

from cli_runner import run_cli
from groupctl.exitcodes import ExitCode
from groupctl.protocol.records.batch import encode_batch
from groupctl.render.records import record_row, summary

from test_cli_records import epoch_value, key


def run(*args: str, out: str = "table") -> tuple[int, str, str]:
    return run_cli("-o", out, "decode", "records", *args)


def partition_dir(tmp_path, partition: int, group: str, epochs: list[int]) -> str:
    """A copy of a broker's partition directory: a segment with one record per epoch,
    and the files Kafka keeps beside it."""
    d = tmp_path / f"__consumer_offsets-{partition}"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(encode_batch(
        [(i, key(3, group), epoch_value(e)) for i, e in enumerate(epochs)], base_offset=0,
        base_timestamp=1_795_499_486_407))
    (d / "00000000000000000000.index").write_bytes(bytes(8) + os.urandom(80) + bytes(1000))
    (d / "00000000000000000000.timeindex").write_bytes(
        (1_795_725_953_305).to_bytes(8, "big") + bytes(4) + bytes(1000))
    (d / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (d / "partition.metadata").write_text("version: 0\ntopic_id: uDWcOb1FSa-7MeIvb7O05g\n")
    return str(d)


def test_two_segments_as_json_are_one_valid_array(tmp_path):
    a = partition_dir(tmp_path, 7, "g1", [4, 5, 6])
    b = partition_dir(tmp_path, 9, "g2", [1, 2])
    code, out, err = run(f"{a}/00000000000000000000.log", f"{b}/00000000000000000000.log",
                         out="json")
    assert code == 0, err
    items = json.loads(out)
    assert [(i["partition"], i["offset"], i["value"]["epoch"]) for i in items] == [
        (7, 0, 4), (7, 1, 5), (7, 2, 6), (9, 0, 1), (9, 1, 2)]


def test_the_table_tells_files_and_partitions_apart(tmp_path):
    a = partition_dir(tmp_path, 7, "g1", [4])
    b = partition_dir(tmp_path, 9, "g2", [1])
    code, out, err = run(f"{a}/00000000000000000000.log", f"{b}/00000000000000000000.log")
    assert code == 0, err
    header, first, second = out.splitlines()
    assert header.split()[:3] == ["FILE", "PARTITION", "OFFSET"]
    assert first.split()[:3] == [f"{a}/00000000000000000000.log", "7", "0"]
    assert second.split()[:3] == [f"{b}/00000000000000000000.log", "9", "0"]
    assert not [line for line in out.splitlines() if line != line.rstrip()]   # no padding
    code, out, _ = run(f"{a}/00000000000000000000.log")   # one file: no FILE column
    assert out.split()[:2] == ["PARTITION", "OFFSET"]


def test_a_partition_directory_glob_decodes_its_segment_and_notes_the_rest(tmp_path):
    d = partition_dir(tmp_path, 17, "g1", [4, 5])
    files = sorted(os.path.join(d, name) for name in os.listdir(d))
    code, out, err = run(*files, out="ndjson")
    assert code == 0, err
    assert [json.loads(line)["value"]["epoch"] for line in out.splitlines()] == [4, 5]
    assert err.splitlines() == [
        "groupctl: decode records: skipped 4 files of the partition directory that are not "
        "a log segment: 00000000000000000000.index, 00000000000000000000.timeindex, "
        "leader-epoch-checkpoint, partition.metadata"]


@pytest.mark.parametrize("name", ["00000000000000000000.index", "00000000000000000000.timeindex",
                                  "leader-epoch-checkpoint", "partition.metadata"])
def test_one_kafka_side_file_alone_is_exit_2(tmp_path, name):
    d = partition_dir(tmp_path, 17, "g1", [4])
    code, out, err = run(os.path.join(d, name))
    assert (code, out) == (ExitCode.USAGE, "")
    assert err.startswith("groupctl: error: ") and "not a log segment" in err
    assert len(err.splitlines()) == 1


def test_text_and_random_bytes_are_not_segments(tmp_path):
    text, noise = tmp_path / "notes.txt", tmp_path / "noise.bin"
    text.write_text("GROUP g1 Stable\n" * 40)
    noise.write_bytes(os.urandom(4096))
    code, out, err = run(str(text), str(noise))
    assert (code, out) == (ExitCode.USAGE, "")
    assert err.splitlines()[-1] == ("groupctl: error: none of the 2 files is a log segment "
                                    "(__consumer_offsets-N/*.log)")
    d = partition_dir(tmp_path, 3, "g1", [8])
    code, out, err = run(str(text), f"{d}/00000000000000000000.log", out="ndjson")
    assert code == 0 and [json.loads(x)["offset"] for x in out.splitlines()] == [0]
    assert err == (f"groupctl: warning: {text}: not a log segment (it does not begin with a "
                   f"record batch); skipped\n")


def test_empty_files_and_a_group_with_no_records_are_said(tmp_path):
    empty_log, empty_other = tmp_path / "00000000000000000042.log", tmp_path / "empty.txt"
    empty_log.write_bytes(b"")
    empty_other.write_bytes(b"")
    code, out, err = run(str(empty_log), out="json")
    assert (code, out) == (0, "[]\n")
    assert err == f"groupctl: decode records: {empty_log}: an empty segment (no records)\n"
    code, _, err = run(str(empty_other))
    assert code == ExitCode.USAGE and "an empty file, not a log segment" in err
    d = partition_dir(tmp_path, 5, "g1", [4])
    code, out, err = run("--group", "nobody", f"{d}/00000000000000000000.log")
    assert (code, out) == (0, "")
    assert err == "groupctl: decode records: no record of group 'nobody' in the segment\n"


def test_table_cells_show_values_not_lengths_nulls_or_state_numbers():
    item = {"file": "a.log", "partition": 17, "offset": 4, "timestamp": "2026-11-26T20:45:40.360Z",
            "type": 8, "record": "ConsumerGroupCurrentMemberAssignment",
            "key": {"group_id": "k2", "member_id": "ZBH3"}, "version": 0,
            "value": {"member_epoch": 2, "previous_member_epoch": 0, "state": 1,
                      "assigned_partitions": [{"topic_id": "uDWc", "partitions": [1]}],
                      "partitions_pending_revocation": [{"topic_id": "uDWc", "partitions": [0]}]}}
    assert record_row(item, with_file=True) == [
        "a.log", "17", "4", "2026-11-26T20:45:40.360Z", "8", "ConsumerGroupCurrentMemberAssignment",
        "k2 ZBH3", "0", "member_epoch=2 previous_member_epoch=0 state=UNREVOKED_PARTITIONS "
        "assigned_partitions=[uDWc:1] partitions_pending_revocation=[uDWc:0]"]
    member = {"instance_id": None, "subscribed_topic_names": ["orders"], "members": [],
              "assignment": [{"a": 1}, {"a": 2}]}
    assert summary(member, 5) == ("instance_id=- subscribed_topic_names=[orders] members=[] "
                                  "assignment=<2 entries>")
    streams = summary({"state": 1}, 22)   # streams' own numbering: 1 is STABLE there
    assert streams == "state=STABLE"
    long = summary({f"field_{i}": "x" * 30 for i in range(12)}, 3)
    assert long.endswith("… (7 more)") and "..." not in long
    assert long.split(" … ")[0].split()[-1] == "field_4=" + "x" * 30   # cut between fields
