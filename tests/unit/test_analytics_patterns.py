"""groupctl/analytics/patterns.py against real Kafka 4.3.1 lines (no Spark: patterns.py is
plain data, and the Spark extractor dispatches the same way -- first pattern whose prefix
and regex match wins). The lines are from tests/fixtures/analyze/kafka4-groups-server.log
and java848-consumer.log (harvested on a lab broker; see the fixtures' tests)."""
from __future__ import annotations

import re

import pytest

from groupctl.analytics import patterns as P

GC = ("[2026-11-23 14:47:52,639] INFO [GroupCoordinator id=1 topic=__consumer_offsets "
      "partition=33] {} (org.apache.kafka.coordinator.group.GroupMetadataManager)")
CL = ("[2026-11-23 14:49:11,397] INFO [Consumer clientId=java848-leave, groupId=java848-leave] "
      "{} (org.apache.kafka.clients.consumer.internals.ConsumerMembershipManager)")


def _classify(line, pats, prefix):
    m = re.match(P.LOG4J_LINE, line)
    assert m, line
    msg = re.sub(prefix, "", m.group(3), count=1)
    for p in pats:
        if msg.startswith(p.prefix) and re.search(p.regex, msg):
            found = re.search(p.regex, msg)
            return p.kind, {k: found.group(g) for k, g in p.fields.items()}
    return None, {}


@pytest.mark.parametrize("msg,kind,fields", [
    ("[GroupId harvest-share] Member P5zPa43wSwSxVQfJSR8s1w joins the share group using the "
     "share protocol.", "member_joined",
     {"group": "harvest-share", "member": "P5zPa43wSwSxVQfJSR8s1w", "group_type": "share"}),
    ("[GroupId harvest-share] Member G4EukRQeQrWINWMzq5u1mA left the share group.",
     "member_left", {"member": "G4EukRQeQrWINWMzq5u1mA", "group_type": "share"}),
    ("[GroupId harvest-share] Computed a new target assignment for epoch 4 with "
     "'org.apache.kafka.coordinator.group.assignor.SimpleAssignor@41c34319' assignor in 1ms.",
     "target_computed", {"group": "harvest-share", "epoch": "4"}),
    ("[GroupId fence-share] Member IgxY+FU9SwW+q2aEAR2RGA fenced from the group because the "
     "member session expired.", "member_fenced",
     {"member": "IgxY+FU9SwW+q2aEAR2RGA", "reason": "the member session expired"}),
    ("[GroupId harvest-streams][MemberId ZU7m3s50QnG2XprjiNLRGg] Member joins the streams "
     "group.", "member_joined",
     {"group": "harvest-streams", "member": "ZU7m3s50QnG2XprjiNLRGg", "group_type": "streams"}),
    ("[GroupId harvest-streams][MemberId ibl79NusQSGz0LYpdz-akw] Bumped streams group epoch to 4 "
     "with metadata hash 7944427169652494822 and validated topic epoch 0.", "epoch_bumped",
     {"group": "harvest-streams", "epoch": "4", "group_type": "streams"}),
    ("[GroupId harvest-streams][MemberId ZU7m3s50QnG2XprjiNLRGg] Bumped streams group epoch to 2 "
     "with metadata hash 5492924151956898908 and validated topic epoch -1.", "epoch_bumped",
     {"epoch": "2"}),
    ("[GroupId harvest-streams][MemberId ibl79NusQSGz0LYpdz-akw] Member ibl79NusQSGz0LYpdz-akw "
     "left the streams group.", "member_left",
     {"group": "harvest-streams", "member": "ibl79NusQSGz0LYpdz-akw", "group_type": "streams"}),
    ("[GroupId harvest-streams] Computed a new target assignment for epoch 5 with 'sticky' "
     "assignor in 1ms.", "target_computed", {"group": "harvest-streams", "epoch": "5"}),
    ("[GroupId fence-streams] Streams member Hsb3IQ5BRGSVo1sZQsCNRQ fenced from the group "
     "because the member session expired..", "member_fenced",
     {"group": "fence-streams", "member": "Hsb3IQ5BRGSVo1sZQsCNRQ",
      "reason": "the member session expired"}),
    ("[GroupId=harvest-streams] Unloaded group metadata for group epoch 6.", "unloaded",
     {"group": "harvest-streams", "epoch": "6"}),
    # read as nothing: the member's own epoch / metadata, topology set-up
    ("[GroupId harvest-streams][MemberId ZU7m3s50QnG2XprjiNLRGg] Member's new assignment state: "
     "epoch=5, previousEpoch=4, state=STABLE, assignedTasks=(active=[], standby=[], warmup=[]) "
     "and tasksPendingRevocation=(active=[], standby=[], warmup=[]).", None, {}),
    ("[GroupId harvest-streams][MemberId ZU7m3s50QnG2XprjiNLRGg] Configuring the topology 0",
     None, {}),
])
def test_share_and_streams_broker_lines(msg, kind, fields):
    got_kind, got = _classify(GC.format(msg), P.BROKER_PATTERNS, P.BROKER_PREFIX)
    assert got_kind == kind
    assert {k: got[k] for k in fields} == fields


