"""The plain lines of a live event stream (`watch` / `join --watch` into a pipe or file,
and with -o json/yaml): one human line per event (docs/reference/events.md), every unknown value a `-`;
and the summary a watch prints at its end, in each output format.
"""
from __future__ import annotations

from .notation import partitions_text, plural, show

_tps = partitions_text   # describe's notation: orders:0-1
# DescribeGroups has no generation: a passive watch reads it from the members'
# subscriptions, which carry none with librdkafka's eager assignors, and none yet in a
# cooperative-sticky group's first round
UNKNOWN_GENERATION = "not in describe's answer, nor yet in the members' subscriptions"
PASSIVE = ("describe", "records")   # the sources of `watch`


def _tasks(tasks: dict | None) -> str:
    """A streams member's tasks as StreamsGroupCommand shows them: `ACTIVE: 0:[0,1]; ...`."""
    if tasks is None:
        return "-"
    parts = [f"{kind.upper()}: " + "; ".join(
        f"{t['subtopology_id']}:[{','.join(str(p) for p in t['partitions'])}]" for t in ts)
        for kind, ts in tasks.items() if ts]
    return " ".join(parts) or "(none)"


def plain_line(e: dict, said: set | None = None) -> str:
    """One human line per event (the non-terminal view); an unknown value is `-`. `said`:
    the notes already given in this stream (an unknown classic generation is explained
    once; None: explain it every time)."""
    kind, ts = e["event"], e["ts"]
    text = _PLAIN.get(kind, lambda e, said: kind)(e, said)
    if e.get("member_epoch") is not None:   # a KIP-848 probe's own events
        text += f" member_epoch={e['member_epoch']}"
    # a passive watch may follow several groups (the probe's story is its one group's)
    return f"{ts} {e['group']} {text}" if e.get("source") in PASSIVE else f"{ts} {text}"


def _once(note: str, said: set | None) -> str:
    """` (note)` the first time it is said in a stream, then nothing."""
    if said is not None and note in said:
        return ""
    if said is not None:
        said.add(note)
    return f" ({note})"


def _generation(value, said: set | None) -> str:
    """A classic generation: the number, or `unknown` explained once."""
    return show(value) if value is not None else "unknown" + _once(UNKNOWN_GENERATION, said)


def _state_line(e, said) -> str:
    return (f"group state {show(e.get('previous'))} -> {show(e.get('state'))}"
            + (f" (probe {e['member_state']})" if e.get("member_state") else ""))


def _generation_line(e, said) -> str:
    members = e.get("members")
    return (f"generation {_generation(e.get('generation'), said)} "
            f"protocol={show(e.get('protocol'))} leader={show(e.get('leader'))}"
            + (f" members={len(members)}" if members is not None else ""))


def _assignment_line(e, said) -> str:
    number = "" if e.get("member_epoch") is not None else f" gen {show(e.get('generation'))}"
    return (f"assignment{number}" + (f" {e['member_id']}" if e.get("member_id") else "")
            + f": {_tps(e.get('assigned'))} "
            f"added={_tps(e.get('added'))} revoked={_tps(e.get('revoked'))}"
            + (f" target={_tps(e['target'])}" if "target" in e else "")
            + (f" reconciled in {e['reconciled_ms']} ms"
               if e.get("reconciled_ms") is not None else "")
            + (" (holding the group up)" if e.get("behind") else "")
            + (f" tasks {_tasks(e['tasks'])}" if e.get("tasks") is not None else ""))


def _rebalance_line(e, said) -> str:
    before, after = e.get("from_generation"), e.get("to_generation")
    if before is None and after is None:
        numbers = "generation unknown" + _once(UNKNOWN_GENERATION, said)
    else:
        numbers = f"{show(before)} -> {show(after)}"
    members = e.get("members_after")
    if e.get("seen") is False:
        return (f"rebalance {numbers}: not seen (the generation moved on by more than one "
                f"between two looks): its duration, members and reason are not known")
    took = took_text(e)
    lag = (f"lag {show(e.get('lag_before'))} -> {show(e.get('lag_after'))}, "
           if "lag_before" in e else "")   # watch --lag
    return (f"rebalance {numbers} {took}, members "
            f"{show(None if members is None else len(members))}, "
            f"moved {show(e.get('moved_partitions'))}, {lag}reason: {show(e.get('reason'))}"
            + _cost_text(e))


def took_text(e: dict) -> str:
    """A rebalance's duration as known (events.Rebalanced): exact, between the looks
    around its start and end, a lower bound, or unknown."""
    ms, basis = e.get("duration_ms"), e.get("duration_basis")
    if ms is None:
        return "in ? ms (duration unknown)"
    if basis == "interval":
        return (f"in {e.get('duration_min_ms')}-{e.get('duration_max_ms')} ms "
                "(bounded by the looks)")
    if basis == "lower_bound" or e.get("duration_is_lower_bound"):
        return f"in at least {ms} ms (under way when first seen)"
    return f"in {ms} ms"


