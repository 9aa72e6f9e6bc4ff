"""The table view of `canary` (json/yaml print the same rows, whole): one row per
coordinator and protocol, each step's milliseconds (`-`: the step did not complete, or is
not one of the protocol's)."""
from __future__ import annotations

from rich.text import Text

from .cells import table
from .notation import show

COLUMNS = (("FIND", "find_coordinator_ms"), ("JOIN", "join_ms"), ("SYNC", "sync_ms"),
           ("HEARTBEAT", "heartbeat_ms"), ("RECONCILE", "reconcile_ms"), ("LEAVE", "leave_ms"),
           ("ROUND", "round_ms"))


def _ms(value) -> str:
    return "-" if value is None else f"{value:.1f}"


def canary_table(console, rows: list[dict], wide: bool) -> None:
    """COORDINATOR, PROTOCOL, GROUP, OK/FAILED (with the error and its step), the steps'
    ms; `wide` adds the member id and the `__consumer_offsets` partition."""
    if not console.is_terminal:
        console.width = 1000
    if not rows:
        console.print("no canary ran: no broker leads a __consumer_offsets partition")
        return
    names = [c for c, _ in COLUMNS]
    extra = ("PARTITION", "MEMBER") if wide else ()
    t = table("COORDINATOR", "PROTOCOL", "GROUP", "RESULT", *names, *extra,
              right=("COORDINATOR", *names, "PARTITION"))
    for r in rows:
        result = Text("ok", style="green") if r["ok"] else Text(
            f"{r['error']} on {r['failed_step']}", style="red")
        cells = [show(r["coordinator"]), r["protocol"], r["group"], result,
                 *(_ms(r.get(key)) for _, key in COLUMNS)]
        if wide:
            cells += [show(r.get("partition")), show(r.get("member_id"))]
        t.add_row(*cells)
    console.print(t)
