"""Table views of `list` and `describe` (json/yaml print the same data, whole).

Input is the plain data of docs/reference/json-fields.md (GroupDescription.to_dict()). `wide` adds full
member ids, instance ids, racks, decoded subscriptions (topics, owned partitions,
generation, user data) and target assignments. Off a terminal the tables are not
wrapped to 80 columns: scripts and pagers get one line per row.
"""
from __future__ import annotations

from . import group_types
from .cells import Styled, short_id  # noqa: F401 - re-exported
from .cells import table as _table
from .notation import partitions_text, ranges  # noqa: F401 - re-exported
from .notation import show as _show

STATE_STYLES = {"Stable": "green", "Empty": "yellow", "Dead": "red",
                "PreparingRebalance": "magenta", "CompletingRebalance": "magenta",
                "Assigning": "magenta", "Reconciling": "magenta"}
UNWRAPPED_WIDTH = 1000  # off a terminal: as wide as the content
HEX_SHOWN = 64          # hex digits of raw bytes in the narrow table


def _unwrapped(console) -> None:
    if not console.is_terminal:
        console.width = UNWRAPPED_WIDTH


def _state(state: str | None) -> Styled:
    return Styled(_show(state), style=STATE_STYLES.get(state or "", ""))


# ---- list ----------------------------------------------------------------------------------

def list_table(console, groups: list[dict], wide: bool) -> None:
    _unwrapped(console)
    if not groups:
        console.print("no groups")
        return
    table = _table("GROUP", "STATE", "TYPE", "PROTOCOL TYPE", *(("COORDINATOR",) if wide else ()))
    for g in groups:
        row = [g["group"], _state(g["state"]), _show(g["type"]), _show(g["protocol_type"])]
        if wide:
            row.append(_show(g.get("coordinator_id")))
        table.add_row(*row)
    console.print(table)


# ---- describe ------------------------------------------------------------------------------

def describe_tables(console, groups: list[dict], wide: bool) -> None:
    _unwrapped(console)
    for i, g in enumerate(groups):
        if i:
            console.print()
        describe_one(console, g, wide)


def header_lines(g: dict) -> list[str]:
    coord = g.get("coordinator")
    where = f"{coord['host']}:{coord['port']} (id {coord['id']})" if coord else "-"
    if group_types.header_line(g) is not None:
        proto = group_types.header_line(g)
    elif g["type"] == "consumer":
        proto = (f"assignor {_show(g['protocol'])}, group epoch {_show(g['group_epoch'])}, "
                 f"assignment epoch {_show(g['assignment_epoch'])}")
    else:
        proto = f"protocol {_show(g['protocol'])}, generation {_show(g['generation'])}"
    return [f"type {_show(g['type'])}, protocol type {_show(g['protocol_type'])}, {proto}",
            f"coordinator {where}, __consumer_offsets partition {_show(g['coordinator_partition'])}"]


def describe_one(console, g: dict, wide: bool) -> None:

    console.print(Styled.assemble(("GROUP ", "bold"), (g["group"], "bold cyan"), "  ",
                                _state(g["state"])))
    for line in header_lines(g):
        console.print(line)
    mixed = group_types.mixed_line(g)
    if mixed is not None:
        console.print(mixed)
    if g.get("rebalancing") and g["type"] == "classic":
        console.print(Styled("rebalancing: assignments (and partition owners) are known again "
                           "once the group is Stable", style="magenta"))
    elif g.get("rebalancing"):
        console.print(Styled("rebalancing: members are moving to their target assignments",
                           style="magenta"))
    for line in waiting_for_lines(g):
        console.print(Styled(line, style="magenta"))
    if g["type"] == "streams":
        group_types.topology_table(console, g, wide)
        group_types.topology_description(console, g)
    if not g["members"]:
        console.print("no active members")
    elif g["type"] == "share":
        group_types.share_members_table(console, g, wide)
    elif g["type"] == "streams":
        group_types.streams_members_table(console, g, wide)
    elif g["protocol_type"] not in (None, "consumer"):
        _raw_members_table(console, g, wide)
    else:
        _members_table(console, g, wide)
    _offsets_table(console, g, wide)
    if g["type"] == "share":
        group_types.share_offsets_table(console, g, wide)


def _tp_minus(held: list[dict] | None, target: list[dict] | None) -> list[dict]:
    keep = {tp["topic"]: set(tp["partitions"]) for tp in target or ()}
    out = [{"topic": tp["topic"], "partitions": sorted(set(tp["partitions"]) - keep.get(
        tp["topic"], set()))} for tp in held or ()]
    return [tp for tp in out if tp["partitions"]]


