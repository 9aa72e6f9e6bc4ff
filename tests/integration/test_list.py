"""`groupctl list` against the lab broker: a classic Stable group (real consumer), a classic
Empty group (offsets only), a KIP-848 consumer group; filters by state, type and regex;
output formats; agreement with ConsumerGroupCommand --list."""
from __future__ import annotations

import json
import re

import pytest
import yaml
from describe_support import cli, commit, produce, wait_until

pytestmark = pytest.mark.broker


@pytest.fixture
def three_groups(kafka, topic_factory, unique_group, consumer_factory):
    topic = topic_factory(2)
    produce(kafka.bootstrap, topic, {0: 2, 1: 2})
    names = {"empty": unique_group + "-a-empty", "classic": unique_group + "-b-classic",
             "consumer": unique_group + "-c-consumer"}
    commit(kafka.bootstrap, names["empty"], {(topic, 0): 1})
    consumer_factory(names["classic"], topic).wait_assigned(count=2)
    consumer_factory(names["consumer"], topic, protocol="consumer").wait_assigned(count=2)
    prefix = "^" + re.escape(unique_group)

    def stable():  # the consumer group reaches Stable once its member acknowledged
        code, out, _ = cli(kafka, "-o", "json", "list", "--regex", prefix, "--state", "Stable")
        return code == 0 and len(json.loads(out)) == 2
    wait_until(stable, 30, "both live groups Stable")
    return names, prefix


def _list(kafka, *args):
    code, out, err = cli(kafka, "-o", "json", "list", *args)
    assert code == 0, err
    return json.loads(out)


def test_list_shows_state_type_and_protocol_type(kafka, three_groups):
    names, prefix = three_groups
    assert _list(kafka, "--regex", prefix) == [
        {"group": names["empty"], "state": "Empty", "type": "classic", "protocol_type": None},
        {"group": names["classic"], "state": "Stable", "type": "classic", "protocol_type": "consumer"},
        {"group": names["consumer"], "state": "Stable", "type": "consumer", "protocol_type": "consumer"},
    ]


def test_list_filters(kafka, three_groups):
    names, prefix = three_groups

    def groups(*a: str) -> list[str]:
        return [g["group"] for g in _list(kafka, "--regex", prefix, *a)]

    assert groups("--state", "stable") == [names["classic"], names["consumer"]]
    assert groups("--state", "Empty,Stable") == [names["empty"], names["classic"], names["consumer"]]
    assert groups("--state", "Empty", "--state", "PreparingRebalance") == [names["empty"]]
    assert groups("--type", "consumer") == [names["consumer"]]
    assert groups("--type", "CLASSIC") == [names["empty"], names["classic"]]
    assert groups("--type", "classic", "--state", "Stable") == [names["classic"]]
    assert groups("--state", "Dead") == []
    assert [g["group"] for g in _list(kafka, "--regex", re.escape(names["consumer"]) + "$")] == [
        names["consumer"]]


def test_list_formats(kafka, three_groups):
    names, prefix = three_groups
    code, out, _ = cli(kafka, "-o", "yaml", "list", "--regex", prefix)
    assert code == 0 and [g["group"] for g in yaml.safe_load(out)] == list(names.values())
    code, out, _ = cli(kafka, "list", "--regex", prefix)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["GROUP", "STATE", "TYPE", "PROTOCOL", "TYPE"]
    assert [ln.split() for ln in lines[1:]] == [
        [names["empty"], "Empty", "classic", "-"],
        [names["classic"], "Stable", "classic", "consumer"],
        [names["consumer"], "Stable", "consumer", "consumer"]]
    code, out, _ = cli(kafka, "-o", "wide", "list", "--regex", prefix)
    assert code == 0 and all(ln.split()[-1] == "1" for ln in out.splitlines()[1:])
    code, out, _ = cli(kafka, "list", "--regex", "^no-such-group-anywhere$")
    assert (code, out) == (0, "no groups\n")


