"""Every crash found while fuzzing (tests/fuzz, bench/fuzz.py), with its input: the harness
must now pass it (only the documented error may come out), and the user-facing behaviour
is the documented one (one `groupctl: error:` line, exit 2).

Each test says how the input was found (by a harness, or by hand while writing one:
those the campaigns did not reach in their executions are marked so) and what the crash
was before the fix.
"""
from __future__ import annotations

import re

import pytest

import cli_runner as runner
from groupctl.errors import UsageError
from tests.fuzz.registry import load

HARNESSES = load()
CLOSED = "127.0.0.1:1"  # nothing listens: a command that got as far as connecting exits 3


def run_cli(*argv: str, tmp_path) -> tuple[int, str, str]:
    return runner.run_cli(*argv, stdin="", environ={
        "GROUPCTL_CONFIG": str(tmp_path / "config.yaml"), "HOME": str(tmp_path)})


def one_error_line(err: str) -> str:
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("groupctl: error: "), err
    assert "internal error" not in err and "Traceback" not in err, err
    return lines[0]


# ---- contexts: deeply nested YAML -------------------------------------------------------
# Found by hand while writing the `contexts` harness (its 46,530-execution campaign did not
# reach the depth): PyYAML composes nested collections recursively, so a file of 3000 "["
# raised RecursionError out of load_contexts (exit 1, "internal error"). (600 levels are
# enough to overflow the stack; PyYAML's scanner is quadratic in flow nesting, so 3000
# take ~7 s to reject: a known cost, still exit 2.)

@pytest.mark.parametrize("data", [b"[" * 600, b"{" * 600, b"contexts:\n" + b"- " * 2000])
def test_contexts_nested_too_deeply(data, tmp_path):
    from groupctl.config import load_contexts

    HARNESSES["contexts"].check(data)
    path = tmp_path / "config.yaml"
    path.write_bytes(data)
    with pytest.raises(UsageError, match=r"config\.yaml: not valid YAML: nested too deeply"):
        load_contexts(path)
    code, _, err = run_cli("config", "view", tmp_path=tmp_path)
    assert code == 2
    assert "nested too deeply" in one_error_line(err)


# ---- bootstrap: a port of non-ASCII digits ------------------------------------------------
# Found by hand while writing the `contexts` and `cli` harnesses (bootstrap_servers: h:²;
# the campaigns did not reach it): str.isdigit() accepts "²" and "١٢" (Arabic-Indic),
# int() then raised ValueError (exit 1); `-b h:² list` did the same.

@pytest.mark.parametrize("server", ["h:²", "h:١٢", "h:９０９２", "[::1]:²"])
def test_bootstrap_port_non_ascii_digits(server, tmp_path):
    from groupctl.config import parse_bootstrap

    with pytest.raises(UsageError, match="the port must be a number from 1 to 65535"):
        parse_bootstrap(server)
    HARNESSES["contexts"].check(f"contexts:\n  a:\n    bootstrap_servers: '{server}'\n".encode())
    code, _, err = run_cli("-b", server, "list", tmp_path=tmp_path)
    assert code == 2
    assert "the port must be a number" in one_error_line(err)


# ---- analyze's patterns: Python twins vs java.util.regex ---------------------------------
# Found by the `patterns` harness: Python's `re` on str treats \s \w \d as Unicode classes,
# java.util.regex (what Spark's rlike / regexp_extract run) as ASCII ones, so the plain-
# Python peer of bench/analyze.py extracted other fields than Spark for a line holding a
# Unicode space, letter or digit: '\x1d=' matched CONTINUATION in Python only.

