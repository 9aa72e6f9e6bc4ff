"""Table views of the steering commands: `force-rebalance`, `wait`, `remove-member`
(json/yaml print the same dicts, whole). Each takes the plain dict its command built."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .offline import _partitions, _print, _show
from .visible import visible


def _grid(rows) -> Table:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style="bold")
    grid.add_column()
    for label, value in rows:
        grid.add_row(label, value if isinstance(value, Text) else _show(value))
    return grid


def _arrow(before, after) -> str:
    return f"{_show(before)} -> {_show(after)}"


def force_rebalance_table(console, data: dict, wide: bool) -> None:
    consumer = data["type"] == "consumer"
    same = data["same_members"]
    rows = [("group", data["group"]), ("type", data["type"])]
    rows += [("assignor", data["protocol"])] if consumer else [
        ("protocol", f"{_show(data['protocol'])} ({data['rebalance_protocol']})")]
    if consumer:
        rows += [("group epoch", _arrow(data["group_epoch_before"], data["group_epoch_after"])),
                 ("assignment epoch", _arrow(data["assignment_epoch_before"],
                                             data["assignment_epoch_after"]))]
    else:
        rows += [("generation", _arrow(data["generation_before"], data["generation_after"])),
                 ("new generations", data["new_generations"])]
    ms = data["time_to_stable_ms"]
    rows += [("time to Stable", None if ms is None else f"{ms:.0f} ms"),
             ("states seen", " -> ".join(data["states_seen"]) or None),
             ("members", Text(f"{len(data['members_before'])} -> {len(data['members_after'])}"
                              + (" (same members)" if same else "  MEMBERS CHANGED"),
                              style="" if same else "bold red")),
             ("assignment changed", "yes" if data["assignment_changed"] else "no"),
             ("moved partitions", len(data["moved_partitions"])),
             *([("reason", data["reason"])] if data["reason"] is not None else []),
             ("triggered by", data["triggered_by"])]
    _print(console, _grid(rows))
    _print(console, _assignments(data))
    if data["moved_partitions"]:
        moved = Table(title="moved partitions")
        for col in ("topic", "partition", "from", "to"):
            moved.add_column(col)
        for m in data["moved_partitions"]:
            moved.add_row(m["topic"], str(m["partition"]), _show(m["from"]), _show(m["to"]))
        _print(console, moved)
    if data.get("follow_up"):
        console.print(f"follow-up rebalance: generation {_show(data['follow_up']['generation'])}, "
                      f"{len(data['follow_up']['moved_partitions'])} partitions moved")
    from ..coordinator.steer.force_report import MEMBERS_CHANGED

    for note in data["notes"]:
        console.print(Text(f"note: {note}",
                           style="bold red" if note.startswith(MEMBERS_CHANGED) else "dim"))


def _assignments(data: dict) -> Table:
    before = {a["member_id"]: a for a in data["assignments_before"]}
    after = {a["member_id"]: a for a in data["assignments_after"]}
    table = Table(title="assignments")
    for col in ("member id", "client id", "before", "after"):
        table.add_column(col)
    for member in sorted(set(before) | set(after)):
        a, b = before.get(member), after.get(member)
        table.add_row(member, _show((a or b or {}).get("client_id")),
                      _partitions(a["assignment"]) if a else "(not a member)",
                      _partitions(b["assignment"]) if b else "(not a member)")
    return table


def wait_line(console, data: dict, wide: bool) -> None:
    """One line: the group's state now and whether the condition was met."""
    number = data["generation"] if data["type"] in (None, "classic") else data["group_epoch"]
    label = "generation" if data["type"] in (None, "classic") else "epoch"
    if data["exists"]:
        parts = [f"{data['group']}: {data['state']}", f"{data['members']} members"]
        parts += [f"{label} {number}"] if number is not None else []
    else:
        parts = [f"{data['group']}: Dead (no such group)"]
    if data["lag_total"] is not None:
        parts.append(f"lag {data['lag_total']}")
    verdict = (f"condition met after {data['waited_s']:.1f} s" if data["met"] else
               f"condition NOT met after {data['waited_s']:.1f} s: " + "; ".join(data["failing"]))
    console.print(Text(", ".join(parts) + "; " + verdict,
                       style="" if data["met"] else "bold red"), soft_wrap=True)


def remove_member_table(console, data: dict, wide: bool) -> None:
    if not data["members"]:   # nothing was asked of the broker: no empty table, the note
        for note in data.get("notes") or []:
            console.print(Text(note))
        return
    table = Table(title=f"remove-member {data['group']}")
    for col in ("instance id", "member id", "result"):
        table.add_column(col)
    for m in data["members"]:
        result = Text("removed") if m["removed"] else Text(f"{m['error']} ({m['error_code']})",
                                                           style="bold red")
        table.add_row(m["instance_id"], _show(m["member_id"]), result)
    _print(console, table)
    for note in data.get("notes") or []:
        console.print(Text(f"note: {note}", style="dim"))


def confirm_summary(desc) -> str:
    """What a confirmation prompt shows about the group (a GroupDescription)."""
    number = (f"generation {_show(desc.generation)}" if desc.type == "classic"
              else f"group epoch {_show(desc.group_epoch)}")
    lines = [f"group {visible(desc.group)} ({desc.type}, {desc.state}, {number}, "
             f"{len(desc.members)} members):"]
    for m in desc.members:
        lines.append(f"  {visible(m.member_id)}  client {visible(_show(m.client_id))}  instance "
                     f"{visible(_show(m.instance_id))}  {_partitions([tp.to_dict() for tp in m.assignment or []])}")
    return "\n".join(lines)
