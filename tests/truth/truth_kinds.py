"""The scenarios of the groups that are not librdkafka consumers' alone: share (KIP-932) and
streams (KIP-1071) groups (join, leave, kill), and `epoch-no-move` (a KIP-848 group epoch
bump whose new target moves no partition).

Share and streams members have no assignment callbacks: a step is over when the broker's
log says so (`settled`): after the group's last member change (join, leave, fence) a
target was computed, and every member's latest assignment state is at that epoch, STABLE.
"""
from __future__ import annotations

import re
import time

from truth_ground import log_lines

_JOIN = re.compile(r"\[GroupId (\S+)\](?:\[MemberId (\S+)\])? Member (\S+ )?joins the (?:share|streams) group")
_LEFT = re.compile(r"\[GroupId (\S+)\](?:\[MemberId \S+\])? Member (\S+) left the (?:share|streams) group")
_FENCED = re.compile(r"\[GroupId (\S+)\] (?:Streams member|Member) (\S+) fenced from the group")
_TARGET = re.compile(r"\[GroupId (\S+)\] Computed a new target assignment for epoch (\d+)")
_STATE = re.compile(r"\[GroupId (\S+)\](?:\[MemberId (\S+)\])? (?:Member (\S+) new|Member's new) "
                    r"assignment state: epoch=(\d+), previousEpoch=-?\d+, state=(\w+), (.*)")
_NOTHING = ("assignedPartitions=[]", "assignedTasks=(active=[], standby=[], warmup=[])")


def group_view(lines, group: str) -> tuple[set[str], int | None, dict[str, tuple[int, str, bool]]]:
    """(live members, the epoch of the last target computed after the last member change
    or None, {member: (epoch, state, holds something) of its latest assignment state})."""
    live: set[str] = set()
    target: int | None = None
    states: dict[str, tuple[int, str]] = {}
    for _, text in lines:
        if group not in text:
            continue
        if (m := _JOIN.search(text)) and m.group(1) == group:
            live.add(m.group(2) or m.group(3).strip())
            target = None
        elif ((m := _LEFT.search(text)) or (m := _FENCED.search(text))) and m.group(1) == group:
            live.discard(m.group(2))
            target = None
        elif (m := _TARGET.search(text)) and m.group(1) == group:
            target = int(m.group(2))
        elif (m := _STATE.search(text)) and m.group(1) == group:
            states[m.group(2) or m.group(3)] = (int(m.group(4)), m.group(5),
                                                 not m.group(6).startswith(_NOTHING))
    return live, target, states


def settled(ctx, members: int, timeout: float = 90) -> None:
    """Until the broker's log shows `members` members, each at the target computed after
    the last member change, STABLE, holding something (a share group's first target gives
    nothing until its partitions' share state is initialized: the next epoch does)."""
    from waiting import wait_until

    def done() -> bool:
        live, target, states = group_view(log_lines(ctx.lab), ctx.group)
        return (len(live) == members and target is not None
                and all(states.get(m) == (target, "STABLE", True) for m in live))
    wait_until(done, timeout, f"{members} members of {ctx.group} at their target (broker log)",
               interval=0.2)
    _tool_agrees(ctx, members)


def _tool_agrees(ctx, members: int) -> None:
    """Kafka's own ShareGroupCommand / StreamsGroupCommand (`--describe --state`) against
    the log's view at the step's end: a differing member count or epoch is a note."""
    live, target, _ = group_view(log_lines(ctx.lab), ctx.group)
    command = (ctx.lab.share_group_command if ctx.client == "share" else ctx.lab.streams_group_command)
    proc = command("--describe", "--group", ctx.group, "--state", "--verbose")
    rows = [ln.split() for ln in proc.stdout.splitlines() if ln.strip()]
    head = next((r for r in rows if r[0] == "GROUP"), None)
    row = next((r for r in rows if r[0] == ctx.group), None)
    if head is None or row is None:
        ctx.notes.append(f"{command.__name__}: no state row: {proc.stdout.strip()[-200:]} "
                         f"{proc.stderr.strip()[-200:]}")
        return
    # COORDINATOR (ID) spans three words in the header, two in a row
    head = [h for h in head if h != "(ID)"]
    view = dict(zip(head[1:], row[-(len(head) - 1):]))
    epoch = next((v for k, v in view.items() if k.endswith("ASSIGNMENT-EPOCH")), None)
    said = (int(view.get("#MEMBERS", -1)), int(epoch) if epoch else None)
    if said != (members, target):
        ctx.notes.append(f"{command.__name__} at {members} members: #MEMBERS {said[0]}, "
                         f"assignment epoch {said[1]}; the broker log: {len(live)}, {target}")
    else:
        ctx.tool_checks = getattr(ctx, "tool_checks", 0) + 1


