"""Issue 23's papercut: while force-rebalance waits for a classic group to be Stable again it
asks only the group's own type's describe API (DescribeGroups), not all four, through the
one describe source. Seen in groupctl's --debug protocol trace."""
from __future__ import annotations

import re

import pytest
from steer_support import cli

from groupctl.lab.consumer import wait_balanced

pytestmark = pytest.mark.broker

OTHER_TYPES = {"ConsumerGroupDescribe", "ShareGroupDescribe", "StreamsGroupDescribe"}


def test_waits_with_the_groups_own_describe_api_only(kafka, topic_factory, consumer_factory,
                                                     unique_group):
    topic = topic_factory(2)
    consumers = [consumer_factory(unique_group, topic) for _ in range(2)]
    wait_balanced(consumers, [(topic, 0), (topic, 1)])
    code, out, err = cli(kafka, "--debug", "force-rebalance", unique_group, "--yes")
    assert code == 0, err[-3000:]
    lines = err.splitlines()
    start = next(i for i, ln in enumerate(lines) if "force-rebalance: described" in ln)
    sent = [m.group(1) for ln in lines[start:]
            if (m := re.match(r"groupctl: trace: (\w+) v\d+ ", ln))]
    assert "DescribeGroups" in sent, sent
    assert not set(sent) & OTHER_TYPES, sorted(set(sent))
