"""`groupctl decode ...` and `groupctl errors`, run in-process through the real CLI entry
(groupctl.cli.app.invoke) with recorded streams, plus one real subprocess."""
from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from cli_runner import run_cli
from groupctl.protocol.consumer import (
    Assignment, StickyUserData, Subscription, TopicPartitions, encode_assignment,
    encode_sticky_user_data, encode_subscription,
)
from groupctl.protocol.errors import ERRORS

STICKY_UD = encode_sticky_user_data(StickyUserData([TopicPartitions("orders", [0, 1, 2, 5])], 4))
SUB = Subscription(3, ["orders", "payments"], STICKY_UD,
                   [TopicPartitions("orders", [0, 1, 2, 5])], 4, "rack-a")
SUB_HEX = encode_subscription(SUB).hex()
ASG = Assignment(3, [TopicPartitions("orders", [0, 1, 2, 5]), TopicPartitions("payments", [3])])
ASG_HEX = encode_assignment(ASG).hex()


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """These commands must never touch the network."""
    def refuse(*args, **kwargs):
        raise AssertionError("offline command opened a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def run(*args: str, stdin: str | None = None, stdin_is_terminal: bool = False):
    return run_cli(*args, stdin=stdin, terminal=stdin_is_terminal)


def assert_usage_error(code: int, out: str, err: str, *words: str) -> None:
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("groupctl: error: "), err
    assert "Traceback" not in err
    for w in words:
        assert w in lines[0], (w, lines[0])


def rows(table_text: str) -> dict[str, str]:
    """`key  value` lines of a field view -> {key: value} (keys may hold one space);
    indented (nested) keys come back as "> key"."""
    out = {}
    for line in table_text.splitlines()[1:]:
        nested = line.startswith("  ")
        key, _, value = line.strip().partition("  ")
        out[("> " if nested else "") + key.strip()] = value.strip()
    return out


# ---- decode subscription -----------------------------------------------------------------

EXPECTED_SUB = {
    "version": 3, "topics": ["orders", "payments"],
    "owned_partitions": [{"topic": "orders", "partitions": [0, 1, 2, 5]}],
    "generation": 4, "rack": "rack-a",
    "user_data": {"version": 1, "previous_assignment": [{"topic": "orders", "partitions": [0, 1, 2, 5]}],
                  "generation": 4},
}


def test_decode_subscription_json_with_assignor():
    code, out, err = run("decode", "subscription", SUB_HEX, "--assignor", "sticky", "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == EXPECTED_SUB


def test_decode_subscription_global_option_before_command_and_yaml():
    code, out, err = run("-o", "yaml", "decode", "subscription", SUB_HEX, "--assignor", "sticky")
    assert (code, err) == (0, "")
    assert yaml.safe_load(out) == EXPECTED_SUB


def test_decode_subscription_without_assignor_shows_user_data_hex():
    code, out, _ = run("decode", "subscription", SUB_HEX, "-o", "json")
    assert code == 0
    assert json.loads(out)["user_data"] == STICKY_UD.hex()


def test_decode_subscription_table():
    code, out, err = run("decode", "subscription", SUB_HEX)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "Subscription v3"
    r = rows(out)
    assert r["topics"] == "orders, payments"
    assert r["owned partitions"] == "orders:0-2,5"
    assert r["generation"] == "4"
    assert r["rack"] == "rack-a"
    assert r["user data"] == STICKY_UD.hex()
    assert all(line == line.rstrip() for line in out.splitlines())


def test_decode_subscription_table_decoded_user_data():
    code, out, _ = run("decode", "subscription", SUB_HEX, "--assignor", "sticky")
    r = rows(out)
    assert code == 0
    assert r["user data"] == "decoded:"
    assert r["> version"] == "1"
    assert r["> previous assignment"] == "orders:0-2,5"
    assert r["> generation"] == "4"


def test_decode_subscription_v0_unknowns_are_null_and_dashes():
    data = encode_subscription(Subscription(0, ["t"], None), 0).hex()
    code, out, _ = run("decode", "subscription", data, "-o", "json")
    assert code == 0
    assert json.loads(out) == {"version": 0, "topics": ["t"], "owned_partitions": None,
                               "generation": None, "rack": None, "user_data": None}
    code, out, _ = run("decode", "subscription", data)
    r = rows(out)
    assert (r["owned partitions"], r["generation"], r["rack"], r["user data"]) == ("-", "-", "-", "-")


def test_decode_reads_stdin_with_dash_and_when_absent():
    for args in (("decode", "subscription", "-"), ("decode", "subscription")):
        code, out, err = run(*args, "-o", "json", "--assignor", "sticky", stdin=SUB_HEX + "\n")
        assert (code, err) == (0, ""), args
        assert json.loads(out) == EXPECTED_SUB


def test_decode_hex_may_have_spaces_and_0x():
    spaced = "0x" + " ".join(SUB_HEX[i:i + 8] for i in range(0, len(SUB_HEX), 8))
    code, out, _ = run("decode", "subscription", spaced, "-o", "json", "--assignor", "sticky")
    assert code == 0 and json.loads(out) == EXPECTED_SUB


def test_decode_base64_standard_and_urlsafe():
    raw = encode_subscription(SUB)
    for text in (base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("=")):
        code, out, err = run("decode", "subscription", "--base64", text, "-o", "json",
                             "--assignor", "sticky")
        assert (code, err) == (0, ""), text
        assert json.loads(out) == EXPECTED_SUB


def test_decode_trailing_bytes_warn_and_are_kept():
    code, out, err = run("decode", "subscription", SUB_HEX + "beef", "-o", "json")
    assert code == 0
    assert err == "groupctl: warning: 2 bytes after the end of the subscription, kept as 'trailing'\n"
    assert json.loads(out)["trailing"] == "beef"
    code, out, _ = run("decode", "subscription", SUB_HEX + "beef")
    assert rows(out)["trailing"] == "beef (2 bytes)"


def test_decode_newer_version_warns_and_reports_it():
    code, out, err = run("decode", "subscription", "0009" + SUB_HEX[4:], "-o", "json")
    assert code == 0
    assert err == ("groupctl: warning: subscription version 9 is newer than groupctl knows; "
                   "read with the v3 layout\n")
    assert json.loads(out)["version"] == 9
    assert json.loads(out)["topics"] == ["orders", "payments"]


# ---- decode assignment / sticky-userdata -------------------------------------------------

def test_decode_assignment_json_and_table():
    code, out, err = run("decode", "assignment", ASG_HEX, "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == {"version": 3, "user_data": None, "assigned_partitions": [
        {"topic": "orders", "partitions": [0, 1, 2, 5]}, {"topic": "payments", "partitions": [3]}]}
    code, out, _ = run("decode", "assignment", ASG_HEX)
    assert out.splitlines()[0] == "Assignment v3"
    r = rows(out)
    assert (r["assigned"], r["partitions"], r["user data"]) == ("orders:0-2,5 payments:3", "5", "-")


def test_decode_assignment_assignor_option_only_warns_when_it_matters():
    code, _, err = run("decode", "assignment", ASG_HEX, "--assignor", "sticky", "-o", "json")
    assert (code, err) == (0, "")
    with_ud = encode_assignment(Assignment(3, [], b"\x01")).hex()
    code, out, err = run("decode", "assignment", with_ud, "--assignor", "sticky", "-o", "json")
    assert code == 0 and json.loads(out)["user_data"] == "01"
    assert err.startswith("groupctl: warning: --assignor does not change")


def test_decode_sticky_userdata_v1_v0_and_cooperative():
    v1 = STICKY_UD.hex()
    code, out, _ = run("decode", "sticky-userdata", v1, "-o", "json")
    assert code == 0
    assert json.loads(out) == {"assignor": "sticky", "version": 1, "generation": 4,
                               "previous_assignment": [{"topic": "orders", "partitions": [0, 1, 2, 5]}]}
    v0 = encode_sticky_user_data(StickyUserData([TopicPartitions("t", [7])])).hex()
    code, out, _ = run("decode", "sticky-userdata", v0)
    assert out.splitlines()[0] == "sticky user data v0"
    assert rows(out) == {"previous assignment": "t:7", "generation": "-"}
    code, out, _ = run("decode", "sticky-userdata", "00000009", "--assignor", "cooperative-sticky",
                       "-o", "json")
    assert code == 0 and json.loads(out) == {"assignor": "cooperative-sticky", "generation": 9}


# ---- decode: error paths -----------------------------------------------------------------

@pytest.mark.parametrize("args, words", [
    (("decode", "assignment", "ZZ"), ("not hex", "'ZZ'")),
    (("decode", "assignment", "abc"), ("odd number of hex digits",)),
    (("decode", "assignment", "0003"), ("cannot decode assignment",)),
    (("decode", "subscription", "ffff0000"), ("cannot decode subscription", "negative")),
    (("decode", "subscription", "0003" + "00000001" + "ffff" + "ffffffff"), ("cannot decode",)),
    (("decode", "subscription", "--base64", "!!notbase64!!"), ("not base64",)),
    (("decode", "sticky-userdata", "0000"), ("cannot decode sticky user data",)),
    (("decode", "sticky-userdata", "00000001", "--assignor", "range"), ("--assignor must be",)),
    (("decode", "assignment", "   "), ("empty",)),
])
def test_decode_errors_are_one_line_exit_2(args, words):
    assert_usage_error(*run(*args), *words)


def test_decode_without_input_on_a_terminal_does_not_hang():
    assert_usage_error(*run("decode", "assignment", stdin="", stdin_is_terminal=True), "no input")
    assert_usage_error(*run("decode", "assignment"), "no input")  # no stdin at all


def test_decode_empty_stdin():
    assert_usage_error(*run("decode", "assignment", "-", stdin=""), "empty")


def test_decode_long_bad_input_is_shortened_in_the_message():
    code, out, err = run("decode", "assignment", "Q" * 500)
    assert_usage_error(code, out, err, "not hex")
    assert len(err) < 200


# ---- errors --------------------------------------------------------------------------------

def test_errors_all_json():
    code, out, err = run("errors", "-o", "json")
    assert (code, err) == (0, "")
    data = json.loads(out)
    assert len(data) == len(ERRORS)
    assert [e["code"] for e in data] == sorted(ERRORS)
    assert all(set(e) == {"code", "name", "retriable", "meaning", "action"} for e in data)
    by_code = {e["code"]: e for e in data}
    assert by_code[79] == {"code": 79, "name": "MEMBER_ID_REQUIRED", "retriable": False,
                           "meaning": ERRORS[79].meaning,
                           "action": "rejoin at once with the given member id"}
    assert by_code[15]["retriable"] is True
    assert by_code[1]["action"] is None


@pytest.mark.parametrize("key", ["27", "REBALANCE_IN_PROGRESS", "rebalance_in_progress",
                                 "rebalance-in-progress"])
def test_errors_one_entry_by_code_or_name(key):
    code, out, err = run("errors", key, "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out) == [ERRORS[27].to_dict()]


def test_errors_negative_code_is_not_taken_for_an_option():
    code, out, err = run("errors", "-1", "-o", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)[0]["name"] == "UNKNOWN_SERVER_ERROR"


def test_errors_table_one_row_per_code_when_piped():
    code, out, err = run("errors")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["CODE", "NAME", "RETRIABLE", "MEANING", "GROUPCTL"]
    assert len(lines) == 1 + len(ERRORS)  # no wrapping into a pipe: grep-able
    row = next(line for line in lines if " FENCED_INSTANCE_ID " in line)
    assert row.split()[:3] == ["82", "FENCED_INSTANCE_ID", "no"]
    assert row.endswith("fatal: another member took this instance id")


def test_errors_yaml():
    code, out, _ = run("errors", "16", "-o", "yaml")
    assert code == 0
    assert yaml.safe_load(out) == [ERRORS[16].to_dict()]


@pytest.mark.parametrize("key, words", [
    ("9999", ("unknown Kafka error code 9999",)),
    ("-7", ("unknown Kafka error code -7",)),
    ("NOT_AN_ERROR", ("unknown Kafka error name 'NOT_AN_ERROR'",)),
    ("rebalance_in_progres", ("did you mean REBALANCE_IN_PROGRESS",)),
])
def test_errors_unknown_is_exit_2(key, words):
    assert_usage_error(*run("errors", key), *words)


# ---- the real executable -----------------------------------------------------------------

def test_subprocess_bad_hex_exits_2_with_one_stderr_line():
    exe = Path(sys.executable).with_name("groupctl")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "groupctl"]
    proc = subprocess.run(cmd + ["decode", "assignment", "ZZ"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert proc.stderr.startswith("groupctl: error: not hex")
