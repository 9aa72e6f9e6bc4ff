"""The terminal summary of `groupctl analyze`: groups by rebalances and by time spent
rebalancing, the top reasons, storms, and where the output went."""
from __future__ import annotations

from collections import Counter

from .offline import _print


def summary_table(console, data: dict, wide: bool) -> None:
    from rich.table import Table

    metrics = data["metrics"]
    if not metrics:
        console.print("No rebalances found in the input.")
    else:
        t = Table(title="Rebalances by group", title_justify="left")
        cols = ["GROUP", "TYPE", "REBALANCES", "P50 MS", "P95 MS", "MAX MS", "TIME MS",
                "FAILED", "LEFT", "STORMS", "TOP REASON"]
        if wide:
            cols += ["PER HOUR", "FLAPPING", "EPOCH", "FIRST SEEN", "LAST SEEN"]
        for c in cols:
            t.add_column(c, justify="right" if c not in ("GROUP", "TYPE", "TOP REASON",
                                                         "FIRST SEEN", "LAST SEEN") else "left")
        for m in metrics:
            row = [m["group"], m["type"], m["rebalances"], m["duration_ms_p50"],
                   m["duration_ms_p95"], m["duration_ms_max"], m["time_rebalancing_ms"],
                   m["failed_members"], m["left_members"], m["storms"], m["top_reason"]]
            if wide:
                row += [m["rebalances_per_hour"], m["flapping_members"], m["group_epoch"],
                        m["first_seen"], m["last_seen"]]
            t.add_row(*["-" if v is None else str(v) for v in row])
        _print(console, t)   # into a pipe: its natural width, not cut to 80 columns
        by_time = sorted(metrics, key=lambda m: (-(m["time_rebalancing_ms"] or 0), m["group"]))
        # a group whose rounds' one figures are unknown may still have a proven bound
        timed = [m for m in by_time if m["time_rebalancing_ms"] or m.get("time_rebalancing_min_ms")
                 or m.get("time_rebalancing_max_ms")]
        top = ", ".join(f"{m['group']} ({time_text(m)})" for m in timed[:5])
        if top:
            console.print(f"Most time rebalancing: {top}")
        # groupctl's records: each end of the rounds' unowned intervals summed apart
        bounded = sorted((m for m in metrics if m.get("unowned_min_ms_total") is not None
                          or m.get("unowned_max_ms_total") is not None),
                         key=lambda m: (-(m.get("unowned_min_ms_total") or 0), m["group"]))
        if bounded:
            console.print("Partitions unowned, as groupctl's records bound it: " + ", ".join(
                f"{m['group']} ({unowned_total(m)})" for m in bounded[:5]))
        # issue 19: the clients' own revoke -> assign figure (--client-logs)
        by_cost = sorted((m for m in metrics if m.get("client_unowned_partition_ms_total")),
                         key=lambda m: (-m["client_unowned_partition_ms_total"], m["group"]))
        if by_cost:
            console.print("Partitions unowned, as the clients' logs tell it: " + ", ".join(
                f"{m['group']} ({m['client_unowned_partition_ms_total']} ms)" for m in by_cost[:5]))
    reasons = Counter(e["reason_kind"] for e in data["episodes"] if e["outcome"] in ("stable", "empty"))
    if reasons:
        console.print("Top reasons: " + ", ".join(f"{k} ({n})" for k, n in
                                                  sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:5]))
    if data["storms"]:
        console.print(f"Storms: {len(data['storms'])} (see storms.csv)")
    moves = data.get("moves") or []
    if moves:
        console.print("Coordinator moves: " + "; ".join(
            f"{m['group']}: broker {m['from_broker']} -> {m['to_broker']} at {m['ts']}"
            for m in moves[:5]) + (f" (+{len(moves) - 5} more, see moves.csv)"
                                    if len(moves) > 5 else ""))
    console.print(f"Output: {data['out']} (report: {data['report']})")


def unowned_total(m: dict) -> str:
    """A group's unowned time over its rebalances as proven: measured, an interval, or one
    bound (the other end not known: said, never 0)."""
    low, high = m.get("unowned_min_ms_total"), m.get("unowned_max_ms_total")
    if low is not None and low == high:
        return f"{low} ms"
    if high is None:
        return f"at least {low} ms"
    if low is None:
        return f"at most {high} ms"
    return f"{low}-{high} ms"


def time_text(m: dict) -> str:
    """A group's time rebalancing: the sum of its rounds' one figures (`-` when none is
    known; over how many rounds when some are not), then what their intervals prove."""
    best, untimed = m["time_rebalancing_ms"], m.get("rebalances_untimed")
    if best is None:
        return "- ms" + proven_time(m)
    over = (f" over {m['rebalances'] - untimed} of {m['rebalances']} rebalances"
            if untimed else "")
    return f"{best} ms{over}{proven_time(m)}"


def proven_time(m: dict) -> str:
    """What the rounds' duration intervals prove of a group's time rebalancing, when it is
    not the one figure told before it (the best witnesses' figures summed): `, proven
    800-1500 ms`, `, at least 1300 ms` (an end no witness proves is left out, never 0)."""
    low, high = m.get("time_rebalancing_min_ms"), m.get("time_rebalancing_max_ms")
    if low is None and high is None:
        return ""
    if low == high == m.get("time_rebalancing_ms"):
        return ""
    if high is None:
        return f", at least {low} ms"
    if low is None:
        return f", at most {high} ms"
    return f", proven {low} ms" if low == high else f", proven {low}-{high} ms"
