"""Equal describe responses are decoded once (client/memo.py) and a snapshot poller's group
built from the very same entries keeps its GroupDescription; anything new is built anew."""
from __future__ import annotations

import asyncio

from groupctl.client.memo import ResponseMemo
from groupctl.observe.reads.describe import describe_groups
from groupctl.protocol.frame import decode_response
from groupctl.protocol.messages import DESCRIBE_GROUPS, OFFSET_FETCH

from describe_fakes import ScriptedCoordinator


def _frame(corr: int, groups: list[dict], version: int = 5) -> bytes:
    body = DESCRIBE_GROUPS.encode_response(version, {"throttle_time_ms": 0, "groups": groups})
    tags = b"\x00" if DESCRIBE_GROUPS.response_header_version(version) >= 1 else b""
    return corr.to_bytes(4, "big") + tags + body


def _group(name: str, state: str = "Empty") -> dict:
    return {"error_code": 0, "group_id": name, "group_state": state, "protocol_type": "consumer",
            "protocol_data": "", "members": [], "authorized_operations": -2147483648}


def test_equal_bytes_give_the_same_body_and_other_bytes_a_new_one():
    memo, decoded = ResponseMemo(keep=2), []

    def decode(api, version, data):
        decoded.append(data)
        return decode_response(api, version, data)

    first = memo.decode(DESCRIBE_GROUPS, 5, _frame(1, [_group("a")]), decode)
    again = memo.decode(DESCRIBE_GROUPS, 5, _frame(2, [_group("a")]), decode)  # new corr id
    assert again is first and len(decoded) == 1
    assert first["groups"][0]["group_id"] == "a" and first["groups"][0]["group_state"] == "Empty"
    moved = memo.decode(DESCRIBE_GROUPS, 5, _frame(3, [_group("a", "Stable")]), decode)
    assert moved is not first and moved["groups"][0]["group_state"] == "Stable"
    other_version = memo.decode(DESCRIBE_GROUPS, 4, _frame(4, [_group("a")], 4), decode)
    assert other_version is not first and len(decoded) == 3
    # keep=2: the least recently seen went; the last two stay
    assert memo.decode(DESCRIBE_GROUPS, 4, _frame(5, [_group("a")], 4), decode) is other_version
    memo.decode(DESCRIBE_GROUPS, 5, _frame(6, [_group("a")]), decode)
    assert len(decoded) == 4


def _coordinator() -> ScriptedCoordinator:
    """DescribeGroups answered with the same entry dicts each time (as the connection's
    memo hands them out) until the test puts in new ones."""
    return ScriptedCoordinator({"DescribeGroups": [{"a": _group("a"), "b": _group("b")}]},
                               apis={DESCRIBE_GROUPS, OFFSET_FETCH})


def test_a_snapshot_of_unchanged_entries_is_the_last_description_and_a_changed_one_new():
    c, built = _coordinator(), {}
    entries = c.script["DescribeGroups"][0]

    def snapshot():
        result = asyncio.run(describe_groups(c, ["a", "b"], offsets=False, built=built))
        assert not result.failures
        return {d.group: d for d in result.groups}

    first = snapshot()
    assert [first["a"].state, first["b"].state] == ["Empty", "Empty"]
    second = snapshot()
    assert second["a"] is first["a"] and second["b"] is first["b"]
    entries["b"] = _group("b", "PreparingRebalance")   # a new entry: built anew
    third = snapshot()
    assert third["a"] is first["a"]
    assert third["b"] is not first["b"] and third["b"].state == "PreparingRebalance"
    entries["a"] = dict(entries["a"])   # equal but not the same entry: built anew, equal
    fourth = snapshot()
    assert fourth["a"] is not first["a"] and fourth["a"] == first["a"]
    assert set(built) == {"a", "b"}
    assert {api for api, _ in c.sent} == {"DescribeGroups"}   # snapshots ask nothing else


def test_without_a_memory_every_call_builds_anew():
    c = _coordinator()
    one = asyncio.run(describe_groups(c, ["a"], offsets=False)).groups[0]
    two = asyncio.run(describe_groups(c, ["a"], offsets=False)).groups[0]
    assert one == two and one is not two