def _cost_text(e: dict) -> str:
    """Issue 19: what the rebalance cost (the longest partitions named) and who held it
    up; nothing when it cost nothing seen and no one was seen behind."""
    out = ""
    if e.get("unowned_partition_ms"):
        longest = " ".join(f"{x['topic']}:{x['partition']} {x['ms']} ms"
                           for x in e.get("unowned_longest") or ())
        out += (f"; partitions unowned {e['unowned_partition_ms']} ms in all "
                f"({show(e.get('unowned_basis'))}), longest {longest or '-'}")
    elif e.get("unowned_unknown"):   # no honest bound: said why (observe.sources.history)
        out += f"; partitions unowned: unknown ({e['unowned_unknown']})"
    if e.get("unowned_unsubscribed"):
        out += f"; unowned, not subscribed: {_tps(e['unowned_unsubscribed'])}"
    if e.get("slowest_member") is not None:
        held = e.get("slowest_member_held_ms")   # null: the source cannot see it told
        out += (f"; slowest {e['slowest_member']} {show(e.get('slowest_member_ms'))} ms "
                "after its target" + (f", held {held} ms after told" if held is not None else ""))
    return out


def _member_line(e, said) -> str:
    return (f"{e['event'].replace('_', ' ')}: {show(e.get('member_id'))} "
            f"client={show(e.get('client_id'))} host={show(e.get('host'))}"
            + (f" instance={e['instance_id']}" if e.get("instance_id") else ""))


def _probe_line(e, said) -> str:
    number = "" if e.get("member_epoch") is not None else f" gen={show(e.get('generation'))}"
    return (f"probe {e['action']} member={show(e.get('member_id'))}{number}"
            + (f" error={e['error']}" if e.get("error") else "")
            + (f" ({e['reason']})" if e.get("reason") else ""))


def _snapshot_line(e, said) -> str:
    """The group as first seen: its numbers, protocol and members, on one line."""
    if e.get("group_epoch") is not None or e.get("assignment_epoch") is not None:
        numbers = (f"group epoch {show(e.get('group_epoch'))} assignment epoch "
                   f"{show(e.get('assignment_epoch'))} assignor {show(e.get('protocol'))}")
    else:   # no members (a group that only committed offsets): no generation to explain
        generation = e.get("generation")
        numbers = (f"generation {_generation(generation, said) if e.get('members') else show(generation)} "
                   f"protocol {show(e.get('protocol'))}")
    members = e.get("members") or []
    held = "; ".join(f"{m.get('member_id')} {_tps(m.get('assignment'))}" for m in members)
    gap = (f" (after {e['gap_ms']} ms out of contact)" if e.get("gap_ms") is not None
           else "")
    return (f"snapshot{gap} state {show(e.get('state'))} type {show(e.get('type'))} "
            f"{numbers} members {len(members)}" + (f": {held}" if held else ""))


_PLAIN = {
    "state": _state_line,
    "epoch": lambda e, said: (f"group epoch {show(e.get('group_epoch'))} assignment epoch "
                              f"{show(e.get('assignment_epoch'))}"),
    "type_changed": lambda e, said: f"group type {show(e.get('previous'))} -> {show(e.get('type'))}",
    "generation": _generation_line,
    "assignment": _assignment_line,
    "rebalance": _rebalance_line,
    "member_joined": _member_line,
    "member_left": _member_line,
    "probe": _probe_line,
    "error": lambda e, said: f"error {show(e.get('api'))}: {show(e.get('name'))} ({show(e.get('code'))})",
    "snapshot": _snapshot_line,
}


def summary_line(s: dict) -> str:
    """The end of a watch, one line per group."""
    flapping = ", ".join(s["flapping_members"]) or "none"
    at_least = ("at least " if s.get("rebalances_lower_bound") else "")
    return (f"summary {s['group']}: {at_least}{plural(s['rebalances'], 'rebalance')}"
            + (" (its members report no generation: a round begun and over between two "
               "looks is not seen; --source records counts every one)" if at_least else "")
            + f", "
            f"{_time_rebalancing(s)}, state {show(s['state'])}, flapping members: {flapping}")


def _time_rebalancing(s: dict) -> str:
    """The time spent rebalancing as known: over the rounds timed, with the least and most
    it may be when they differ, and how many rounds it leaves out (their durations not
    known); `-` when none is timed. Summaries of older watches (no `rebalances_timed`)
    are their total and longest."""
    total, n = s.get("rebalancing_ms_total"), s.get("rebalances")
    timed = s.get("rebalances_timed", n if total is not None else 0)
    if not timed:
        return "time rebalancing - (no duration known)" if n else "0 ms rebalancing (longest 0 ms)"
    least, most = s.get("rebalancing_ms_least", total), s.get("rebalancing_ms_most", total)
    text = f"{total} ms rebalancing"
    if (least, most) != (total, total):
        text += f" ({least}-{show(most)} ms)" if most is not None else f" (at least {least} ms)"
    text += f" (longest {show(s.get('rebalancing_ms_longest'))} ms)"
    if timed < n:
        text += f" over {timed} of {n} rebalances ({n - timed} of unknown duration)"
    return text


def summary_text(summaries: list[dict], fmt: str) -> str:
    """A watch's summaries as -o asks: json / ndjson one `{"summary": {...}}` line per
    group (a line of its own among the event lines), yaml one `summary:` document per
    group, table / wide one human line per group."""
    if fmt in ("json", "ndjson"):
        from .output import dumps_json

        return "".join(dumps_json({"summary": s}, indent=None) + "\n" for s in summaries)
    if fmt == "yaml":
        from .output import dumps_yaml

        return "".join("---\n" + dumps_yaml({"summary": s}) for s in summaries)
    from .visible import visible

    return "".join(visible(summary_line(s)) + "\n" for s in summaries)
