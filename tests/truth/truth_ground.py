"""Ground truth groupctl did not write, per group: the rounds the broker logged, the rounds
the coordinator's records hold as Kafka's own DumpLogSegments decodes them, and the clients'
own callbacks.

    rounds = broker_rounds(lab, group)       [Round(key, start_ms, end_ms, members, kind)]
    by_records = record_rounds(records, g)   [RecordRound(key, start_ms, end_ms, members)]
    records = dump_records(lab, workdir)     Kafka's decoding of every __consumer_offsets file

A round's `key` is what the broker numbers it by: a classic group's generation (a
"Stabilized group G generation N" or "Group G with generation N is now empty" line), a
consumer group's group epoch ("Bumped group epoch to N"). A classic round starts at the
"Preparing to rebalance" line before it; a consumer group's at its epoch bump and it ends
(records only) when every member holds its target at that epoch.

The patterns here are written from Kafka's log lines, not taken from groupctl's analytics,
so a wrong pattern there is not repeated here.
"""
from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path

_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] \w+ (.*)$")
_PREPARE = re.compile(r"Preparing to rebalance group (\S+) in state \w+ with old generation (\d+)"
                      r".*?\(reason: (.*)\)")
_STABLE = re.compile(r"Stabilized group (\S+) generation (\d+) with (\d+) members")
_SYNCED = re.compile(r"Assignment received from leader \S+ for group (\S+) for generation (\d+)")
_EMPTY = re.compile(r"Group (\S+) with generation (\d+) is now empty")
_BUMP = re.compile(r"\[GroupId (\S+)\](?:\[MemberId \S+\])? Bumped (?:streams )?group epoch to (\d+)"
                   r"(?: with metadata hash (-?\d+))?")
_TARGET = re.compile(r"\[GroupId (\S+)\] Computed a new target assignment for epoch (\d+)")
_LOADED = re.compile(r"Loaded \w+ group (\S+) with \d+ members")
_FAILED = re.compile(r"Member (\S+) in group (\S+) has failed")
_FENCED = re.compile(r"\[GroupId (\S+)\] Member (\S+) fenced from the group")


def _ms(stamp: str) -> int:
    # log4j writes the broker's local time; the lab runs on this machine
    return int(_dt.datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() * 1000)


@dataclass
class Round:
    key: int                     # generation (classic) or group epoch (consumer)
    end_ms: int                  # Stabilized / now empty (classic); the bump (consumer)
    start_ms: int | None = None  # the Preparing line before it (classic)
    members: int | None = None
    kind: str = "classic"
    reason: str | None = None
    superseded: bool = False     # consumer: a newer epoch came before its target was computed
    unreached: bool = False      # consumer: no member reached its target before the next
                                 # epoch (the records; set by the run)
    begun_ms: int | None = None  # classic: the first Preparing line, before a reload began it
                                 # again (start_ms is the last one)
    synced_ms: int | None = None  # classic: the leader's assignment received (the group Stable
                                  # from then on: CompletingRebalance before)

    @property
    def duration_ms(self) -> int | None:
        return None if self.start_ms is None else self.end_ms - self.start_ms


@dataclass
class LogTruth:
    rounds: list[Round] = field(default_factory=list)
    expired: int = 0             # members removed on session timeout (or fenced)
    targets: list[int] = field(default_factory=list)   # consumer: epochs of targets computed


def log_lines(lab) -> list[tuple[int, str]]:
    out = []
    for path in lab.log_files:
        for line in Path(path).read_text(errors="replace").splitlines():
            m = _LINE.match(line)
            if m and ("GroupCoordinator" in line or "GroupId" in line):
                out.append((_ms(m.group(1)), m.group(2)))
    out.sort(key=lambda x: x[0])
    return out