# The first input of each of the 8 distinct crashes of a 346,751-execution campaign
# (bench/fuzz.py): Unicode digits (U+0661), spaces (U+00A0 in a group id, U+001D-U+001F).
PATTERN_CRASHES = [
    b"[2026-11-23310 9::58,548] INFO [Consumer clientId=console-consumer-killed, groupId=har"
     b"vest-classic-0897719696] Request joining group due to: need to re-join with the given "
     b"member-id-7f9a3d5513a5 (org.apache.kafka.clients.consumer\xd9\xa1nternals.ConsumerCoor"
     b"dinator)",
    b'%7|1\xd9\xa1795439409.665|ASSIGN|rdkafka-debug#consumer-1| [thrd:main]: Group "harvest'
     b'-classic-1795439393": delegating revoke of 3 partition(s) to application on queue rd_k'
     b"afka_consumer_close0: unsubscribe",
    b"[2026-11-23 14:49:54,261] INFO [GroupCoordinator id=1 topic=_1 (__consumer__consumer_o"
     b"ffsets partition=9] [GroupId fence\x1fshare] Member IgxY+FU9SwW+q2aEAR2RGA fenced from"
     b" the group because the member session expired. (org.apache.kafka.coordinator.group.Gro"
     b"upMetadataManager)",
    b"[2026-11-23 14:48:15,497] INFO [Consumer clientId=java848-1, groupId=harvest-java848] "
     b"Member \x1dT4FZ4BQCRb-BMMKQJhxCpw with epoch 0 transitioned from UNSUBSCRIBED to JOINI"
     b"NG. (org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager)",
    b"[2026-11-20 08:00:04,010] INFO [GroupCoordinator 1]: Stabilized group orders\xc2\xa0-v"
     b"3 generation 1 (__consumer_offsets-12) with 1 members (kafka.coordinator.group.GroupCo"
     b"ordinator)",
    b'%7|3795439409.665|REBALANCE|rdkafka-debug#consumer-1| [thrd:main]: Group "harv439393" '
     b"initiating rebalance (EOGER) in state up (join-state steady) with 3\xd9\xa1 assigned p"
     b"artition(s): unsubscribe",
    b"[2026-11-23 14:49:54,261] INFO [GroupCoordinator \xd9\xa1id=1 topic=_] [GroupdIf ence-"
     b"share] MembMember +FU9SwW+q1aEAR2RGA fenced from the group because the member session "
     b"expired. (org.apache.kafka.coordinator.group.GradataManager)",
    b"%7|1795439403.527|JOINGROUP|rdkafka-debug#consume<-1| [thrd:mai.]: JoinGroup response:"
     b" GenerationId 3, Protocol range, LeaderId analyz639\x1ef0-e5, my MemberId rdkebc-47, m"
     b"ember metadata count 0: (no error)",
]


@pytest.mark.parametrize("data", PATTERN_CRASHES)
def test_patterns_campaign_inputs(data):
    HARNESSES["patterns"].check(data)


@pytest.mark.parametrize("pattern,text", [
    ("CONTINUATION", "\x1d="),
    ("LOG4J_LINE", "[2026-11-23 14:48:15,497] INFO [Consumer clientId=c, groupId=g] x "
                   "(org.apacheΔafka.clients.consumer.internals.ConsumerMembershipManager)"),
    ("BROKER_PREFIX", "[GroupCoordinator id=١] x"),
])
def test_patterns_python_twins_use_java_classes(pattern, text):
    from groupctl.analytics import patterns as P

    regex = getattr(P, pattern)
    java_like = re.compile(regex, re.ASCII).search(text)
    twin = re.compile(regex, P.PYTHON_FLAGS).search(text)
    assert (twin and twin.groups()) == (java_like and java_like.groups())
    HARNESSES["patterns"].check(text.encode())


# ---- CLI: NaN and out-of-range seconds ----------------------------------------------------
# Found by hand, trying the `cli` harness's hostile values (nan, inf, 1e400) on every
# seconds option (its 111,956-execution campaign did not combine them): `join
# --session-timeout nan` raised ValueError (int(nan)) out of the command (exit 1). On a lab
# broker: `--session-timeout 3000000` (3e9 ms, past an INT32) made the probe's JoinGroup
# encoder raise struct.error inside a task ("Task exception was never retrieved" on
# stderr) and the command hung past --timeout; `join --watch --duration nan` never ended.
# `--timeout nan` was taken (exit 6 "not done within --timeout nan s") instead of exit 2.