@pytest.mark.parametrize("msg,kind,fields", [
    # a static KIP-848 member (Kafka 4.4.0, a librdkafka consumer with group.instance.id):
    # its first join is a join; its restart replaces it and a temporary leave keeps it
    ("[GroupId st-g] Static member OfHNpDrJRYGXet2DSYqxjA with instance id i-1 joins the "
     "consumer group using the consumer protocol.", "member_joined",
     {"group": "st-g", "member": "OfHNpDrJRYGXet2DSYqxjA", "instance_id": "i-1",
      "group_type": "consumer"}),
    ("[GroupId st-g] Static member with instance id i-1 re-joins the consumer group using the "
     "consumer protocol. Created a new member elOHZ+W5TWKsNXDe/NnpZQ to replace the existing "
     "member OfHNpDrJRYGXet2DSYqxjA.", None, {}),
    ("[GroupId st-g] Static member OfHNpDrJRYGXet2DSYqxjA with instance id i-1 temporarily "
     "left the consumer group.", None, {}),
])
def test_kip848_static_member_lines(msg, kind, fields):
    got_kind, got = _classify(GC.format(msg), P.BROKER_PATTERNS, P.BROKER_PREFIX)
    assert got_kind == kind
    assert {k: got[k] for k in fields} == fields


@pytest.mark.parametrize("msg,kind,fields", [
    ("Member 1XY1ZX8aTmqEkzP24C77zw with epoch 0 transitioned from UNSUBSCRIBED to JOINING.",
     "joining", {"member": "1XY1ZX8aTmqEkzP24C77zw", "epoch": "0", "state": "JOINING"}),
    ("Member 1XY1ZX8aTmqEkzP24C77zw with epoch 2 transitioned from JOINING to RECONCILING.",
     "reconciling", {"epoch": "2"}),
    ("Member 1XY1ZX8aTmqEkzP24C77zw with epoch 2 transitioned from ACKNOWLEDGING to STABLE.",
     "stable", {"epoch": "2"}),
    ("Member 1XY1ZX8aTmqEkzP24C77zw with epoch 2 transitioned from STABLE to PREPARE_LEAVING.",
     "leaving", {"epoch": "2"}),
    ("Member 1XY1ZX8aTmqEkzP24C77zw with epoch -1 transitioned from LEAVING to UNSUBSCRIBED.",
     "left", {"epoch": "-1"}),
    ("Member 1XY1ZX8aTmqEkzP24C77zw with epoch -1 transitioned from PREPARE_LEAVING to LEAVING.",
     None, {}),
    ("Revoking previously assigned partitions [harvest-java-t-2, harvest-java-t-3]", "revoked",
     {"partitions": "harvest-java-t-2, harvest-java-t-3"}),
    ("Revoke previously assigned partitions [java848-leave-t-0, java848-leave-t-1]", "revoked",
     {"partitions": "java848-leave-t-0, java848-leave-t-1"}),
])
def test_java_kip848_consumer_lines(msg, kind, fields):
    got_kind, got = _classify(CL.format(msg), P.JAVA_PATTERNS, P.JAVA_PREFIX)
    assert got_kind == kind
    assert {k: got[k] for k in fields} == fields