def broker_truth(lines: list[tuple[int, str]], group: str) -> LogTruth:
    """The rounds of `group` as the broker logged them (once each, also when a later
    coordinator logs a generation again)."""
    truth = LogTruth()
    seen: set[int] = set()
    prepared: tuple[int, str] | None = None
    begun: tuple[int, str] | None = None
    reloaded = False
    for ms, text in lines:
        if group not in text:
            continue
        if (m := _LOADED.search(text)) and m.group(1) == group:
            # a coordinator (new, or the same restarted) starts from the group's last written
            # state: a round under way is begun again, a generation not written is made again
            begun = begun or prepared
            prepared = None
            reloaded = True
        elif (m := _PREPARE.search(text)) and m.group(1) == group:
            if prepared is None:
                prepared = (ms, m.group(3))
        elif ((m := _STABLE.search(text)) or (m := _EMPTY.search(text))) and m.group(1) == group:
            gen = int(m.group(2))
            if gen in seen and reloaded:
                truth.rounds = [r for r in truth.rounds if r.key != gen]
                seen.discard(gen)
            if gen not in seen:
                seen.add(gen)
                members = int(m.group(3)) if m.re is _STABLE else 0
                first = begun or prepared
                truth.rounds.append(Round(gen, ms, prepared[0] if prepared else None, members,
                                          "classic", prepared[1] if prepared else None,
                                          begun_ms=first[0] if first else None))
            prepared = begun = None
        elif (m := _SYNCED.search(text)) and m.group(1) == group:
            for r in truth.rounds:
                if r.key == int(m.group(2)) and r.kind == "classic" and r.synced_ms is None:
                    r.synced_ms = ms
        elif (m := _BUMP.search(text)) and m.group(1) == group:
            epoch = int(m.group(2))
            if epoch not in seen:
                seen.add(epoch)
                # a hash of 0: no member subscribes to anything, the group is empty
                truth.rounds.append(Round(epoch, ms, ms, 0 if m.group(3) == "0" else None,
                                          "consumer"))
        elif (m := _TARGET.search(text)) and m.group(1) == group:
            truth.targets.append(int(m.group(2)))
        elif ((m := _FAILED.search(text)) and m.group(2) == group) or \
                ((m := _FENCED.search(text)) and m.group(1) == group):
            truth.expired += 1
    for r in truth.rounds[:-1]:   # the last bump (the group emptied) needs no target
        r.superseded = r.kind == "consumer" and r.key not in truth.targets and r.members != 0
    return truth


# ---- the coordinator's records, as Kafka's DumpLogSegments decodes them --------------------

def dump_records(lab, workdir: Path) -> list[dict]:
    """Every record of every __consumer_offsets segment of the lab, Kafka's decoding."""
    import sys

    from groupctl.lab import dump_log

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
    from records_support import snapshot

    files = snapshot(lab, str(workdir / "segments"))
    return dump_log.parse(dump_log.run(files)) if files else []


def _group_of(record: dict) -> str | None:
    key = record.get("key") or {}
    return key.get("group") or key.get("group_id")


@dataclass
class RecordRound:
    key: int
    end_ms: int | None            # classic: the GroupMetadata write; consumer: all at target
    start_ms: int | None = None   # consumer: the epoch's write (its bump)
    members: int | None = None


# the record types of each KIP-848-style group (Kafka's CoordinatorRecordType numbers): its
# member metadata, its group metadata (the epoch), its target assignment's epoch, a member's
# current assignment, and the `state` a member at its target has (STABLE)
RECORD_TYPES = {
    "consumer": {"member": 5, "epoch": 3, "target": 6, "current": 8, "stable": 0},
    "share": {"member": 10, "epoch": 11, "target": 12, "current": 14, "stable": 0},
    "streams": {"member": 19, "epoch": 17, "target": 20, "current": 22, "stable": 1},
}


def record_rounds(records: list[dict], group: str, kind: str = "consumer") -> list[RecordRound]:
    """The group's rounds in its records: classic generations (each GroupMetadata
    generation, the first time it is written), consumer (share, streams) group epochs (a
    target assignment epoch, from the write of its bump to the first write at which every
    member is at that epoch, STABLE, with nothing pending revocation; the log line of the
    bump may come hundreds of ms before that write on a loaded broker, and no member hears
    of the epoch before it is written)."""
    t = RECORD_TYPES[kind]
    out: list[RecordRound] = []
    gens: set[int] = set()
    members: dict[str, dict] = {}     # consumer: member -> current assignment value
    alive: set[str] = set()
    open_round: RecordRound | None = None
    bumped: dict[int, int] = {}       # consumer: epoch -> its group metadata write
    for r in records:
        if _group_of(r) != group or r["type"] in (0, 1):
            continue
        value, ts = r["value"], r["timestamp"]
        if r["type"] == 2 and value is not None:
            gen = value["generation"]
            if gen > 0 and gen not in gens:
                gens.add(gen)
                out.append(RecordRound(gen, ts, None, len(value.get("members") or ())))
        elif r["type"] == t["member"]:
            member = r["key"]["member_id"]
            (alive.add if value is not None else alive.discard)(member)
            if value is None:
                members.pop(member, None)
        elif r["type"] == t["current"]:
            member = r["key"]["member_id"]
            if value is None:
                members.pop(member, None)
            else:
                members[member] = value
        elif r["type"] == t["epoch"] and value is not None:
            bumped.setdefault(value["epoch"], ts)
        elif r["type"] == t["target"] and value is not None:
            epoch = value["assignment_epoch"]
            if open_round is None or open_round.key != epoch:
                open_round = RecordRound(epoch, None, bumped.get(epoch, ts), len(alive))
                out.append(open_round)
        if open_round is not None and open_round.end_ms is None and \
                r["type"] in (t["member"], t["target"], t["current"]):
            # (a group that empties reaches no target, unless it was empty at it)
            if (alive or open_round.members == 0) and all(
                    m in members and members[m]["member_epoch"] >= open_round.key
                    and members[m]["state"] == t["stable"] and not _pending(members[m])
                    for m in alive):
                open_round.end_ms = ts
                open_round.members = len(alive)
    return out