@pytest.mark.parametrize("argv,message", [
    (["join", "g", "--session-timeout", "nan"], "--session-timeout must be"),
    (["join", "g", "--session-timeout", "3000000"], "--session-timeout must be"),
    (["join", "g", "--rebalance-timeout", "inf"], "--rebalance-timeout must be"),
    (["join", "g", "--watch", "--duration", "nan"], "--duration must be"),
    (["--timeout", "nan", "list"], "--timeout must be"),
    # the same, in watch and wait (the fuzz report's "found, not fixed" list)
    (["watch", "g", "--interval", "nan", "--duration", "2"], "--interval must be"),
    (["watch", "g", "--duration", "nan"], "--duration must be"),
    (["wait", "g", "--settled", "nan"], "--settled must be"),
    (["wait", "g", "--interval", "nan"], "--interval must be"),
])
def test_cli_rejects_nan_and_overflowing_seconds(argv, message, tmp_path):
    code, _, err = run_cli("-b", CLOSED, *argv, tmp_path=tmp_path)
    assert code == 2, err
    assert message in one_error_line(err)
    HARNESSES["cli"].check("\x00".join(argv).encode())


# ---- decode records: a timestamp past year 9999 -------------------------------------------
# Found by hand while writing the `segments` harness (its differential oracle; the segments
# campaign ran after the fix): an offset commit whose record timestamp is past 9999-12-31
# (ms > 253402300799999; a damaged or hostile segment) rendered `"timestamp": "None"` on
# render/record_lines.py's fast path and `"timestamp": null` on the generic decoder's, so
# `decode records -o ndjson` printed a string "None" where the other path printed null.
FAR_FUTURE_COMMIT = bytes.fromhex(
    "00000000000000000000005c00000000027f6f2dda000000000000400000000000000040000000000000"
    "00ffffffffffffffffffffffffffff000000015400000018000100016700017400000000300003000000"
    "000000002a000000070000000001a20c1becc700")


def test_segments_far_future_timestamp_is_null_on_both_paths(tmp_path):
    import json

    from groupctl.render.record_lines import segment_lines

    HARNESSES["segments"].check(FAR_FUTURE_COMMIT)
    path = tmp_path / "__consumer_offsets-3" / "00000000000000000000.log"
    path.parent.mkdir()
    path.write_bytes(FAR_FUTURE_COMMIT)
    (line, warning), = segment_lines(str(path), None)
    item = json.loads(line)
    assert warning is None
    assert item["timestamp"] is None and item["timestamp_ms"] == 2**62
    assert item["value"]["offset"] == 42 and item["version"] == 3


# ---- record batches: decompression bombs ----------------------------------------------------
# Found by hand while writing the `batches` harness (its 717,665-execution campaign stayed
# under libFuzzer's memory limit with inputs of at most 16 KB): a 9.7 KB segment holding
# one zstd batch of 300 MB of zeros took 640 MB of memory to reject, and a 1 MB batch
# would take ~30 GB (the process killed, no error line). Now a batch's records
# decompress to at most MAX_RECORDS_BYTES (the test lowers it to 1 MiB), else the batch
# is a BatchError and the scan goes on.

@pytest.mark.parametrize("codec", [1, 3, 4])   # gzip, lz4, zstd (snappy is bounded ~1:21)
def test_batches_decompression_bomb_is_a_damaged_batch(codec, monkeypatch):
    import struct

    from groupctl.protocol.records import compression
    from groupctl.protocol.records.batch import Batch, BatchError, encode_batch, read_batches
    from tests.fuzz.targets_records import fix_crcs

    monkeypatch.setattr(compression, "MAX_RECORDS_BYTES", 1 << 20)
    bomb = compression.compress(codec, bytes(4 << 20))
    header = bytearray(encode_batch([(0, b"k", b"v")], codec=codec)[:61])
    struct.pack_into(">i", header, 8, 49 + len(bomb))
    after = encode_batch([(0, b"k", b"v")], base_offset=1)
    seg = fix_crcs(bytes(header) + bomb) + after
    HARNESSES["batches"].check(b"\x01" + seg)
    damaged, good = list(read_batches(seg))
    assert isinstance(damaged, BatchError) and damaged.offset == 0
    assert damaged.reason.endswith(f"records decompress to more than {1 << 20} bytes")
    assert isinstance(good, Batch) and [(r.key, r.value) for r in good.records] == [(b"k", b"v")]
    small = compression.compress(codec, bytes(1 << 19))
    assert compression.decompress(codec, small) == bytes(1 << 19)