def waiting_for_lines(g: dict) -> list[str]:
    """Consumer, share and streams groups (issue 19): the members holding the group up --
    member epoch behind the assignment epoch (share groups too, when the describe gives
    one: observe.story.convergence.share_target_epoch), i.e. not yet acknowledged, or still
    holding partitions their target took away -- with what they hold. One describe cannot
    say for how long (`watch` does)."""
    epoch = g.get("assignment_epoch")
    if g["type"] == "share" and epoch is None:
        epoch = g.get("group_epoch")
    if g["type"] not in ("consumer", "share", "streams") or epoch is None:
        return []
    lines = []
    for m in g["members"]:
        revoking = [] if m.get("target_assignment") is None else _tp_minus(
            m.get("assignment"), m["target_assignment"])
        lagging = m.get("member_epoch") is not None and 0 <= m["member_epoch"] < epoch
        if not (lagging or revoking):
            continue
        who = f"{short_id(m['member_id'])} (client {_show(m.get('client_id'))})"
        line = (f"waiting for: {who} at member epoch {_show(m.get('member_epoch'))} of {epoch}, "
                f"holding {partitions_text(m.get('assignment'))}")
        lines.append(line + (f", revoking {partitions_text(revoking)}" if revoking else ""))
    return lines


def _classic_rebalancing(g: dict) -> bool:
    return bool(g.get("rebalancing")) and g["type"] == "classic"


def _members_table(console, g: dict, wide: bool) -> None:

    consumer = g["type"] == "consumer"
    mixed = consumer and group_types.is_mixed(g)  # a column only then, as Kafka's own tool does
    # a classic group rebalancing: its describe has no assignments (said above the table)
    unknown = _classic_rebalancing(g)
    cols = ["MEMBER", "CLIENT", "HOST"] + (["EPOCH"] if consumer else []) + (
        [] if unknown else ["#PARTS", "ASSIGNMENT"])
    if consumer:
        cols.append("TARGET")
    if mixed:
        cols.append("PROTOCOL")
    if wide:
        cols += ["INSTANCE", "RACK", "SUBSCRIBED"]
        cols += [] if consumer else ["OWNED", "GENERATION", "USER DATA"]
    table = _table(*cols, right=("EPOCH", "#PARTS", "GENERATION"))
    for m in g["members"]:
        sub = m.get("subscription") or {}
        row = [m["member_id"] if wide else short_id(m["member_id"]), _show(m["client_id"]),
               _show(m["host"])]
        row += [_show(m["member_epoch"])] if consumer else []
        row += [] if unknown else [str(m["partitions"]), partitions_text(m["assignment"])]
        row += [partitions_text(m["target_assignment"])] if consumer else []
        row += [_show(m.get("member_protocol"))] if mixed else []
        if wide:
            topics = ",".join(sub.get("topics") or []) or "-"
            if m.get("subscribed_topic_regex"):
                topics = f"{topics} /{m['subscribed_topic_regex']}/"
            row += [_show(m["instance_id"]), _show(m["rack"]), topics]
            if not consumer:
                row += [partitions_text(sub.get("owned_partitions")) if sub else "-",
                        _show(sub.get("generation")), user_data_text(sub.get("user_data"))]
        table.add_row(*row)
    console.print(table)


def _raw_members_table(console, g: dict, wide: bool) -> None:
    """Members of a group whose protocol type is not `consumer`: bytes shown as hex."""
    table = _table("MEMBER", "CLIENT", "HOST", "METADATA (hex)", "ASSIGNMENT (hex)")
    for m in g["members"]:
        table.add_row(m["member_id"] if wide else short_id(m["member_id"]),
                      _show(m["client_id"]), _show(m["host"]),
                      _hex(m.get("raw_metadata"), wide), _hex(m.get("raw_assignment"), wide))
    console.print(table)


def _hex(text: str | None, wide: bool) -> str:
    if not text:
        return "-"
    return text if wide or len(text) <= HEX_SHOWN else text[:HEX_SHOWN] + "…"


def user_data_text(user_data) -> str:
    """Decoded sticky / cooperative-sticky user data in brief; hex otherwise."""
    if user_data is None:
        return "-"
    if isinstance(user_data, dict):
        parts = []
        if "generation" in user_data:
            parts.append(f"generation={_show(user_data['generation'])}")
        if user_data.get("previous_assignment") is not None:
            parts.append(f"previous={partitions_text(user_data['previous_assignment'])}")
        return " ".join(parts) or "-"
    return f"hex {user_data}"


def _offsets_table(console, g: dict, wide: bool) -> None:
    if not g["offsets"]:
        return
    owners = not _classic_rebalancing(g)   # no owner is known while it rebalances
    table = _table("TOPIC", "PARTITION", "COMMITTED", "LOG-END", "LAG",
                   *(["OWNER"] if owners else []),
                   right=("PARTITION", "COMMITTED", "LOG-END", "LAG"))
    for row in g["offsets"]:
        owner = row["member_id"]
        cells = [row["topic"], str(row["partition"]), _show(row["committed"]),
                 _show(row["log_end"]), _show(row["lag"])]
        if owners:
            cells.append(_show(owner if wide or owner is None else short_id(owner)))
        table.add_row(*cells)
    console.print(table)
    by_topic = ", ".join(f"{t} {_show(v)}" for t, v in g["lag_by_topic"].items())
    console.print(f"lag: total {_show(g['lag_total'])} ({by_topic})")
