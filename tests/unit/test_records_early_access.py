"""Records an early-access broker wrote under today's version numbers in another layout
(Kafka 3.7's KIP-848, 4.0's share groups) are said to be that, once per record, never
"damaged" or "truncated"; everything else of the segment decodes as before. The segments
are real: a 3.7.2 lab with group.coordinator.new.enable=true and a consumer-protocol
`groupctl join`, and a 4.0.2 lab with share groups on (unstable.api.versions.enable) and
Kafka's own ConsoleShareConsumer. early_access.py is checked against what the generator
makes of the jars."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from groupctl.observe.reads.records import coordinator_records, segment_batches

FIXTURES = Path(__file__).parent.parent / "fixtures" / "records"
ROOT = Path(__file__).parent.parent.parent


def records(name: str) -> list:
    return list(coordinator_records(segment_batches(str(FIXTURES / name))))


@pytest.mark.parametrize("name, release, early_types", [
    ("kip848-early-access-kafka-3.7.2.log", "Kafka 3.7", {4, 5, 7, 8}),
    ("share-early-access-kafka-4.0.2.log", "Kafka 4.0", {9, 11}),
])
def test_early_access_records_are_said_to_be_so(name, release, early_types):
    recs = records(name)
    assert recs and all(not hasattr(r, "reason") for r in recs)   # no damaged batch
    early = [r for r in recs if r.early_access]
    assert {r.type for r in early} == early_types
    for r in early:
        assert r.early_access == release and r.value is None and r.name
        assert r.error == f"written by an early-access broker ({release}): not decoded"
        assert r.key and r.key["group_id"]
    # the rest decodes as it is: the same layout then as now
    assert [r for r in recs if r.error and not r.early_access] == []
    assert [r for r in recs if r.value is not None]


def test_early_access_schemas_are_what_the_generator_makes_of_the_jars():
    made = subprocess.run([sys.executable, "tools/gen_record_schemas.py", "--early-access"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert made.returncode == 0, made.stderr[-2000:]
    committed = (ROOT / "groupctl/protocol/records/early_access.py").read_text()
    assert made.stdout == committed, "run: PYTHONPATH=. python tools/gen_record_schemas.py " \
                                     "--early-access > groupctl/protocol/records/early_access.py"


def test_history_of_a_group_with_early_access_records_is_one_line():
    # told from the records it can read, the 4.0 share group looked Empty, then Dead
    from groupctl.observe.sources.history import EarlyAccessRecords, _refuse_early_access

    recs = records("share-early-access-kafka-4.0.2.log")
    with pytest.raises(EarlyAccessRecords, match=r"group 'sh2': its ShareGroupMetadata, "
                       r"ShareGroupPartitionMetadata records were written by an early-access "
                       r"broker \(Kafka 4.0\): not decoded, so its history is not told"):
        _refuse_early_access([(len(recs), True, recs)])
    assert EarlyAccessRecords.exit_code == 7
    _refuse_early_access([(1, True, [r for r in recs if not r.early_access])])   # no refusal


def test_decode_records_says_which_release_wrote_them():
    import io
    import json

    from groupctl.cli.app import invoke
    from groupctl.cli.env import Env

    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = invoke(["-o", "ndjson", "decode", "records",
                   str(FIXTURES / "kip848-early-access-kafka-3.7.2.log")], env)
    assert code == 0, env.stderr.getvalue()
    lines = [json.loads(x) for x in env.stdout.getvalue().splitlines()]
    early = [x for x in lines if x.get("early_access")]
    assert early and {x["early_access"] for x in early} == {"Kafka 3.7"}
    assert all(x["value"] is None and "damaged" not in x["error"] and "truncated" not in x["error"]
               for x in early)
    err = env.stderr.getvalue()
    assert "damaged" not in err
    # said once per record type, not once per record
    notes = [ln for ln in err.splitlines() if "written by an early-access broker" in ln]
    assert sorted(notes) == sorted(
        f"groupctl: warning: {name} records written by an early-access broker (Kafka 3.7): "
        "not decoded" for name in {x["record"] for x in early})
    assert len(early) > len(notes)


def test_a_tombstone_of_a_type_only_an_early_broker_wrote_keeps_its_raw_key():
    # the fuzzer's find: type 9 (4.0's ShareGroupPartitionMetadata, gone since) with a
    # null value: an error always comes with the raw bytes
    import struct

    from groupctl.protocol.records.coordinator import decode_record

    key = struct.pack(">hh", 9, 2) + b"sh"
    rec = decode_record(1, 1, key, None)
    assert rec.early_access == "Kafka 4.0" and rec.key == {"group_id": "sh"}
    assert rec.raw_key == key and rec.tombstone
