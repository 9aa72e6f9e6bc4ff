"""Why a group rebalanced, in words a person can act on, from what changed between the
members of two settled generations (or epochs). Used by the one rebalance story
(story.py), so the passive watcher and the probe say the same thing:

    member X (client C, host H) joined
    member X (client C, host H) left or expired   (no observer sees a LeaveGroup, so a
                                                  clean leave and a session expiry look
                                                  the same; `analyze` reads the broker log)
    static member I restarted (new member id)
    subscription of X changed (a,b -> a,b,c)
    new partitions on T
    rebalance with no membership change            (e.g. forced, or a cooperative
                                                  follow-up round)
"""
from __future__ import annotations

import re

NO_CHANGE = "rebalance with no membership change"

# A reason's kind (the metrics' `reason` label): a few fixed values, from the first
# reason of a rebalance (changes() lists the most telling first). "unknown": no reason
# (the members on one side unknown) or an observer's own words (explain's `noticed`).
REASON_KINDS = ("static_member_restarted", "member_joined", "member_left",
                "subscription_changed", "partitions_added", "no_membership_change", "unknown")
_KIND_OF = ((re.compile(r"static member .* restarted \(new member id\)"),
             "static_member_restarted"),
            (re.compile(r"member .* joined"), "member_joined"),
            (re.compile(r"member .* left or expired"), "member_left"),
            (re.compile(r"subscription of .* changed \(.*\)"), "subscription_changed"),
            (re.compile(r"new partitions on .*"), "partitions_added"),
            (re.compile(re.escape(NO_CHANGE) + r"( \(.*\))?"), "no_membership_change"))


def _who(m) -> str:
    extra = [x for x in (f"client {m.client_id}" if m.client_id else None,
                         f"host {m.host}" if m.host else None) if x]
    return f"member {m.member_id}" + (f" ({', '.join(extra)})" if extra else "")


def changes(before: dict, after: dict) -> list[str]:
    """The reasons, in a stable order: static restarts, joins, departures, subscription
    changes, new partitions. `before`/`after`: {member_id: story.MemberSnapshot}."""
    joined = [after[m] for m in sorted(set(after) - set(before))]
    left = [before[m] for m in sorted(set(before) - set(after))]
    restarted = {m.instance_id for m in joined if m.instance_id} & {
        m.instance_id for m in left if m.instance_id}
    out = [f"static member {i} restarted (new member id)" for i in sorted(restarted)]
    out += [f"{_who(m)} joined" for m in joined if m.instance_id not in restarted or not m.instance_id]
    out += [f"{_who(m)} left or expired" for m in left
            if m.instance_id not in restarted or not m.instance_id]
    for mid in sorted(set(before) & set(after)):
        was, now = before[mid].topics, after[mid].topics
        if was is not None and now is not None and was != now:
            out.append(f"subscription of {mid} changed ({','.join(was) or '-'} -> "
                       f"{','.join(now) or '-'})")
    out += [f"new partitions on {t}" for t in _grown_topics(before, after)]
    return out


def _grown_topics(before: dict, after: dict) -> list[str]:
    """Topics with a partition assigned after beyond every partition of it assigned
    before (both sides' assignments known)."""
    if any(s.assignment is None for s in (*before.values(), *after.values())):
        return []

    def highest(members: dict) -> dict[str, int]:
        top: dict[str, int] = {}
        for s in members.values():
            for t, ps in s.assignment.items():
                if ps:
                    top[t] = max(top.get(t, -1), max(ps))
        return top

    was, now = highest(before), highest(after)
    return sorted(t for t, p in now.items() if t in was and p > was[t])


def explain(before: dict | None, after: dict | None, noticed: str | None = None) -> str | None:
    """The reason for a rebalance from `before` to `after`; `noticed` (how the observer
    noticed it, e.g. the probe's REBALANCE_IN_PROGRESS) only stands in when the members on
    either side are unknown, or is added in brackets to NO_CHANGE."""
    if before is None or after is None:
        return noticed
    found = changes(before, after)
    if found:
        return "; ".join(found)
    return f"{NO_CHANGE} ({noticed})" if noticed else NO_CHANGE


def kind(reason: str | None) -> str:
    """The kind (REASON_KINDS) of a rebalance's `reason` as explain() words it: the kind
    of its first reason, so each rebalance has exactly one."""
    if not reason:
        return "unknown"
    first = reason.split("; ", 1)[0]
    for pattern, name in _KIND_OF:
        if pattern.fullmatch(first):
            return name
    return "unknown"
