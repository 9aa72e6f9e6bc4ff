"""Static membership (KIP-345) of the probe: a restart with the same instance id costs no
rebalance; a second probe with the same instance id fences the first (exit 7)."""
from __future__ import annotations

import io
import threading

import pytest
from probe_support import ProbeThread, describe, stabilized, wait_until

from groupctl.cli.app import invoke
from groupctl.cli.env import Env
from groupctl.exitcodes import ExitCode

pytestmark = pytest.mark.broker


def _static_members(kafka, group: str) -> dict[str, str]:
    return {m["group_instance_id"]: m["member_id"]
            for m in describe(kafka, group)["members"] if m.get("group_instance_id")}


def test_restart_with_same_instance_id_costs_no_rebalance(kafka, topic_factory, unique_group,
                                                          consumer_factory):
    topic = topic_factory(2)
    c = consumer_factory(unique_group, topic)
    c.wait_assigned(count=2)
    first = ProbeThread(kafka, unique_group, instance_id="probe-static")
    first.leave_on_exit = False  # a crash: the static member stays until its session ends
    first.start()
    joined = first.wait_rebalance(2)
    generation = joined["to_generation"]
    old_id = first.member_id
    c.wait_for(lambda x: len(x.assigns()) >= 2, 20, "the consumer's second assign")
    assigns = len(c.assigns())
    first.stop()
    assert _static_members(kafka, unique_group) == {"probe-static": old_id}

    second = ProbeThread(kafka, unique_group, instance_id="probe-static").start()
    try:
        gen_event = second.wait_event(lambda e: e["event"] == "generation", 20, "a generation")
        second.wait_event(lambda e: e["event"] == "assignment"
                          and e["member_id"] == second.member_id, 20, "the sync")
        assert gen_event["generation"] == generation  # same generation: no rebalance
        assert second.member_id != old_id
        assert _static_members(kafka, unique_group) == {"probe-static": second.member_id}
        assert stabilized(kafka, unique_group)[-1] == generation
        assert len(c.assigns()) == assigns
    finally:
        second.stop()
    # the static probe left with its instance id: the group rebalances without it
    wait_until(lambda: _static_members(kafka, unique_group) == {}, 5, "the static probe gone")
    wait_until(lambda: stabilized(kafka, unique_group)[-1] == generation + 1, 20,
               "the generation after the static probe left")


def test_second_probe_with_same_instance_id_fences_the_first(kafka, unique_group):
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    result: list[int] = []
    first = threading.Thread(target=lambda: result.append(invoke(
        ["-b", kafka.bootstrap, "join", unique_group, "--watch", "--duration", "60",
         "--instance-id", "fence-me", "--session-timeout", "10"], env)), daemon=True)
    first.start()
    old_id = wait_until(lambda: _static_members(kafka, unique_group).get("fence-me"), 20,
                        "the first static probe in the group")
    second = ProbeThread(kafka, unique_group, instance_id="fence-me").start()
    try:
        second.wait_event(lambda e: e["event"] == "assignment"
                          and e["member_id"] == second.member_id, 20, "the second probe synced")
        first.join(15)
        assert not first.is_alive(), "the fenced probe did not exit"
        assert result == [ExitCode.KAFKA_ERROR]
        err = env.stderr.getvalue()
        assert "FENCED_INSTANCE_ID (82)" in err
        assert "another member joined with the same group.instance.id" in err
        assert "fenced" in env.stdout.getvalue()
        # the fenced probe sent no LeaveGroup: the second one is still the member
        assert _static_members(kafka, unique_group) == {"fence-me": second.member_id}
        assert second.member_id != old_id
    finally:
        second.stop()
    assert describe(kafka, unique_group)["members"] == []
