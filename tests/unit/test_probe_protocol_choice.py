"""Which member joins a group (probe_setup.member_protocol / new_member): from the group's
type, described first; and the join command's checks before anything is sent (exit 2)."""
from __future__ import annotations

import pytest

from cli_runner import run_cli
from groupctl.coordinator.members.classic import ClassicMember
from groupctl.coordinator.members.consumer import ConsumerMember
from groupctl.coordinator.probe.setup import ProbeError, ProbeSettings, member_protocol, new_member
from groupctl.errors import UsageError
from groupctl.observe.reads.model import GroupDescription, Member


def group(kind, state="Stable", members=1, **kw):
    return GroupDescription("g", type=kind, state=state,
                            members=[Member(f"m{i}") for i in range(members)], **kw)


@pytest.mark.parametrize("described, asked, chosen", [
    (group("consumer"), None, "consumer"),
    (group("consumer", "Empty", 0), None, "consumer"),
    (group("classic"), None, "classic"),
    (group("classic", "Empty", 0), "consumer", "consumer"),   # an empty classic group
    (None, None, "classic"),                                  # a new group
    (None, "consumer", "consumer"),
    (group("consumer"), "classic", "classic"),                # asked for: a classic member
])
def test_the_group_type_chooses_the_member(described, asked, chosen):
    assert member_protocol(ProbeSettings("g", protocol=asked), described) == chosen


def test_a_live_classic_group_is_not_converted():
    with pytest.raises(UsageError, match="would convert it"):
        member_protocol(ProbeSettings("g", protocol="consumer"), group("classic"))


@pytest.mark.parametrize("kind", ["share", "streams"])
def test_share_and_streams_groups_are_refused(kind):
    with pytest.raises(ProbeError, match=f"is a {kind} group"):
        member_protocol(ProbeSettings("g"), group(kind))


def test_new_member_builds_each_protocol():
    m = new_member(ProbeSettings("g", topics=["t"], assignor="range", instance_id="i",
                                 rebalance_timeout_ms=20_000, session_timeout_ms=7_000),
                   group("consumer", group_epoch=4))
    assert isinstance(m, ConsumerMember) and m.group_type == "consumer"
    assert (m.topics, m.server_assignor, m.group_instance_id) == (["t"], "range", "i")
    assert (m.rebalance_timeout_ms, m.request_timeout_ms) == (20_000, 7_000)
    assert isinstance(new_member(ProbeSettings("g"), None), ClassicMember)


@pytest.mark.parametrize("settings, described", [
    (ProbeSettings("g", assignor="sticky"), group("consumer")),
    (ProbeSettings("g", assignor="uniform"), group("classic")),
    (ProbeSettings("g", topic_regex="t.*"), group("classic")),
])
def test_an_assignor_or_regex_the_member_cannot_use_is_a_usage_error(settings, described):
    with pytest.raises((UsageError, KeyError)):
        new_member(settings, described)


def cli(*args: str) -> tuple[int, str]:
    code, _, err = run_cli(*args, bootstrap="127.0.0.1:1")
    return code, err


@pytest.mark.parametrize("args, words", [
    (["--protocol", "consumer", "--assignor", "sticky"], "server assignor"),
    (["--protocol", "classic", "--assignor", "uniform"], "groupctl runs only"),
    (["--assignor", "bogus"], "server assignors uniform, range in consumer groups"),
    (["--protocol", "bogus"], "choose classic or consumer"),
    (["--protocol", "classic", "--topic-regex", "a.*"], "needs the consumer protocol"),
    (["--topics", "a", "--topic-regex", "a.*"], "exclude each other"),
])
def test_join_usage_errors_before_anything_is_sent(args, words):
    code, err = cli("join", "g", *args)
    assert code == 2 and words in err, err


def test_the_kip848_probe_member_id_says_it_is_groupctls():
    """Issue 23: the client chooses a KIP-848 member id; the probe's carries the `groupctl-`
    prefix the classic probe's broker-made id has, and is new for every member."""
    a, b = (new_member(ProbeSettings("g"), group("consumer")) for _ in range(2))
    assert a.member_id.startswith("groupctl-") and b.member_id.startswith("groupctl-")
    assert a.member_id != b.member_id
    a.coordinator_found(1, "b1", 9092)
    (join,) = a.next_requests(0)   # the join carries it (epoch 0)
    assert (join.body["member_id"], join.body["member_epoch"]) == (a.member_id, 0)
