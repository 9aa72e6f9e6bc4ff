"""A fake group coordinator for describe_groups unit tests."""
from __future__ import annotations

from groupctl.client.metadata import BrokerInfo, ClusterMetadata
from groupctl.client.retry import Deadline


class ScriptedCoordinator:
    """One coordinator answering each describe API from `script` ({api name: [answer per
    call]}; an answer is {group: groups[] entry}, the last one repeated), recording every
    request. `apis`: the APIs it supports (None: all)."""

    def __init__(self, script: dict, apis=None):
        self.script = {api: list(answers) for api, answers in script.items()}
        self.apis = apis
        self.sent: list[tuple[str, list]] = []

    def deadline(self, d=None):
        return Deadline.of(d, 5)

    async def find_coordinators(self, groups, deadline=None):
        return {g: BrokerInfo(1, "127.0.0.1", 9092) for g in groups}

    def invalidate_coordinator(self, group):
        pass

    async def broker(self, node, deadline=None):
        return self

    def supports(self, api, min_version=0):
        return self.apis is None or api in self.apis

    def version_for(self, api, min_version=0):
        return 9

    async def metadata(self, topics, deadline=None):
        return ClusterMetadata(None, None, {}, {})

    async def request(self, api, body, node_id=None, version=None, deadline=None):
        groups = body.get("group_ids") or body.get("groups")
        groups = [g["group_id"] if isinstance(g, dict) else g for g in groups]
        self.sent.append((api.name, groups))
        if api.name == "OffsetFetch":
            return {"error_code": 0, "groups": [{"group_id": g, "error_code": 0, "topics": []}
                                                for g in groups]}
        if api.name == "DescribeShareGroupOffsets":
            return {"groups": [{"group_id": g, "error_code": 0, "topics": []} for g in groups]}
        answers = self.script[api.name]
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        return {"groups": [answer[g] for g in groups]}
