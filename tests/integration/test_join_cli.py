"""`groupctl join GROUP` (one-shot) against the lab broker: what it prints, that it leaves,
its exit codes."""
from __future__ import annotations

import json

import pytest
from probe_support import cli, describe, stabilized, wait_until

from groupctl.exitcodes import ExitCode

pytestmark = pytest.mark.broker


def test_join_empty_group_as_leader_and_leave(kafka, unique_group):
    code, out, err = cli(kafka, "-o", "json", "join", unique_group)
    assert code == 0, err
    data = json.loads(out)
    me = data["member_id"]
    assert data["group"] == unique_group
    assert data["generation"] == 1
    assert data["protocol"] == "range"
    assert data["leader"] == me and data["is_leader"] is True
    assert [m["member_id"] for m in data["members"]] == [me]
    assert data["members"][0]["subscription"]["topics"] == []
    assert data["assignment"] == []
    assert data["group_assignment"] == [{"member_id": me, "assignment": []}]
    assert data["instance_id"] is None
    assert stabilized(kafka, unique_group) == [1]
    group = describe(kafka, unique_group)
    assert group["group_state"] == "Empty" and group["members"] == []


def test_join_existing_group_as_follower(kafka, topic_factory, unique_group, consumer_factory):
    topic = topic_factory(3)
    c = consumer_factory(unique_group, topic, assignor="roundrobin")
    c.wait_assigned(count=3)
    before = stabilized(kafka, unique_group)[-1]
    code, out, err = cli(kafka, "-o", "json", "join", unique_group)
    assert code == 0, err
    data = json.loads(out)
    assert data["generation"] == before + 1
    assert data["protocol"] == "roundrobin"  # the group's assignor, offered alone
    assert data["leader"] == c.member_id and data["is_leader"] is False
    assert data["members"] is None and data["group_assignment"] is None
    assert data["assignment"] == []
    # gone at once; the consumer keeps all three partitions through both rebalances
    assert [m["member_id"] for m in describe(kafka, unique_group)["members"]] == [c.member_id]
    wait_until(lambda: stabilized(kafka, unique_group)[-1] == before + 2, 20,
               "the generation after the probe left")
    c.wait_assigned(count=3)
    assert c.assignment == frozenset((topic, p) for p in range(3))


def test_join_table_output(kafka, unique_group):
    code, out, err = cli(kafka, "join", unique_group)
    assert code == 0, err
    assert "generation" in out and "range" in out and "members (as the leader saw them)" in out


@pytest.mark.parametrize("args", [
    ["--duration", "5"], ["--record", "x.ndjson"], ["--protocol", "bogus"],
    ["--session-timeout", "0"], ["--topics", ","],
])
def test_join_usage_errors(kafka, unique_group, args):
    code, out, err = cli(kafka, "join", unique_group, *args)
    assert code == ExitCode.USAGE, (code, err)
    assert err.startswith("groupctl: error: ")


def test_an_assignor_groupctl_cannot_run_is_exit_2_before_joining(kafka, unique_group):
    # (it used to join, be elected leader, leave and exit 7: issue 14)
    code, out, err = cli(kafka, "join", unique_group, "--assignor", "my-custom")
    assert (code, out) == (ExitCode.USAGE, "")
    assert err == ("groupctl: error: --assignor 'my-custom': groupctl runs only range, "
                   "roundrobin, sticky, cooperative-sticky (the Java client's built-in "
                   "assignors) in classic groups, and names the server assignors uniform, "
                   "range in consumer groups\n")
    with open(kafka.log_file, encoding="utf-8", errors="replace") as f:
        assert unique_group not in f.read()  # the coordinator never heard of the group


def test_invalid_session_timeout_is_fatal_7(kafka, unique_group):
    code, out, err = cli(kafka, "join", unique_group, "--session-timeout", "1")
    assert code == ExitCode.KAFKA_ERROR, (code, err)
    assert "INVALID_SESSION_TIMEOUT (26)" in err