def test_list_agrees_with_consumer_group_command(kafka, three_groups):
    names, prefix = three_groups
    proc = kafka.consumer_group_command("--list", "--state", "--type")
    assert proc.returncode == 0, proc.stderr
    theirs = {}
    for ln in proc.stdout.splitlines():
        cells = ln.split()
        if cells and cells[0] in names.values():
            theirs[cells[0]] = tuple(cells[1:])
    ours = {g["group"]: g for g in _list(kafka, "--regex", prefix)}
    assert set(theirs) == set(ours)
    for group, cells in theirs.items():
        assert {c.lower() for c in cells} == {ours[group]["type"].lower(), ours[group]["state"].lower()}


def test_bad_regex_is_a_usage_error(kafka):
    code, out, err = cli(kafka, "list", "--regex", "[")
    assert code == 2 and out == "" and "not a regular expression" in err


def _complete(bootstrap: str, typed: str):
    import os
    import subprocess
    import sys
    import time

    env = dict(os.environ, _GROUPCTL_COMPLETE="complete_bash",
               COMP_WORDS=f"groupctl -b {bootstrap} describe {typed}", COMP_CWORD="4")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "groupctl"], env=env, capture_output=True,
                          text=True, timeout=30, check=False)
    return proc, time.monotonic() - start


def test_group_names_complete_from_the_cluster(kafka, three_groups):
    names, _ = three_groups
    proc, _ = _complete(kafka.bootstrap, names["classic"][:-3])
    assert proc.returncode == 0 and proc.stdout.split() == [names["classic"]]
    prefix = names["empty"].rsplit("-", 2)[0]
    proc, _ = _complete(kafka.bootstrap, prefix)
    assert proc.stdout.split() == list(names.values())


def test_group_completion_is_quiet_and_quick_without_a_broker():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc, seconds = _complete(f"127.0.0.1:{port}", "g")
    assert (proc.returncode, proc.stdout.strip(), proc.stderr) == (0, "", "")
    assert seconds < 5  # a 1.5 s budget plus interpreter start


def test_three_brokers_list_merges_and_describe_batches_per_coordinator(kafka3, topic_factory,
                                                                         unique_group):
    """Groups spread over three coordinators: `list` asks every broker and merges; `describe
    --all` sends one DescribeGroups and one OffsetFetch per coordinator, and each group's
    coordinator is the broker that leads its __consumer_offsets partition."""
    topic = topic_factory(3, cluster=kafka3, replication=3)
    produce(kafka3.bootstrap, topic, {0: 5, 1: 5, 2: 5})
    groups = [f"{unique_group}-{i:02d}" for i in range(12)]
    for i, g in enumerate(groups):
        commit(kafka3.bootstrap, g, {(topic, i % 3): i % 6})
    prefix = "^" + re.escape(unique_group)
    listed = _list(kafka3, "--regex", prefix)
    assert [g["group"] for g in listed] == groups
    assert all((g["state"], g["type"]) == ("Empty", "classic") for g in listed)

    code, out, err = cli(kafka3, "--debug", "-o", "json", "describe", "--all", "--regex", prefix)
    assert code == 0
    described = json.loads(out)
    assert [g["group"] for g in described] == groups
    for i, g in enumerate(described):
        assert [(r["topic"], r["partition"], r["committed"], r["log_end"], r["lag"])
                for r in g["offsets"]] == [(topic, i % 3, i % 6, 5, 5 - i % 6)]
    coordinators = {g["coordinator"]["id"] for g in described}
    assert len(coordinators) > 1
    trace = err.splitlines()
    for api in ("DescribeGroups", "OffsetFetch"):
        nodes = [int(m) for ln in trace for m in re.findall(rf"trace: {api} v\d+ #\d+ node (\d+) ", ln)]
        assert sorted(nodes) == sorted(coordinators), (api, nodes)
    leaders = _offsets_leaders(kafka3)
    assert all(leaders[g["coordinator_partition"]] == g["coordinator"]["id"] for g in described)


def _offsets_leaders(lab) -> dict[int, int]:
    """{__consumer_offsets partition: leader id}, from librdkafka's metadata."""
    from confluent_kafka.admin import AdminClient

    md = AdminClient({"bootstrap.servers": lab.bootstrap}).list_topics("__consumer_offsets", timeout=10)
    return {p: info.leader for p, info in md.topics["__consumer_offsets"].partitions.items()}
