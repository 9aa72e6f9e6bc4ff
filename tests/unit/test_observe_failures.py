"""How failed groups and brokers become one error and exit code (groupctl.cli.groups /
groupctl.observe.reads.listing), on plain results: nothing here talks to a broker."""
from __future__ import annotations

import io

import pytest

from groupctl.cli.env import Env
from groupctl.cli.groups import _raise_failures
from groupctl.client.errors import kafka_error
from groupctl.errors import UnreachableError
from groupctl.exitcodes import ExitCode
from groupctl.observe.reads.describe import DescribeResult
from groupctl.observe.reads.errors import PartialFailure, group_not_found
from groupctl.observe.reads.listing import ListResult, failures_error
from groupctl.observe.reads.model import GroupDescription


def _env():
    return Env(stdout=io.StringIO(), stderr=io.StringIO())


def test_one_unknown_group_raises_not_found():
    env = _env()
    with pytest.raises(Exception) as info:
        _raise_failures(env, None, DescribeResult([], {"x": group_not_found("x")}), all_=False)
    assert info.value.exit_code == ExitCode.NOT_FOUND and str(info.value) == "group 'x' not found"
    assert env.stderr.getvalue() == ""


def test_an_authorization_failure_keeps_exit_4():
    with pytest.raises(Exception) as info:
        _raise_failures(_env(), None, DescribeResult([], {"x": kafka_error("DescribeGroups", 30)}),
                        all_=False)
    assert info.value.exit_code == ExitCode.AUTH


def test_some_groups_described_is_a_partial_failure():
    env = _env()
    result = DescribeResult([GroupDescription("ok")], {"x": group_not_found("x"),
                                                        "y": kafka_error("OffsetFetch", 30)})
    with pytest.raises(PartialFailure) as info:
        _raise_failures(env, None, result, all_=False)
    assert info.value.exit_code == ExitCode.KAFKA_ERROR
    assert str(info.value) == "2 of 3 groups could not be described"
    assert env.stderr.getvalue().splitlines() == [
        "groupctl: error: group 'x' not found",
        "groupctl: error: OffsetFetch failed: GROUP_AUTHORIZATION_FAILED (30)"]


def test_all_ignores_groups_that_vanished_but_not_brokers_that_failed():
    env = _env()
    result = DescribeResult([GroupDescription("ok")], {"gone": group_not_found("gone")})
    _raise_failures(env, ListResult([], {}), result, all_=True)  # nothing raised
    listed = ListResult([], {2: UnreachableError("broker 2 is down")})
    with pytest.raises(PartialFailure, match="^some brokers could not list their groups$"):
        _raise_failures(env, listed, result, all_=True)
    assert "broker 2: broker 2 is down" in env.stderr.getvalue()


def test_list_failures_error():
    assert failures_error({}) is None
    err = failures_error({3: kafka_error("ListGroups", 15, "broker 3")})
    assert err.exit_code == ExitCode.KAFKA_ERROR
    assert str(err) == ("the list is incomplete: broker 3: ListGroups failed: "
                        "COORDINATOR_NOT_AVAILABLE (15): broker 3")
