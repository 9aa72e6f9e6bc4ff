"""Table views of the type-specific parts of `describe`: share groups (members that may
share partitions, share-partition offsets), streams groups (topology, tasks per member)
and mixed consumer groups (each member's protocol). render/groups.py calls these; the
input is GroupDescription.to_dict().
"""
from __future__ import annotations

from .cells import Styled, short_id
from .cells import table as _table
from .notation import partitions_text, ranges
from .notation import show as _show


def is_mixed(g: dict) -> bool:
    """A consumer (or streams) group that still holds classic members."""
    return bool(g.get("classic_members"))


def header_line(g: dict) -> str | None:
    """The type-specific line under the group header, if any."""
    if g["type"] == "share":
        return (f"assignor {_show(g['protocol'])}, group epoch {_show(g['group_epoch'])}, "
                f"assignment epoch {_show(g['assignment_epoch'])}")
    if g["type"] == "streams":
        topo = g.get("topology") or {}
        assignor = f"assignor {g['protocol']}, " if g.get("protocol") else ""
        return (f"{assignor}group epoch {_show(g['group_epoch'])}, target assignment epoch "
                f"{_show(g['assignment_epoch'])}, topology epoch {_show(topo.get('epoch'))}")
    return None


def mixed_line(g: dict) -> Styled | None:
    if not is_mixed(g):
        return None
    n, total = g["classic_members"], len(g["members"])
    return Styled(f"mixed group: {n} of {total} member{'s' if total != 1 else ''} still "
                f"use{'s' if n == 1 else ''} the classic protocol", style="yellow")


def _member(m: dict, wide: bool) -> str:
    return m["member_id"] if wide else short_id(m["member_id"])


# ---- share groups ---------------------------------------------------------------------------

def share_members_table(console, g: dict, wide: bool) -> None:
    cols = ["MEMBER", "CLIENT", "HOST", "EPOCH", "#PARTS", "ASSIGNMENT"]
    cols += ["RACK", "SUBSCRIBED"] if wide else []
    table = _table(*cols, right=("EPOCH", "#PARTS"))
    for m in g["members"]:
        row = [_member(m, wide), _show(m["client_id"]), _show(m["host"]),
               _show(m["member_epoch"]), str(m["partitions"]), partitions_text(m["assignment"])]
        if wide:
            row += [_show(m["rack"]), ",".join((m.get("subscription") or {}).get("topics") or []) or "-"]
        table.add_row(*row)
    console.print(table)
    for s in g.get("shared_partitions") or ():
        ids = ", ".join(i if wide else short_id(i) for i in s["member_ids"])
        console.print(f"{s['topic']}:{s['partition']} is shared by {len(s['member_ids'])} "
                      f"members: {ids}")


def share_offsets_table(console, g: dict, wide: bool) -> None:
    rows = g.get("share_offsets") or []
    if not rows:
        return
    table = _table("TOPIC", "PARTITION", "START-OFFSET", "LEADER-EPOCH", "LAG", "MEMBERS",
                   right=("PARTITION", "START-OFFSET", "LEADER-EPOCH", "LAG"))
    for row in rows:
        ids = row["member_ids"]
        members = ", ".join(i if wide else short_id(i) for i in ids) if (wide or len(ids) < 2) \
            else f"{len(ids)} members"
        table.add_row(row["topic"], str(row["partition"]), _show(row["start_offset"]),
                      _show(row["leader_epoch"]), _show(row["lag"]), members or "-")
    console.print(table)
    by_topic = ", ".join(f"{t} {_show(v)}" for t, v in g["lag_by_topic"].items())
    console.print(f"lag: total {_show(g['lag_total'])} ({by_topic})")


# ---- streams groups -------------------------------------------------------------------------

def tasks_text(tasks: list[dict] | None) -> str:
    """`0:0-2 1:3` — per subtopology, its partitions; `-` none."""
    return " ".join(f"{t['subtopology_id']}:{ranges(t['partitions'])}"
                    for t in tasks or () if t["partitions"]) or "-"


def topology_table(console, g: dict, wide: bool) -> None:
    topo = g.get("topology")
    if not topo or topo.get("subtopologies") is None:
        console.print("topology: not initialized (or its source topics are missing)")
        return
    table = _table("SUBTOPOLOGY", "SOURCE", "REPARTITION SOURCE", "REPARTITION SINK",
                   "CHANGELOG")
    for s in topo["subtopologies"]:
        table.add_row(s["subtopology_id"], ",".join(s["source_topics"]) or "-",
                      _topics(s["repartition_source_topics"], wide),
                      ",".join(s["repartition_sink_topics"]) or "-",
                      _topics(s["state_changelog_topics"], wide))
    console.print(table)


