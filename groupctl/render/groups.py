"""Table views of `list` and `describe` (json/yaml print the same data, whole)."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text

STATE_STYLES = {"Stable": "green", "Empty": "yellow", "Dead": "red",
                "PreparingRebalance": "magenta", "CompletingRebalance": "magenta",
                "Assigning": "magenta", "Reconciling": "magenta"}


def _show(value) -> str:
    return "-" if value is None or value == "" else str(value)


def _state(state: str | None) -> Text:
    return Text(_show(state), style=STATE_STYLES.get(state or "", ""))


def partitions_text(assignment: list[dict] | None) -> str:
    """`orders:0-2,5 payments:1` — compact ranges per topic."""
    if assignment is None:
        return "-"
    return " ".join(f"{tp['topic']}:{_ranges(tp['partitions'])}" for tp in assignment) or "(none)"


def _ranges(parts: list[int]) -> str:
    out, start, prev = [], None, None
    for p in sorted(parts):
        if start is None:
            start = prev = p
        elif p == prev + 1:
            prev = p
        else:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = p
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ",".join(out)


def list_table(console, groups: list[dict], wide: bool) -> None:
    table = Table(box=None, header_style="bold", pad_edge=False)
    for col in ("GROUP", "TYPE", "STATE", "PROTOCOL TYPE") + (("COORDINATOR",) if wide else ()):
        table.add_column(col)
    for g in groups:
        row = [g["group"], _show(g["type"]), _state(g["state"]), _show(g["protocol_type"])]
        if wide:
            row.append(_show(g.get("coordinator_id")))
        table.add_row(*row)
    console.print(table)


def describe_tables(console, groups: list[dict], wide: bool) -> None:
    for i, g in enumerate(groups):
        if i:
            console.print()
        _describe_one(console, g, wide)


def _header(g: dict) -> str:
    coord = g.get("coordinator") or {}
    where = f"{coord.get('host')}:{coord.get('port')} (id {coord.get('id')})" if coord else "-"
    if g["type"] == "consumer":
        epochs = f"group epoch {_show(g['group_epoch'])}, assignment epoch {_show(g['assignment_epoch'])}"
        proto = f"assignor {_show(g['protocol'])}"
    else:
        epochs = f"generation {_show(g['generation'])}"
        proto = f"protocol {_show(g['protocol'])}"
    return (f"type {_show(g['type'])}, protocol type {_show(g['protocol_type'])}, {proto}, {epochs}\n"
            f"coordinator {where}, __consumer_offsets partition {_show(g['coordinator_partition'])}")


def _describe_one(console, g: dict, wide: bool) -> None:
    title = Text.assemble(("GROUP ", "bold"), (g["group"], "bold cyan"), "  ", _state(g["state"]))
    console.print(title)
    if g.get("error"):
        console.print(Text(f"error: {g['error']}", style="red"))
        return
    console.print(_header(g))
    if g.get("rebalancing"):
        console.print(Text("rebalancing: members are shown without subscriptions and assignments "
                           "until the group is Stable", style="magenta"))
    _members_table(console, g, wide)
    _offsets_table(console, g, wide)


def _members_table(console, g: dict, wide: bool) -> None:
    if not g["members"]:
        console.print("no active members")
        return
    consumer = g["type"] == "consumer"
    table = Table(box=None, header_style="bold", pad_edge=False, title_justify="left")
    cols = ["MEMBER", "CLIENT", "HOST", "#PARTS", "ASSIGNMENT"]
    if consumer:
        cols.insert(3, "EPOCH")
    if wide:
        cols += ["INSTANCE", "RACK", "SUBSCRIBED", "OWNED" if not consumer else "TARGET", "USER DATA"]
    for c in cols:
        table.add_column(c, overflow="fold")
    for m in g["members"]:
        sub = m.get("subscription") or {}
        row = [m["member_id"] if wide else _short(m["member_id"]), _show(m["client_id"]),
               _show(m["host"]), str(m["partitions"]), partitions_text(m["assignment"])]
        if consumer:
            row.insert(3, _show(m["member_epoch"]))
        if wide:
            second = m["target_assignment"] if consumer else sub.get("owned_partitions")
            row += [_show(m["instance_id"]), _show(m["rack"]), ",".join(sub.get("topics") or []) or "-",
                    partitions_text(second), _user_data_text(sub.get("user_data"), m)]
        table.add_row(*row)
    console.print(table)


def _user_data_text(user_data, member: dict) -> str:
    if member.get("raw_metadata"):
        return f"raw {member['raw_metadata'][:48]}"
    if user_data is None:
        return "-"
    if isinstance(user_data, dict):
        return " ".join(f"{k}={v}" for k, v in user_data.items() if not isinstance(v, (list, dict))) or "decoded"
    return f"hex {str(user_data)[:48]}"


def _short(member_id: str) -> str:
    return member_id if len(member_id) <= 28 else member_id[:12] + "…" + member_id[-12:]


def _offsets_table(console, g: dict, wide: bool) -> None:
    if not g["offsets"]:
        return
    table = Table(box=None, header_style="bold", pad_edge=False)
    for c in ("TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG", "OWNER"):
        table.add_column(c, justify="right" if c in ("PARTITION", "COMMITTED", "LOG-END", "LAG") else "left")
    for row in g["offsets"]:
        owner = row["member_id"]
        table.add_row(row["topic"], str(row["partition"]), _show(row["committed"]), _show(row["log_end"]),
                      _show(row["lag"]), _show(owner if wide or owner is None else _short(owner)))
    console.print(table)
    by_topic = ", ".join(f"{t}={_show(v)}" for t, v in g["lag_by_topic"].items())
    console.print(f"lag: total {_show(g['lag_total'])} ({by_topic})")
