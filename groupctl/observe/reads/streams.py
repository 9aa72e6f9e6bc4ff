"""Streams groups (KIP-1071) in the read model: a StreamsGroupDescribe response ->
GroupDescription. Pure functions, no I/O (observe/describe.py asks).

A streams group assigns tasks, not partitions: task `S_P` is partition P of every input
topic of subtopology S (its source topics and the repartition topics it reads). Each
member's `tasks` and `target_tasks` hold the broker's task lists as they are, and its
`assignment` / `target_assignment` are the input partitions its active tasks read, so the
offsets table can name the member that owns each committed partition.
"""
from __future__ import annotations

from . import model

TASK_KINDS = (("active", "active_tasks"), ("standby", "standby_tasks"),
              ("warmup", "warmup_tasks"))


def _positive(value: int | None) -> int | None:
    """Partition counts and replication factors: 0 or -1 mean "not enforced / default"."""
    return value if value is not None and value > 0 else None


def _topic_info(info: dict) -> dict:
    return {"name": info["name"], "partitions": _positive(info["partitions"]),
            "replication_factor": _positive(info["replication_factor"]),
            "configs": {kv["key"]: kv["value"] for kv in info["topic_configs"] or ()}}


def topology(raw: dict | None) -> dict | None:
    """The group's topology: its epoch and subtopologies (null subtopologies while the
    group is not initialized or its source topics are missing)."""
    if raw is None:
        return None
    subs = raw["subtopologies"]
    return {"epoch": raw["epoch"], "subtopologies": None if subs is None else [{
        "subtopology_id": s["subtopology_id"],
        "source_topics": sorted(s["source_topics"] or []),
        "repartition_source_topics": [_topic_info(t) for t in s["repartition_source_topics"] or ()],
        "repartition_sink_topics": sorted(s["repartition_sink_topics"] or []),
        "state_changelog_topics": [_topic_info(t) for t in s["state_changelog_topics"] or ()],
    } for s in sorted(subs, key=lambda s: _subtopology_order(s["subtopology_id"]))]}


def _subtopology_order(subtopology_id: str):
    return (0, int(subtopology_id), "") if subtopology_id.isdigit() else (1, 0, subtopology_id)


def input_topics(topo: dict | None) -> dict[str, list[str]]:
    """{subtopology id: the topics its tasks read} (source and repartition source topics)."""
    out: dict[str, list[str]] = {}
    for s in (topo or {}).get("subtopologies") or ():
        out[s["subtopology_id"]] = [*s["source_topics"],
                                    *(t["name"] for t in s["repartition_source_topics"])]
    return out


def tasks(raw: dict | None) -> dict:
    """{"active": [{subtopology_id, partitions}], "standby": [...], "warmup": [...]}."""
    out = {}
    for name, key in TASK_KINDS:
        ids = sorted(((t["subtopology_id"], sorted(t["partitions"] or [])) for t in
                      (raw or {}).get(key) or ()), key=lambda t: _subtopology_order(t[0]))
        out[name] = [{"subtopology_id": sid, "partitions": parts} for sid, parts in ids]
    return out


def task_partitions(active: list[dict], inputs: dict[str, list[str]]):
    return model.topic_list((topic, t["partitions"]) for t in active
                             for topic in inputs.get(t["subtopology_id"], ()))


def _task_offsets(raw) -> list[dict]:
    return [{"subtopology_id": t["subtopology_id"], "partition": t["partition"],
             "offset": t["offset"]} for t in raw or ()]


def streams_member(m: dict, inputs: dict[str, list[str]]) -> model.Member:
    current, target = tasks(m["assignment"]), tasks(m["target_assignment"])
    endpoint = m["user_endpoint"]
    return model.Member(
        member_id=m["member_id"], client_id=m["client_id"],
        host=model.none_if_empty(m["client_host"]), instance_id=m["instance_id"],
        rack=m["rack_id"], member_epoch=m["member_epoch"],
        assignment=task_partitions(current["active"], inputs),
        target_assignment=task_partitions(target["active"], inputs),
        member_protocol=model.CLASSIC if m["is_classic"] else model.STREAMS,
        extra={
            "process_id": model.none_if_empty(m["process_id"]),
            "user_endpoint": None if endpoint is None
            else {"host": endpoint["host"], "port": endpoint["port"]},
            "topology_epoch": m["topology_epoch"],
            "is_classic": m["is_classic"],
            "client_tags": {kv["key"]: kv["value"] for kv in m["client_tags"] or ()},
            "tasks": current, "target_tasks": target,
            "task_offsets": _task_offsets(m["task_offsets"]),
            "task_end_offsets": _task_offsets(m["task_end_offsets"]),
        })


# StreamsGroupDescribe v1's TopologyDescriptionStatus, in the field's own words.
DESCRIPTION_STATUS = {0: "not_requested", 1: "not_stored", 2: "error", 3: "available"}
NODE_TYPES = {1: "source", 2: "processor", 3: "sink"}


def _node(n: dict) -> dict:
    return {"name": n["name"], "type": NODE_TYPES.get(n["node_type"], str(n["node_type"])),
            "source_topics": list(n["source_topics"] or ()), "sink_topic": n["sink_topic"],
            "stores": list(n["stores"] or ()), "successors": list(n["successors"] or ())}


def topology_description(raw: dict) -> dict | None:
    """The topology's full description as the broker's description plugin recorded it
    (StreamsGroupDescribe v1, Kafka 4.4, asked by `describe`): its status and, when
    available, the subtopologies' processor nodes and the global stores. None: not asked,
    or a broker before 4.4."""
    status = DESCRIPTION_STATUS.get(raw.get("topology_description_status", 0), "unknown")
    if status == "not_requested":
        return None
    found = raw.get("topology_description")
    return {"status": status, "subtopologies": None if found is None else [
        {"subtopology_id": s["subtopology_id"], "nodes": [_node(n) for n in s["nodes"] or ()]}
        for s in found["subtopologies"] or ()],
        "global_stores": None if found is None else [
            {"source": _node(g["source"]), "processor": _node(g["processor"])}
            for g in found["global_stores"] or ()]}


def streams_group(raw: dict) -> model.GroupDescription:
    """One `groups[]` entry of a StreamsGroupDescribe response (error already checked).
    `assignment_epoch` is the group's target assignment epoch; `protocol` the task
    assignor the coordinator uses next (v1, Kafka 4.4; null before)."""
    topo = topology(raw["topology"])
    inputs = input_topics(topo)
    desc = model.GroupDescription(
        group=raw["group_id"], type=model.STREAMS, state=raw["group_state"],
        protocol_type=model.STREAMS, protocol=raw.get("assignor_name"),
        group_epoch=raw["group_epoch"], assignment_epoch=raw["assignment_epoch"],
        members=[streams_member(m, inputs) for m in raw["members"]])
    desc.extra["topology"] = topo
    described = topology_description(raw)
    if described is not None:
        desc.extra["topology_description"] = described
    return desc