# ---- coordinator records: a non-nullable array serialized as null -----------------------------
# Found by the `segments` harness (first of 593 inputs of one distinct crash in a
# 240-second campaign; a lab GroupMetadata record whose leader string's length was
# mutated): the codec reads any length of -1 as null, so GroupMetadata's `members`
# (non-nullable) decoded to None and observe/reads/replay raised TypeError ('NoneType' object
# is not iterable) replaying it. Kafka's readers reject it ("non-nullable field members
# was serialized as null"); decode_value now does too: the record carries `error`.
SEGMENT_NULL_MEMBERS = bytes.fromhex(
    "00000000007e000200000142000000000247e47db4000200000000000001a20c65f880000001a20c65f880ff"
    "ffffffffffffffffff000000000000000182534e41505059000000000100000001000000fdbb03c0f2060000"
    "00200002000c7265632d65616765722d7266c40600030008636f6e73756d657200000002000572616e676500"
    "312e2700c82d312d65326564646639332d363066342d343162372d393632352d633232336166613937653436"
    "000001a20c65f87c00000002d241000cffff000e3678004c000a2f3132372e302e302e31000493e000002710"
    "05c9440300000001000a7265636f7264732d7266000d010cffffffff050b002205063e240000020516013c01"
    "010033326e00a0322d39386638626265312d626265632d346439312d613964642d6363663035303135393564"
    "63ffff0036a5000032fea50052a50024020000000300000000000000000000000003000000a1000000000240"
    "2a6a2a000200000001000001a20c65f9ba000001a20c65f9baffffffffffffffffffff000000000000000282"
    "534e415050590000000001000000010000005ca40178a001000000400001000c7265632d65616765722d7266"
    "000a7265636f726473010c18000002540004000901000201077001000001a20c65f9ba010010f3d5c630a8d5"
    "4974b5b8827819dda68b00015200027e52000003ae520000000065632d346439312d613964642d63636630a2"
    "0c65f87c00000002d24136a5000032fea50052a50024020000000300000000000000000000000003000000a1"
    "0000000002402a6a2a000200000001000001a20c65f9ba000001a20c65f9baffffffffffffffffffff000000"
    "000000000282534e415050590000000001000000010000005ca40178a001000000400001000c30a8d54974b5"
    "b8827819dda68b00015200027e52000001ae5200"
)


def test_segments_non_nullable_null_is_a_record_error():
    import struct

    from groupctl.observe.reads.replay import replay
    from groupctl.protocol.records.coordinator import decode_record

    HARNESSES["segments"].check(SEGMENT_NULL_MEMBERS)
    key = struct.pack(">hh", 2, 1) + b"g"
    value = (struct.pack(">hh", 3, 8) + b"consumer" + struct.pack(">ih", 1, 5) + b"range"
             + struct.pack(">h", 1) + b"m" + struct.pack(">qi", 0, -1))   # members: -1
    rec = decode_record(5, 1_795_499_486_000, key, value)
    assert rec.type == 2 and rec.key == {"group": "g"} and rec.version == 3
    assert rec.value is None and rec.raw_value == value
    assert rec.error == "value: non-nullable field members was serialized as null"
    assert list(replay([[rec]])) == []
    ok = decode_record(5, 1_795_499_486_000, key, value[:-4] + struct.pack(">i", 0))
    assert ok.error is None and ok.value["members"] == [] and ok.value["leader"] == "m"