def test_the_kip848_multiline_record_is_not_a_truncated_one():
    first = ("[2026-11-23 14:49:04,610] INFO [Consumer clientId=java848-leave, "
             "groupId=java848-leave] Reconciling assignment with local epoch 0")
    assert re.match(P.JAVA_TRUNCATED, first) and re.match(P.JAVA_MULTILINE, first)
    cut = "[2026-11-23 14:49:04,610] INFO [Consumer clientId=c, groupId=g] Successfully joi"
    assert re.match(P.JAVA_TRUNCATED, cut) and not re.match(P.JAVA_MULTILINE, cut)


# The coordinator moving, as a 3-broker lab's nodes logged it (Kafka 4.3.1)
@pytest.mark.parametrize("msg,kind,fields", [
    ("[GroupId=an-move-classic-9b2c984b] Unloading group metadata for generation 2.",
     "unloaded", {"group": "an-move-classic-9b2c984b", "generation": "2"}),
    ("[GroupId=an-move-848-9b2c984b-76] Unloaded group metadata for group epoch 3.",
     "unloaded", {"group": "an-move-848-9b2c984b-76", "epoch": "3"}),
    ("Loaded classic group an-move-classic-9b2c984b with 2 members.", "loaded",
     {"group_type": "classic", "group": "an-move-classic-9b2c984b", "members": "2"}),
    ("Loaded consumer group an-move-848-9b2c984b-76 with 2 members.", "loaded",
     {"group_type": "consumer", "group": "an-move-848-9b2c984b-76", "members": "2"}),
])
def test_coordinator_move_lines(msg, kind, fields):
    got_kind, got = _classify(GC.format(msg), P.BROKER_PATTERNS, P.BROKER_PREFIX)
    assert got_kind == kind
    assert {k: got[k] for k in fields} == fields


@pytest.mark.parametrize("regex,literal", [
    (r"^Stabilized group (\S+) generation (\d+)(?: \(x\))? with (\d+) members\.?$",
     "Stabilized group "),
    (r"^\[GroupId (\S+)\] Computed a new target assignment for epoch (\d+) with",
     "] Computed a new target assignment for epoch "),
    (r"^\(Re-\)joining group$", "(Re-)joining group"),
    (r"^(consumer poll timeout has expired)", ""),          # inside a group only
    (r"^ab|cd$", ""),                                       # an alternation: none
    (r"^x[^\]]*\]:? done$", " done"),                       # a class; `:` quantified
    (r"^Group \"([^\"]+)\": leave \(in state \w+\)$", "\": leave (in state "),
])
def test_required_literal(regex, literal):
    assert P.required_literal(regex) == literal


def test_every_line_a_pattern_reads_holds_its_required_literal(fixture_lines):
    """The Spark extractor tests `contains(required_literal)` before a pattern's regex:
    on every real fixture message a regex matches, the literal is there."""
    checked = 0
    for msg in fixture_lines:
        for p in (*P.BROKER_PATTERNS, *P.JAVA_PATTERNS, *P.RDKAFKA_PATTERNS):
            if re.search(p.regex, msg, P.PYTHON_FLAGS):
                assert P.required_literal(p.regex) in msg, (p.kind, msg)
                checked += 1
    assert checked > 100


@pytest.fixture(scope="module")
def fixture_lines() -> list[str]:
    """Every message of the log fixtures (after the log4j / librdkafka header and the
    coordinator / client prefix), plain and gzipped."""
    import gzip
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "fixtures" / "analyze"
    out = []
    for path in sorted(root.glob("*.log*")):
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", errors="replace") as f:
            for line in f:
                line = line.rstrip("\n")
                m = re.match(P.LOG4J_LINE, line, P.PYTHON_FLAGS)
                if m:
                    msg = re.sub(P.BROKER_PREFIX, "", m.group(3), count=1)
                    out.append(re.sub(P.JAVA_PREFIX, "", msg, count=1))
                m = re.match(P.RDKAFKA_LINE, line, P.PYTHON_FLAGS)
                if m:
                    out.append(m.group(6))
    return out