def _fenced(ctx) -> int:
    return sum(1 for _, t in log_lines(ctx.lab) if (m := _FENCED.search(t)) and m.group(1) == ctx.group)


def kill_java(ctx, a) -> None:
    """kill, Kafka's VerifiableConsumer: a second member joins, is SIGKILLed (no leave)."""
    from waiting import wait_until

    killed = ctx.consumer("killed")
    wait_until(lambda: len(a.assignment) < ctx.partitions and killed.assignment, 90,
               "the second member's share")
    ctx.witnessed(2)
    before = ctx.rounds()
    killed.kill()   # its callbacks up to its death stay in ctx.consumers
    ctx.wait_rounds(before + 1, 60)   # the session expiry
    ctx.balanced([a])
    ctx.witnessed(1)
    ctx.close_all()


def kind_join(ctx) -> None:
    ctx.consumer("a")
    settled(ctx, 1)
    ctx.witnessed(1)
    ctx.consumer("b")
    settled(ctx, 2)
    ctx.witnessed(2)
    ctx.close_all()


def kind_leave(ctx) -> None:
    ctx.consumer("a")
    b = ctx.consumer("b")
    settled(ctx, 2)
    ctx.witnessed(2)
    b.close()
    settled(ctx, 1)
    ctx.witnessed(1)
    ctx.close_all()


def kind_kill(ctx) -> None:
    """b is killed (SIGKILL): the broker fences it at its session's end (45 s by default
    for share and streams groups)."""
    from waiting import wait_until

    ctx.consumer("a")
    b = ctx.consumer("b", kill=True)
    settled(ctx, 2)
    ctx.witnessed(2)
    b.kill()
    wait_until(lambda: _fenced(ctx) >= 1, 90, "the killed member fenced (broker log)", interval=0.5)
    settled(ctx, 1)
    ctx.witnessed(1)
    ctx.close_all()


def epoch_no_move(ctx) -> None:
    """KIP-848: a member adds a topic that does not exist to its subscription: the broker
    bumps the group epoch (`Bumped group epoch`, the metadata hash unchanged) and computes
    a target that moves no partition; no member's callback runs. First with a lone member
    (its own heartbeat takes the new epoch: the bump, the target and the member at it in
    one write), then with two (the other member reaches the epoch at its next heartbeat)."""
    import signal

    from watch_support import _json, _Lines

    a = ctx.consumer("a")
    ctx.balanced([a])
    ctx.witnessed(1)
    _add_missing_topic(ctx, a, "none-1", [a])
    b = ctx.consumer("b")
    ctx.balanced([a, b])
    ctx.witnessed(2)
    # groupctl's probe in the group for the second: its own view is a witness too
    proc = ctx.groupctl("-o", "ndjson", "join", ctx.group, "--watch", "--yes")
    lines = _Lines(proc.stdout, _json)
    try:
        lines.wait(lambda e: e.get("event") == "rebalance" and len(e.get("members_after") or ()) == 3,
                   60, "the probe's rebalance to 3 members")
        ctx.balanced([a, b])
        _add_missing_topic(ctx, b, "none-2", [a, b], probe=lines)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        finally:
            lines._thread.join(5)
            ctx.probe_lines[:] = lines.items
    ctx.balanced([a, b])
    ctx.close_all()


def _add_missing_topic(ctx, member, suffix: str, members, probe=None) -> None:
    before = ctx.rounds()
    member.subscribe([ctx.topic, f"{ctx.topic}-{suffix}"])
    ctx.wait_rounds(before + 1, 60)
    ctx.steady(members)
    told_epoch(ctx, ctx.rounds_of()[-1].key, probe)


def told_epoch(ctx, epoch: int, probe=None, timeout: float = 6.0) -> None:
    """Give the watches (and the probe's lines) up to `timeout` s to tell a rebalance to
    `epoch` (one that never does is a finding of the comparison, not a failure here)."""
    deadline = time.monotonic() + timeout
    witnesses = [p.events for p in (ctx.watches.procs.values() if ctx.watches else ())]
    witnesses += [probe.items] if probe is not None else []

    def told(events) -> bool:
        return any(e.get("group") == ctx.group and e.get("event") == "rebalance"
                   and (e.get("to_generation") or 0) >= epoch for e in list(events))
    while time.monotonic() < deadline and not all(told(w) for w in witnesses):
        time.sleep(0.1)


KIND_SCENARIOS = {"join": kind_join, "leave": kind_leave, "kill": kind_kill}
