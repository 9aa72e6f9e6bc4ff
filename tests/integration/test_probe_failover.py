"""The probe on the three-broker lab: its coordinator stops, the probe finds the new one
(NOT_COORDINATOR / lost connection -> FindCoordinator) and stays a member of the group."""
from __future__ import annotations

import pytest
from probe_support import ProbeThread, member_ids, wait_until

pytestmark = [pytest.mark.broker, pytest.mark.cluster3, pytest.mark.slow]


def test_probe_follows_its_coordinator_to_another_broker(kafka3, topic_factory, unique_group,
                                                         consumer_factory):
    topic = topic_factory(3, cluster=kafka3, replication=3)
    c = consumer_factory(unique_group, topic, cluster=kafka3)
    c.wait_assigned(count=3)
    probe = ProbeThread(kafka3, unique_group).start()
    old = None
    try:
        probe.wait_rebalance(2)
        me = probe.member_id
        old = probe.probe.member.coordinator.node_id
        kafka3.stop_node(old)
        wait_until(lambda: probe.probe.member.coordinator is not None
                   and probe.probe.member.coordinator.node_id != old
                   and probe.probe.member.state.name == "STABLE", 60,
                   "the probe Stable with a new coordinator")
        errors = [e for e in probe.events if e["event"] == "probe"
                  and e["action"] in ("heartbeat_error", "rejoining")]
        assert errors, "the probe never noticed its coordinator stopping"
        wait_until(lambda: me in member_ids(kafka3, unique_group), 30,
                   "the probe listed by the new coordinator")
        assert probe.member_id == me  # the new coordinator loaded the group, member and all
    finally:
        probe.stop()
        if old is not None:
            kafka3.start_node(old)
    assert probe.error is None
    wait_until(lambda: probe.member_id not in member_ids(kafka3, unique_group), 10,
               "the probe gone after leaving")
