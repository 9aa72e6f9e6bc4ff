"""The classic member's request bodies and the response fields it reads, against Kafka's JSON
message specs from the kafka-clients jar the lab runs (read by test_conformance's helper:
without the jar these tests FAIL, they never skip), and against groupctl's own codecs."""
from __future__ import annotations

import re

import pytest
from test_conformance import kafka_specs

from groupctl.coordinator.members.classic import ClassicMember
from groupctl.protocol.messages import APIS

KEYS = {"FindCoordinator": 10, "JoinGroup": 11, "Heartbeat": 12, "LeaveGroup": 13, "SyncGroup": 14}

# Response fields the member reads, per API (nested: "array.field").
READS = {
    "FindCoordinator": {"error_code", "error_message", "node_id", "host", "port", "coordinators",
                        "coordinators.key", "coordinators.node_id", "coordinators.host",
                        "coordinators.port", "coordinators.error_code",
                        "coordinators.error_message"},
    "JoinGroup": {"error_code", "generation_id", "protocol_type", "protocol_name", "leader",
                  "skip_assignment", "member_id", "members", "members.member_id",
                  "members.group_instance_id", "members.metadata"},
    "SyncGroup": {"error_code", "protocol_type", "protocol_name", "assignment"},
    "Heartbeat": {"error_code"},
    "LeaveGroup": {"error_code", "members", "members.error_code"},
}


def requests_of_a_session(instance_id=None) -> dict:
    """One request of each API, as the member builds them on a leader's path."""
    m = ClassicMember("g", protocols=[("range", b"\x00\x01"), ("roundrobin", b"\x00\x02")],
                      session_timeout_ms=10_000, rebalance_timeout_ms=30_000,
                      heartbeat_interval_ms=3_000, group_instance_id=instance_id)
    out = {}
    r = m.next_requests(0)[0]
    out[r.api] = r
    m.on_response(r.api, {"error_code": 0, "node_id": 1, "host": "h", "port": 1}, 0)
    r = m.next_requests(0)[0]
    out[r.api] = r
    m.on_response(r.api, {"error_code": 0, "member_id": "p", "generation_id": 1, "leader": "p",
                          "protocol_name": "range",
                          "members": [{"member_id": "p", "metadata": b"\x00\x01"}]}, 0)
    m.provide_assignment({"p": b"\x00\x00"}, 0)
    r = m.next_requests(0)[0]
    out[r.api] = r
    m.on_response(r.api, {"error_code": 0, "assignment": b"\x00\x00"}, 0)
    r = m.next_requests(3_000)[0]
    out[r.api] = r
    m.leave("bye", 3_001)
    r = m.next_requests(3_001)[0]
    out[r.api] = r
    assert set(out) == set(KEYS)
    return out


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _versions(spec: str, top: int) -> range:
    if spec == "none":
        return range(0)
    lo, _, hi = spec.partition("-")
    if spec.endswith("+"):
        return range(int(spec[:-1]), top + 1)
    return range(int(lo), int(hi or lo) + 1)


def _fields(fields: list, top: int, prefix="") -> dict[str, range]:
    out = {}
    for f in fields:
        path = prefix + _snake(f["name"])
        out[path] = _versions(f["versions"], top)
        if f.get("fields"):
            out.update(_fields(f["fields"], top, path + "."))
    return out


def _load(name: str) -> dict:
    """Kafka's JSON spec `name` ("JoinGroupRequest"); pytest.fail without the jar."""
    return kafka_specs()[name]


def _paths(body: dict, prefix="") -> set[str]:
    out = set()
    for k, v in body.items():
        out.add(prefix + k)
        if isinstance(v, list) and v and isinstance(v[0], dict):
            out |= _paths(v[0], prefix + k + ".")
    return out


@pytest.mark.parametrize("instance_id", [None, "probe-a"])
@pytest.mark.parametrize("api", sorted(KEYS))
def test_request_bodies_match_the_json_specs(api, instance_id):
    req = requests_of_a_session(instance_id)[api]
    spec = _load(api + "Request")
    top = int(spec["validVersions"].split("-")[-1])
    fields = _fields(spec["fields"], top)
    body_paths = _paths(req.body)
    assert body_paths <= set(fields), body_paths - set(fields)
    # every field of the newest version is filled in
    newest = {p for p, vs in fields.items() if top in vs}
    assert newest <= body_paths, newest - body_paths
    # the body's fields all exist at min_version (what min_version promises)
    lo = int(spec["validVersions"].split("-")[0])
    for p in body_paths:
        if req.body.get(p) is not None and p in ("group_instance_id", "members",
                                                 "members.group_instance_id"):
            assert max(req.min_version, lo) in fields[p], (p, req.min_version)


@pytest.mark.parametrize("api", sorted(KEYS))
def test_response_fields_read_exist_in_the_json_specs(api):
    spec = _load(api + "Response")
    top = int(spec["validVersions"].split("-")[-1])
    assert READS[api] <= set(_fields(spec["fields"], top)), READS[api] - set(_fields(spec["fields"], top))


@pytest.mark.parametrize("api", sorted(KEYS))
def test_request_bodies_round_trip_through_groupctl_codecs(api):
    spec = APIS[KEYS[api]]
    req = requests_of_a_session("probe-a")[api]
    for version in range(max(spec.min_version, req.min_version), spec.max_version + 1):
        spec.encode_request(version, req.body)          # every version from min_version encodes
    top = spec.max_version
    decoded = spec.decode_request(top, spec.encode_request(top, req.body))
    present = {f.name for f in spec.request.fields if f.present(top)}
    for key, value in req.body.items():
        if key in present:
            assert decoded[key] == value, (api, top, key)
