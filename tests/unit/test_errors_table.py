"""The error table (groupctl.protocol.errors) against Kafka's own Errors enum.

Ground truth comes from the kafka-clients jar (groupctl.lab.dist.kafka_libs()): a tiny
Java program, run in single-file source mode against the jars' classpath, prints code,
name, retriable (the exception extends RetriableException) and Kafka's message for every
Errors value. No jar or no
`java` is a failure, not a skip: the table is only trustworthy while this test runs.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from groupctl.errors import KafkaError
from groupctl.protocol.errors import ERRORS, KafkaErrorInfo, _TABLE, error_by_name, error_for

LIST_ERRORS_JAVA = """
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.protocol.Errors;

public class ListErrors {
    public static void main(String[] args) {
        for (Errors e : Errors.values()) {
            boolean retriable = e.exception() instanceof RetriableException;
            String message = e.exception() == null ? "" : e.message().replace('\\t', ' ').replace('\\n', ' ');
            System.out.println(e.code() + "\\t" + e.name() + "\\t" + retriable + "\\t" + message);
        }
    }
}
"""

# Codes the group coordinator and the probe deal with: each must say what groupctl does.
GROUP_CODES = (14, 15, 16, 22, 23, 24, 25, 26, 27, 29, 30, 33, 34, 35, 42, 58, 68, 69, 79,
               81, 82, 88, 110, 111, 112, 113, 128, 129)


@pytest.fixture(scope="module")
def jar_errors(tmp_path_factory) -> dict[int, tuple[str, bool, str]]:
    from groupctl.errors import LabError
    from groupctl.lab.dist import classpath, java_cmd, kafka_libs

    try:
        libs = kafka_libs()
        java = java_cmd()
    except LabError as exc:
        pytest.fail(f"cannot check the error table against the kafka-clients jar: {exc}")
    if not sorted(Path(libs).glob("kafka-clients-*.jar")):
        pytest.fail(f"no kafka-clients jar in {libs}: the error table cannot be checked")
    src = tmp_path_factory.mktemp("java") / "ListErrors.java"
    src.write_text(LIST_ERRORS_JAVA)
    proc = subprocess.run([java, "-cp", classpath(libs), str(src)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"ListErrors.java failed ({proc.returncode}): {proc.stderr[-2000:]}")
    out = {}
    for line in proc.stdout.splitlines():
        code, name, retriable, message = line.split("\t", 3)
        out[int(code)] = (name, retriable == "true", message)
    assert len(out) > 100, proc.stdout[:500]
    return out


def test_every_jar_code_is_in_the_table_with_the_same_name(jar_errors):
    missing = {c: n for c, (n, _, _) in jar_errors.items() if c not in ERRORS}
    assert not missing, f"codes in the jar but not in the table: {missing}"
    renamed = {c: (ERRORS[c].name, n) for c, (n, _, _) in jar_errors.items() if ERRORS[c].name != n}
    assert not renamed, f"(ours, Kafka's) names differ: {renamed}"


def test_retriable_matches_kafkas_exception_hierarchy(jar_errors):
    wrong = {c: (ERRORS[c].name, r) for c, (_, r, _) in jar_errors.items() if ERRORS[c].retriable != r}
    assert not wrong, f"retriable differs from Kafka (code: name, Kafka's value): {wrong}"


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def test_meanings_are_our_own_words(jar_errors):
    copied = [ERRORS[c].name for c, (_, _, msg) in jar_errors.items()
              if msg and _norm(ERRORS[c].meaning) == _norm(msg)]
    assert not copied, f"meaning copied from Kafka's message: {copied}"


def test_table_is_well_formed():
    assert len(_TABLE) == len(ERRORS) == len({e.name for e in _TABLE}), "duplicate code or name"
    assert [e.code for e in _TABLE] == sorted(e.code for e in _TABLE)
    for e in _TABLE:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", e.name), e
        assert e.meaning and "\n" not in e.meaning and e.meaning.endswith("."), e
        assert "\n" not in e.action, e
    assert ERRORS[0].name == "NONE" and ERRORS[-1].name == "UNKNOWN_SERVER_ERROR"


@pytest.mark.parametrize("code", GROUP_CODES)
def test_group_coordination_codes_say_what_groupctl_does(code):
    assert ERRORS[code].action, f"{ERRORS[code].name} has no action"


@pytest.mark.parametrize("code, words", [
    (27, "rejoin"), (15, "rediscover the coordinator"), (16, "rediscover the coordinator"),
    (79, "rejoin at once with the given member id"), (82, "fatal"), (23, "fatal"),
    (26, "fatal"), (30, "fatal"), (25, "rejoin"), (22, "rejoin"), (110, "rejoins with member epoch 0"),
    (113, "rejoins with member epoch 0"), (111, "fatal"), (112, "fatal"), (128, "fatal"),
    (69, "exit 5"), (14, "back off"),
])
def test_actions_follow_the_java_client(code, words):
    assert words in ERRORS[code].action


def test_kafka_facts_retriable_group_codes():
    assert [c for c in (14, 15, 16, 88) if not ERRORS[c].retriable] == []
    assert not ERRORS[27].retriable  # a rejoin, not a resend


def test_error_for_unknown_code_still_usable():
    info = error_for(31000)
    assert info == KafkaErrorInfo(31000, "UNKNOWN_ERROR_31000", False, info.meaning)
    assert error_for(27) is ERRORS[27]


def test_error_by_name_is_forgiving_about_case_and_dashes():
    assert error_by_name("REBALANCE_IN_PROGRESS") is ERRORS[27]
    assert error_by_name("rebalance-in-progress") is ERRORS[27]
    assert error_by_name(" fenced_instance_id ") is ERRORS[82]
    assert error_by_name("NO_SUCH_THING") is None


def test_to_dict_shape():
    assert ERRORS[79].to_dict() == {
        "code": 79, "name": "MEMBER_ID_REQUIRED", "retriable": False,
        "meaning": ERRORS[79].meaning, "action": "rejoin at once with the given member id"}
    assert ERRORS[1].to_dict()["action"] is None  # unknown values are null, never ""


def test_kafka_error_names_code_and_name():
    exc = KafkaError("JoinGroup", 82, "instance id i-1")
    assert str(exc) == "JoinGroup failed: FENCED_INSTANCE_ID (82): instance id i-1"
    assert exc.retriable is False
    assert KafkaError("FindCoordinator", 15).retriable is True
