"""Table view of `groupctl join` (one-shot): what the join showed. json/yaml print the
same dict, whole (fields: group, type, generation, protocol, leader, member_id,
instance_id, is_leader, members, assignment, group_assignment, coordinator, joined_in_ms;
consumer (KIP-848) groups: member_protocol, member_epoch, group_epoch, assignment_epoch,
member_state, and generation null)."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

from .offline import _partitions, _print, _show


def join_table(console, data: dict, wide: bool) -> None:
    if data.get("type") == "consumer":
        return _consumer_table(console, data)
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    coord = data.get("coordinator") or {}
    for label, value in (
            ("group", data["group"]), ("generation", data["generation"]),
            ("protocol", data.get("protocol")), ("leader", data.get("leader")),
            ("member id", data["member_id"]), ("instance id", data.get("instance_id")),
            ("is leader", "yes" if data.get("is_leader") else "no"),
            ("coordinator", f"{coord.get('id')} {coord.get('host')}:{coord.get('port')}" if coord else None),
            ("assignment", _partitions(data.get("assignment"))),
            ("joined in", f"{data.get('joined_in_ms')} ms")):
        head.add_row(label, _show(value))
    _print(console, head)
    members = data.get("members")
    if members is None:
        console.print(Text("members: known to the leader only (the probe is a follower)", style="dim"))
        return
    assigned = {a["member_id"]: a["assignment"] for a in data.get("group_assignment") or []}
    table = Table(title="members (as the leader saw them)")
    for col in ("member id", "instance id", "topics", "owned", "assignment"):
        table.add_column(col)
    if wide:
        table.add_column("user data")
    for m in members:
        sub = m.get("subscription") or {}
        row = [m["member_id"], _show(m.get("instance_id")), ",".join(sub.get("topics") or []) or "(none)",
               _partitions(sub.get("owned_partitions")), _partitions(assigned.get(m["member_id"]))]
        if wide:
            row.append(_show(sub.get("user_data")))
        table.add_row(*row)
    _print(console, table)


def _consumer_table(console, data: dict) -> None:
    """A KIP-848 join: epochs instead of a generation, no leader (the broker assigns)."""
    head = Table.grid(padding=(0, 2))
    head.add_column(style="bold")
    head.add_column()
    coord = data.get("coordinator") or {}
    for label, value in (
            ("group", data["group"]), ("type", "consumer (KIP-848)"),
            *([("member protocol", "classic (the broker assigns; no leader)")]
              if data.get("member_protocol") == "classic" else []),
            ("group epoch", data.get("group_epoch")),
            ("assignment epoch", data.get("assignment_epoch")),
            ("member epoch", data.get("member_epoch")),
            ("server assignor", data.get("protocol")),
            ("member id", data["member_id"]), ("instance id", data.get("instance_id")),
            ("coordinator", f"{coord.get('id')} {coord.get('host')}:{coord.get('port')}" if coord else None),
            ("assignment", _partitions(data.get("assignment"))),
            ("joined in", f"{data.get('joined_in_ms')} ms")):
        head.add_row(label, _show(value))
    _print(console, head)