def _pending(value: dict) -> bool:
    return any(v for k, v in value.items() if "pending_revocation" in k)


def epoch_writes(records: list[dict], group: str, kind: str) -> list[tuple[int, int, int]]:
    """[(epoch, written at ms, members then)]: each group epoch of a share or streams group
    as its group metadata record holds it, the first time written. These groups bump the
    epoch without a log line when a member leaves (the records still hold it)."""
    t = RECORD_TYPES[kind]
    out, seen, alive = [], set(), set()
    for r in records:
        if _group_of(r) != group:
            continue
        if r["type"] == t["member"]:
            (alive.add if r["value"] is not None else alive.discard)(r["key"]["member_id"])
        elif r["type"] == t["epoch"] and r["value"] is not None and r["value"]["epoch"] not in seen:
            seen.add(r["value"]["epoch"])
            out.append((r["value"]["epoch"], r["timestamp"], len(alive)))
    return out


def typed_truth(lines: list[tuple[int, str]], records: list[dict], group: str,
                kind: str) -> LogTruth:
    """A share or streams group's rounds: every group epoch, from the broker's log (`Bumped
    group epoch` / `Bumped streams group epoch`, `Computed a new target assignment`) and,
    for the epochs bumped without a line (a member leaving), from the records as Kafka's
    DumpLogSegments decodes them. A round ends at its bump's line (or write)."""
    log = broker_truth(lines, group)
    logged = {r.key: r for r in log.rounds}
    truth = LogTruth(targets=log.targets, expired=log.expired)
    for epoch, at, members in epoch_writes(records, group, kind):
        r = logged.get(epoch)
        end = r.end_ms if r is not None else at
        truth.rounds.append(Round(epoch, end, end, members, "consumer",
                                  reason=None if r is not None else "bumped without a log line"))
    computed = set(truth.targets) | {rr.key for rr in record_rounds(records, group, kind)}
    for r in truth.rounds[:-1]:   # a newer epoch came before its target was computed
        r.superseded = r.key not in computed and r.members != 0
    return truth


def _held(value: dict | None, kind: str) -> set:
    """What a member's current assignment record holds: partitions (share, consumer: also
    those pending revocation) or streams active tasks (also pending revocation)."""
    if value is None:
        return set()
    keys = (("active_tasks", "active_tasks_pending_revocation") if kind == "streams" else
            ("assigned_partitions", "partitions_pending_revocation"))
    out = set()
    for key in keys:
        for item in value.get(key) or ():
            owner = item.get("subtopology_id", item.get("topic_id"))
            out.update((owner, p) for p in item["partitions"])
    return out


def record_gaps(records: list[dict], group: str, kind: str) -> list[tuple[float, float, tuple]]:
    """(released at, held again at, partition or task) in seconds, from the records as
    Kafka decodes them: a share or streams group's handovers (no client callback tells
    them): from the write at which no member holds it any more to the next at which one
    does. Shaped as callback_gaps' answer."""
    current = RECORD_TYPES[kind]["current"]
    held: dict[str, set] = {}
    open_: dict[tuple, int] = {}
    gaps = []
    for r in records:
        if _group_of(r) != group or r["type"] != current:
            continue
        member, ts = r["key"]["member_id"], r["timestamp"]
        before, after = held.get(member, set()), _held(r["value"], kind)
        held[member] = after
        owned = set().union(*held.values())
        for tp in before - after:
            if tp not in owned:
                open_.setdefault(tp, ts)
        for tp in after - before:
            if tp in open_:
                gaps.append((open_.pop(tp) / 1000, ts / 1000, tp))
    return gaps


# ---- the clients' own callbacks ----------------------------------------------------------

def callback_gaps(consumers, since: float = 0.0) -> list[tuple[float, float, tuple]]:
    """(revoked at, assigned again at, partition) from the consumers' own callbacks (time.time
    seconds): each partition from the callback that gave it up to the next that took it."""
    calls = sorted((e.ts, e.kind, tp) for c in consumers for e in c.events if e.ts >= since
                   for tp in e.partitions)
    gaps, open_ = [], {}
    for ts, kind, tp in calls:
        if kind in ("revoke", "lost"):
            open_.setdefault(tp, ts)
        elif tp in open_:
            gaps.append((open_.pop(tp), ts, tp))
    return gaps
