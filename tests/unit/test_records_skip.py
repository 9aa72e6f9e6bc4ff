"""`history`'s fast path through a partition of offset commits: batches holding no key of
the wanted groups are passed over whole (protocol.records.coordinator.group_keys_pattern,
read_batches(keep=...)), and what is kept is exactly what a full read keeps."""
from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groupctl.observe.sources.history import OFFSET_COMMIT_KEYS
from groupctl.protocol.records.batch import Batch, encode_batch, read_batches
from groupctl.protocol.records.compression import CODECS, GZIP, NONE
from groupctl.protocol.records.coordinator import group_keys_pattern, record_type

from test_record_batches import consumer_group_metadata, key


def commit(group: str, partition: int) -> tuple[int, bytes, bytes]:
    return (0, key(1, group, "orders") + struct.pack(">i", partition),
            b"\x00\x03" + bytes(30))


def wanted(batches, groups) -> list[tuple[int, int]]:
    """(offset, type) of every record of `groups` other than a commit."""
    from groupctl.protocol.records.coordinator import decode_key

    out = []
    for b in batches:
        assert isinstance(b, Batch)
        for r in b.records:
            rtype, fields, _ = decode_key(r.key)
            if rtype not in (0, 1) and fields and (fields.get("group_id") or fields.get("group")) in groups:
                out.append((r.offset, rtype))
    return out


@pytest.mark.parametrize("codec", [NONE, GZIP])
def test_commit_batches_are_passed_over_whole_and_group_records_kept(codec):
    batches = [
        [commit("g", p) for p in range(50)],                           # the group's own commits
        [commit("other", p) for p in range(50)],
        [(0, key(3, "other"), consumer_group_metadata(1))],
        [(0, key(3, "gg"), consumer_group_metadata(1)),                # names around "g"
         (0, key(3, "xg"), consumer_group_metadata(1))],
        [commit("g", 1), (0, key(3, "g"), consumer_group_metadata(2)), commit("g", 2)],
        [(0, key(5, "g", "member-1"), None)],                          # a tombstone
    ]
    data, offset = b"", 0
    for records in batches:
        data += encode_batch(records, base_offset=offset, codec=codec)
        offset += len(records)
    fast = list(read_batches(data, skip_keys=OFFSET_COMMIT_KEYS, keep=group_keys_pattern(["g"])))
    full = list(read_batches(data))
    assert [(b.base_offset, b.last_offset, b.count) for b in fast] == [
        (b.base_offset, b.last_offset, b.count) for b in full]   # offsets for the gap check
    assert [len(b.records) for b in fast] == [0, 0, 0, 0, 1, 1]
    assert wanted(fast, {"g"}) == wanted(full, {"g"}) == [(104, 3), (106, 5)]
    assert [record_type(r.key) for b in fast for r in b.records] == [3, 5]


def test_pattern_matches_group_keys_only():
    p = group_keys_pattern(["orders-app", "ü-group"])
    for rtype in (2, 3, 8, 17, 23, 300):
        assert p.search(b"\x01\x02" + key(rtype, "orders-app", "m") + b"\x00")
        assert p.search(key(rtype, "ü-group"))
    for rtype in (0, 1, -1):
        assert not p.search(key(rtype, "orders-app", "t"))
    assert not p.search(key(3, "orders-app2")) and not p.search(key(3, "my-orders-app"))
    assert not group_keys_pattern([]).search(key(3, "g"))


names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 24), names, st.binary(max_size=8)), min_size=1,
                max_size=12), names, st.sampled_from(sorted(CODECS)))
def test_never_passes_over_a_batch_holding_a_record_of_the_group(records, group, codec):
    """Whatever the other keys and values hold, a batch with a key of the group (type 2+)
    is read, and reading it with the filter keeps what the full read keeps."""
    data = encode_batch([(0, key(t, g) + extra, extra or None) for t, g, extra in records],
                        codec=codec)
    fast = list(read_batches(data, skip_keys=OFFSET_COMMIT_KEYS, keep=group_keys_pattern([group])))
    full = list(read_batches(data))
    assert wanted(fast, {group}) == wanted(full, {group})
