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


def _task_partitions(active: list[dict], inputs: dict[str, list[str]]):
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
        assignment=_task_partitions(current["active"], inputs),
        target_assignment=_task_partitions(target["active"], inputs),
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


def streams_group(raw: dict) -> model.GroupDescription:
    """One `groups[]` entry of a StreamsGroupDescribe response (error already checked).
    `assignment_epoch` is the group's target assignment epoch."""
    topo = topology(raw["topology"])
    inputs = input_topics(topo)
    desc = model.GroupDescription(
        group=raw["group_id"], type=model.STREAMS, state=raw["group_state"],
        protocol_type=model.STREAMS, group_epoch=raw["group_epoch"],
        assignment_epoch=raw["assignment_epoch"],
        members=[streams_member(m, inputs) for m in raw["members"]])
    desc.extra["topology"] = topo
    return desc
