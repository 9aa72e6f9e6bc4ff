"""The log lines `groupctl analyze` reads, as data: one regular expression per line kind.

Written from real lines of a Kafka 4.3 lab broker (tests/fixtures/analyze/) and from Kafka
3.x's Scala GroupCoordinator format strings. Each LinePattern names the cheap prefix that
selects it (a `startswith` on the message) and the regex groups that fill event columns.
The Spark extractor (extract.py) turns these into `F.regexp_extract` expressions; the
benchmark's plain-Python peer (bench/analyze.py) runs the same regexes with `re`, so both
do the same extraction. Java regex and Python `re` agree on everything used here.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Spark runs these with java.util.regex, whose \d \w \s are ASCII classes; Python's `re`
# on str makes them Unicode ones (a NBSP is \s, "Δ" is \w, "١" is \d). A Python twin
# compiles a pattern with these flags to extract what Spark extracts.
PYTHON_FLAGS = re.ASCII

# log4j `[%d] %p %m (%c)%n` -- the broker's and the Java clients' layout. A line cut short
# loses its `(logger)` tail and so fails here: truncated lines are counted, not guessed at.
LOG4J_LINE = (r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) "
              r"(.*) \(([A-Za-z_$][\w.$]*)\)$")
LOG4J_TS_FORMAT = "yyyy-MM-dd HH:mm:ss,SSS"
# The start of a record; a multi-line record's first line has it but no `(logger)` tail.
LOG4J_START = r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) "
# A record start without the tail whose message is one we read: cut short (truncated)
BROKER_TRUNCATED = LOG4J_START + r"\[GroupCoordinator "
JAVA_TRUNCATED = LOG4J_START + r"\[Consumer clientId=[^\]]*\] \S"
# ... except the KIP-848 consumer's multi-line record (its tail comes lines later)
JAVA_MULTILINE = LOG4J_START + r"\[Consumer clientId=[^\]]*\] Reconciling assignment with local epoch -?\d+$"
# 4.x `[GroupCoordinator id=1 topic=__consumer_offsets partition=6] `, 3.x `[GroupCoordinator 1]: `
BROKER_PREFIX = r"^\[GroupCoordinator (?:id=)?(\d+)[^\]]*\]:? "
BROKER_LOGGERS = r"^(org\.apache\.kafka\.coordinator\.group\.|kafka\.coordinator\.group\.)"
# The Java consumer: `[Consumer clientId=C, groupId=G] `
JAVA_PREFIX = r"^\[Consumer clientId=([^,\]]*), groupId=([^\]]*)\] "
JAVA_LOGGERS = r"^org\.apache\.kafka\.clients\.consumer\."
# librdkafka's default log line: `%7|1795439400.702|FAC|client#consumer-1| [thrd:main]: msg`
RDKAFKA_LINE = r"^%(\d)\|(\d+\.\d{3})\|([A-Z_0-9]+)\|([^|#]*)(#[^|]*)?\| \[thrd:[^\]]*\]: (.*)$"
# What follows a multi-line record: stack frames, banners, the record's last line.
CONTINUATION = r"^(\s|\*|Caused by|[\w$.]+(Exception|Error)\b|.* \([\w.$]+\)$)"

_CO = r"(?: \(__consumer_offsets-\d+\))?"   # 3.x names the offsets partition


@dataclass(frozen=True)
class LinePattern:
    kind: str          # the event's `kind`
    prefix: str        # the message starts with this (cheap dispatch)
    regex: str         # on the message (after the coordinator / client prefix)
    fields: dict       # column -> regex group


BROKER_PATTERNS: tuple[LinePattern, ...] = (
    LinePattern("prepare", "Preparing to rebalance group ",
                r"^Preparing to rebalance group (\S+) in state (\w+) with old generation (\d+)"
                + _CO + r" \(reason: (.*)\)\.?$",
                {"group": 1, "state": 2, "generation": 3, "reason": 4}),
    LinePattern("stabilized", "Stabilized group ",
                r"^Stabilized group (\S+) generation (\d+)" + _CO + r" with (\d+) members\.?$",
                {"group": 1, "generation": 2, "members": 3}),
    LinePattern("empty", "Group ",
                r"^Group (\S+) with generation (\d+) is now empty" + _CO + r"\.?$",
                {"group": 1, "generation": 2}),
    LinePattern("member_failed", "Member ",
                r"^Member (\S+) in group (\S+) has failed, removing it from the group\.?$",
                {"member": 1, "group": 2}),
    LinePattern("member_left", "[Group ",
                r"^\[Group (\S+)\] Member (\S+) has left group through explicit `LeaveGroup` "
                r"request; client reason: (.*)$",
                {"group": 1, "member": 2, "reason": 3}),
    LinePattern("member_left", "Member MemberMetadata(",   # 3.x
                r"^Member MemberMetadata\(memberId=([^,]+), groupInstanceId=(?:Some\()?([^,)]*)\)?, "
                r"clientId=([^,]*), .*\) has left group (\S+) through explicit `LeaveGroup`; "
                r"client reason: (.*)$",
                {"member": 1, "instance_id": 2, "client": 3, "group": 4, "reason": 5}),
    LinePattern("member_joined", "Pending dynamic member with id ",
                r"^Pending dynamic member with id (\S+) joins group (\S+) in (\w+) state\. "
                r"Adding to the group now\.$",
                {"member": 1, "group": 2, "state": 3}),
    LinePattern("member_joined", "Static member with groupInstanceId=",
                r"^Static member with groupInstanceId=(\S+) and unknown member id joins group "
                r"(\S+) in (\w+) state\. Created a new member id (\S+) for this member and "
                r"add(?:ed)? to the group\.$",
                {"instance_id": 1, "group": 2, "state": 3, "member": 4}),
    LinePattern("static_replaced", "Static member with groupInstanceId=",
                r"^Static member with groupInstanceId=(\S+) and unknown member id joins group "
                r"(\S+) in (\w+) state\. Replacing previously mapped member (\S+) with this "
                r"groupInstanceId\.$",
                {"instance_id": 1, "group": 2, "state": 3, "member": 4}),
    LinePattern("assignment_received", "Assignment received from leader ",
                r"^Assignment received from leader (\S+) for group (\S+) for generation (\d+)\. "
                r"The group has (\d+) members, \d+ of which are static\.$",
                {"member": 1, "group": 2, "generation": 3, "members": 4}),
    LinePattern("epoch_bumped", "[GroupId ",
                r"^\[GroupId (\S+)\] Bumped group epoch to (\d+)(?: with metadata hash -?\d+)?\.$",
                {"group": 1, "epoch": 2}),
    LinePattern("member_joined", "[GroupId ",
                r"^\[GroupId (\S+)\] Member (\S+) joins the (\w+) group using the (\w+) protocol\.$",
                {"group": 1, "member": 2, "group_type": 3, "protocol": 4}),
    # a new static member (a static member's restart, `re-joins ... to replace`, takes its
    # place without joining; `temporarily left` keeps it in the group)
    LinePattern("member_joined", "[GroupId ",
                r"^\[GroupId (\S+)\] Static member (\S+) with instance id (\S+) joins the (\w+) "
                r"group using the (\w+) protocol\.$",
                {"group": 1, "member": 2, "instance_id": 3, "group_type": 4, "protocol": 5}),
    LinePattern("member_left", "[GroupId ",
                r"^\[GroupId (\S+)\] Member (\S+) left the (\w+) group\.$",
                {"group": 1, "member": 2, "group_type": 3}),
    LinePattern("member_fenced", "[GroupId ",
                r"^\[GroupId (\S+)\] Member (\S+) fenced from the group because (.*?)\.?$",
                {"group": 1, "member": 2, "reason": 3}),
    # KIP-932 share groups need nothing more: their member lines say `the share group` (the
    # joins/left patterns above) and their bump / fence / target lines are the consumer
    # group's words. KIP-1071 streams groups (4.3.1) name the member in a second bracket:
    # `[GroupId G][MemberId M] Member joins the streams group.`; the literal `(streams)` group
    # fills `group_type`. Their target line is the consumer group's; their fence line is
    # `[GroupId G] Streams member M fenced from the group because R.`
    LinePattern("epoch_bumped", "[GroupId ",
                r"^\[GroupId (\S+)\]\[MemberId (\S+)\] Bumped (streams) group epoch to (\d+)"
                r"(?: with metadata hash -?\d+)?(?: and validated topic epoch -?\d+)?\.$",
                {"group": 1, "member": 2, "group_type": 3, "epoch": 4}),
    LinePattern("member_joined", "[GroupId ",
                r"^\[GroupId (\S+)\]\[MemberId (\S+)\] Member joins the (streams) group\.$",
                {"group": 1, "member": 2, "group_type": 3}),
    LinePattern("member_left", "[GroupId ",
                r"^\[GroupId (\S+)\]\[MemberId (\S+)\] Member \S+ left the (streams) group\.$",
                {"group": 1, "member": 2, "group_type": 3}),
    # (sic: the session-timeout reason ends in `..`)
    LinePattern("member_fenced", "[GroupId ",
                r"^\[GroupId (\S+)\] Streams member (\S+) fenced from the group because (.*?)\.*$",
                {"group": 1, "member": 2, "reason": 3}),
    # At shutdown / unload, the group's epoch: share and streams groups bump it without a
    # line when a member leaves, so this is where their last epoch shows.
    LinePattern("unloaded", "[GroupId=",
                r"^\[GroupId=(\S+)\] Unloaded group metadata for group epoch (\d+)\.$",
                {"group": 1, "epoch": 2}),
    # The coordinator moving (its broker stopped, the partition's leadership moved): the
    # old one unloads a classic group (consumer groups: `Unloaded ... group epoch` above),
    # the new one loads every group of the partition.
    LinePattern("unloaded", "[GroupId=",
                r"^\[GroupId=(\S+)\] Unloading group metadata for generation (\d+)\.$",
                {"group": 1, "generation": 2}),
    LinePattern("loaded", "Loaded ",
                r"^Loaded (classic|consumer|share|streams) group (\S+) with (\d+) members\.$",
                {"group_type": 1, "group": 2, "members": 3}),
    LinePattern("target_computed", "[GroupId ",
                r"^\[GroupId (\S+)\] Computed a new target assignment for epoch (\d+) with "
                r"'([^']*)' assignor in (\d+)ms\.$",
                {"group": 1, "epoch": 2, "protocol": 3, "duration_ms": 4}),
)

JAVA_PATTERNS: tuple[LinePattern, ...] = (
    LinePattern("joining", "(Re-)joining group", r"^\(Re-\)joining group$", {}),
    LinePattern("rejoin_requested", "Request joining group due to: ",
                r"^Request joining group due to: (.*)$", {"reason": 1}),
    LinePattern("joined", "Successfully joined group with generation ",
                r"^Successfully joined group with generation Generation\{generationId=(-?\d+), "
                r"memberId='([^']*)', protocol='([^']*)'\}$",
                {"generation": 1, "member": 2, "protocol": 3}),
    LinePattern("synced", "Successfully synced group in generation ",
                r"^Successfully synced group in generation Generation\{generationId=(-?\d+), "
                r"memberId='([^']*)', protocol='([^']*)'\}$",
                {"generation": 1, "member": 2, "protocol": 3}),
    LinePattern("assigned", "Notifying assignor about the new Assignment(",
                r"^Notifying assignor about the new Assignment\(partitions=\[(.*)\]\)$",
                {"partitions": 1}),
    LinePattern("revoked", "Revoke previously assigned partitions ",
                r"^Revoke previously assigned partitions \[(.*)\]$", {"partitions": 1}),
    LinePattern("leaving", "Member ",
                r"^Member (\S+) sending LeaveGroup request to coordinator .* due to (.*)$",
                {"member": 1, "reason": 2}),
    # The KIP-848 consumer (AsyncKafkaConsumer / ConsumerMembershipManager):
    # `Member M with epoch E transitioned from S1 to S2.`, one kind per state reached
    *(LinePattern(kind, "Member ",
                  r"^Member (\S+) with epoch (-?\d+) transitioned from (\w+) to (" + state + r")\.$",
                  {"member": 1, "epoch": 2, "state": 4})
      for kind, state in (("joining", "JOINING"), ("reconciling", "RECONCILING"),
                          ("stable", "STABLE"), ("leaving", "PREPARE_LEAVING"),
                          ("left", "UNSUBSCRIBED"), ("fenced", "FENCED"),
                          ("poll_timeout", "STALE"), ("error", "FATAL"))),
    LinePattern("revoked", "Revoking previously assigned partitions ",
                r"^Revoking previously assigned partitions \[(.*)\]$", {"partitions": 1}),
    LinePattern("heartbeat_failed", "ConsumerGroupHeartbeatRequest failed ",
                r"^ConsumerGroupHeartbeatRequest failed (?:because )?(.*)$", {"reason": 1}),
    LinePattern("poll_timeout", "consumer poll timeout has expired",
                r"^(consumer poll timeout has expired)", {"reason": 1}),
    LinePattern("heartbeat_failed", "Attempt to heartbeat ",
                r"^Attempt to heartbeat (.*)$", {"reason": 1}),
)

RDKAFKA_PATTERNS: tuple[LinePattern, ...] = (
    LinePattern("joined", "JoinGroup response: GenerationId ",
                r"^JoinGroup response: GenerationId (\d+), Protocol (\S*), LeaderId \S*, my "
                r"MemberId (\S+), member metadata count \d+: \(no error\)$",
                {"generation": 1, "protocol": 2, "member": 3}),
    LinePattern("rebalance_started", "Group \"",
                r"^Group \"([^\"]+)\" (?:is rebalancing|initiating rebalance) \((\w+)\) in state "
                r"\w+ \(join-state [\w-]+\) with \d+ assigned partition\(s\)(?:: (.*))?$",
                {"group": 1, "protocol": 2, "reason": 3}),
    LinePattern("assigned", "Group \"",
                r"^Group \"([^\"]+)\": delegating assign of (\d+) partition\(s\) to application",
                {"group": 1, "partitions": 2}),
    LinePattern("revoked", "Group \"",
                r"^Group \"([^\"]+)\": delegating revoke of (\d+) partition\(s\) to application",
                {"group": 1, "partitions": 2}),
    LinePattern("leaving", "Group \"",
                r"^Group \"([^\"]+)\": leave \(in state \w+\)$", {"group": 1}),
    LinePattern("heartbeat_failed", "Group \"",
                r"^Group \"([^\"]+)\" heartbeat error response in state .*: (.*)$",
                {"group": 1, "reason": 2}),
)
# librdkafka facilities worth reading (everything else is ignored, not "unparsed")
# a librdkafka cgrp line naming its group: `Group "G"...`, `Joining group "G" with ...`
RDKAFKA_GROUP_NAMED = r'[Gg]roup "([^"]+)"'
RDKAFKA_NAMES_GROUP = 'roup "'   # the literal every such line holds (a cheap pre-filter)
RDKAFKA_FACILITIES = ("JOINGROUP", "REBALANCE", "ASSIGN", "LEAVE", "HEARTBEAT")

# Reasons, as the broker words them -> the trigger member (first non-empty group wins)
TRIGGER_MEMBER = (r"(?:Adding new member (\S+) with|removing member (\S+) on heartbeat|"
                  r"request for \((\S+?)\) members|Removing member (\S+) on LeaveGroup|"
                  r"static member (\S+) with instance id|Updating metadata for member (\S+)"
                  r"|because static member (\S+)"
                  # groupctl's records (observe/reasons.py): `member X (client C, ...) joined`
                  r"|^member (\S+) \()")
# A member id made by the broker: `<client.id>-<uuid>` (classic protocol)
CLIENT_OF_MEMBER = r"^(.*)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
# reason text -> category, in order (colours the report)
REASON_KINDS = (
    ("session timeout", r"heartbeat expiration|has failed|session timeout"),
    ("leave", r"LeaveGroup|leaving|left the group|\) left or expired"),
    ("static member", r"static member"),
    ("join", r"^Adding new member|joins the|joined the group|\) joined$|^probe joined"),
    ("fenced", r"fenced"),
    ("metadata", r"[Mm]etadata|subscription|protocol"),
    ("sync timeout", r"pending sync"),
)


_REGEX_ESCAPED_LITERALS = set(".()[]{}\\/|?*+^$-'\"`=:,;<>!#%&@ ")
_QUANTIFIERS = set("?*+{")


def required_literal(regex: str) -> str:
    """The longest run of literal text every match of `regex` contains: only characters
    outside any group, class or alternation, none of them quantified. "" when there is
    none. A cheap byte `contains` on it rules a line out before any regex runs."""
    if "|" in _top_level(regex):
        return ""
    runs, run, i, depth = [], "", 0, 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\" and i + 1 < len(regex):
            token, literal, i = regex[i:i + 2], regex[i + 1] in _REGEX_ESCAPED_LITERALS, i + 2
            char = token[1] if literal else None
        elif ch == "[":
            end = _class_end(regex, i)
            token, char, i = regex[i:end], None, end
        elif ch in "()":
            depth += 1 if ch == "(" else -1
            token, char, i = ch, None, i + 1
        else:
            token, char, i = ch, (None if ch in ".^$?*+{}|" else ch), i + 1
        quantified = i < len(regex) and regex[i] in _QUANTIFIERS
        if depth == 0 and char is not None and not quantified and token != ")":
            run += char
        else:
            runs.append(run)
            run = ""
    runs.append(run)
    return max(runs, key=len)


def _class_end(regex: str, start: int) -> int:
    """The index after the character class opening at `start` (`]` first is literal)."""
    i = start + 1
    if i < len(regex) and regex[i] == "^":
        i += 1
    if i < len(regex) and regex[i] == "]":
        i += 1
    while i < len(regex) and regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i + 1


def _top_level(regex: str) -> str:
    """`regex` with every group's and class's inside taken out (escapes kept as they are)."""
    out, depth, i = [], 0, 0
    while i < len(regex):
        ch = regex[i]
        if ch == "\\":
            if depth == 0:
                out.append(regex[i:i + 2])
            i += 2
            continue
        if ch == "[":
            i = _class_end(regex, i)
            continue
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and ch != ")":
            out.append(ch)
        i += 1
    return "".join(out)