def _topics(infos: list[dict], wide: bool) -> str:
    if not infos:
        return "-"
    if not wide:
        return ",".join(t["name"] for t in infos)
    return ",".join(f"{t['name']}({_show(t['partitions'])}p)" for t in infos)


def _has(g: dict, kind: str) -> bool:
    return any(m[key][kind] for m in g["members"] for key in ("tasks", "target_tasks"))


def streams_members_table(console, g: dict, wide: bool) -> None:
    standby, warmup = wide or _has(g, "standby"), wide or _has(g, "warmup")
    cols = ["MEMBER", "PROCESS", "CLIENT", "HOST", "EPOCH", "ACTIVE", "TARGET-ACTIVE"]
    cols += ["STANDBY", "TARGET-STANDBY"] if standby else []
    cols += ["WARMUP", "TARGET-WARMUP"] if warmup else []
    cols += ["PROTOCOL"] if wide or is_mixed(g) else []
    cols += ["ENDPOINT", "INSTANCE", "RACK", "TOPOLOGY EPOCH"] if wide else []
    table = _table(*cols, right=("EPOCH", "TOPOLOGY EPOCH"))
    for m in g["members"]:
        cur, tgt = m["tasks"], m["target_tasks"]
        row = [_member(m, wide), _show(m["process_id"] if wide else _short(m["process_id"])),
               _show(m["client_id"]), _show(m["host"]), _show(m["member_epoch"]),
               tasks_text(cur["active"]), tasks_text(tgt["active"])]
        row += [tasks_text(cur["standby"]), tasks_text(tgt["standby"])] if standby else []
        row += [tasks_text(cur["warmup"]), tasks_text(tgt["warmup"])] if warmup else []
        row += [_show(m["member_protocol"])] if wide or is_mixed(g) else []
        if wide:
            ep = m["user_endpoint"]
            row += [f"{ep['host']}:{ep['port']}" if ep else "-", _show(m["instance_id"]),
                    _show(m["rack"]), _show(m["topology_epoch"])]
        table.add_row(*row)
    console.print(table)


def _short(process_id: str | None) -> str | None:
    return process_id if process_id is None or len(process_id) <= 13 else process_id[:8] + "…"


# What the broker said instead of a topology description (StreamsGroupCommand's words).
_NO_DESCRIPTION = {
    "not_stored": "no topology description is stored for streams group {group!r}",
    "error": "the broker failed to fetch the topology description for streams group {group!r}",
}


def topology_description(console, g: dict) -> None:
    """Kafka 4.4's recorded description of the topology, in Kafka Streams' own layout
    (Topology#describe, as StreamsGroupCommand --topology prints it)."""
    described = g.get("topology_description")
    if not described:
        return
    if described["status"] != "available":
        why = _NO_DESCRIPTION.get(described["status"], "no topology description is available "
                                                       "for streams group {group!r}")
        console.print(f"topology description: {why.format(group=g['group'])}")
        return
    console.print(description_text(described), markup=False, highlight=False)


def description_text(described: dict) -> str:
    preds: dict[str, list[str]] = {}
    subs = described["subtopologies"] or ()
    stores = described["global_stores"] or ()
    for node in [n for s in subs for n in s["nodes"]] + [
            n for gs in stores for n in (gs["source"], gs["processor"])]:
        for succ in node["successors"]:
            preds.setdefault(succ, []).append(node["name"])
    lines = ["Topologies:"]
    for s in subs:
        lines.append(f"   Sub-topology: {s['subtopology_id']}")
        lines += [_node_text(n, preds) for n in s["nodes"]]
        lines.append("")
    for i, gs in enumerate(stores, start=len(subs)):
        lines.append(f"   Sub-topology: {i} for global store (will not generate tasks)")
        lines += [_node_text(gs["source"], preds), _node_text(gs["processor"], preds), ""]
    return "\n".join(lines).rstrip("\n")


def _node_text(node: dict, preds: dict[str, list[str]]) -> str:
    def names(items) -> str:
        return ", ".join(items) or "none"

    kind = node["type"]
    if kind == "source":
        head = f"Source: {node['name']} (topics: [{', '.join(node['source_topics'])}])"
    elif kind == "sink":
        head = f"Sink: {node['name']} (topic: {node['sink_topic']})"
    else:
        head = f"Processor: {node['name']} (stores: [{', '.join(node['stores'])}])"
    text = f"    {head}"
    if kind != "sink":
        text += f"\n      --> {names(node['successors'])}"
    if kind != "source":
        text += f"\n      <-- {names(preds.get(node['name'], []))}"
    return text
