"""Every field `describe -o json` prints is named in the README's "Output fields" section
(the names are a stable interface: an undocumented one cannot be relied on, or renamed
safely). Built from groupctl's own model, so a new field fails here until documented."""
from __future__ import annotations

import re

from groupctl.cli import docs
from groupctl.observe.model import GroupDescription, Member, OffsetRow, TopicPartitions


def _output_fields_section() -> str:
    text = (docs.ROOT / "README.md").read_text(encoding="utf-8")
    return text.split("## Output fields", 1)[1].split("\n## ", 1)[0]


def _documented() -> set[str]:
    return set(re.findall(r"`([a-z_]+)(?:\[\])?`", _output_fields_section()))  # `members[]`


def test_every_describe_field_is_documented():
    member = Member("m-1", client_id="c", host="/h", member_epoch=3,
                    assignment=[TopicPartitions("t", [0, 1])],
                    target_assignment=[TopicPartitions("t", [0, 1])], member_protocol="consumer")
    group = GroupDescription("g", type="consumer", state="Reconciling", protocol="uniform",
                             group_epoch=4, assignment_epoch=4,
                             coordinator={"id": 1, "host": "h", "port": 1},
                             coordinator_partition=7, members=[member],
                             offsets=[OffsetRow("t", 0, 5, 9, "m-1")])
    data = group.to_dict()
    assert data["rebalancing"] is True and data["members"][0]["partitions"] == 2
    documented = _documented()
    assert set(data) - documented == set()
    assert set(data["members"][0]) - documented == set()
    assert set(data["offsets"][0]) - documented == set()
