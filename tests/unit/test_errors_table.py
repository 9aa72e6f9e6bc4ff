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

from groupctl.coordinator.members.classic.types import REACTIONS as CLASSIC_REACTIONS
from groupctl.coordinator.members.consumer import ConsumerMember
from groupctl.coordinator.members.consumer.types import REACTIONS as CONSUMER_REACTIONS
from groupctl.coordinator.members.interface import Reaction
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
    from groupctl.lab.dist import java_cmd, kafka_libs
    from groupctl.lab.tools import classpath

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


# What each reaction of the members' REACTIONS tables does, as the action column must say
# it: per (protocol, reaction), phrases that must all appear, and words that must not.
DOES = {
    ("classic", Reaction.REJOIN): (("rejoin",), ("fatal", "exit")),
    ("classic", Reaction.RESET_GENERATION): (("resets its generation", "rejoin"), ("fatal", "exit")),
    ("classic", Reaction.RESET_MEMBER): (("drops its member id", "rejoin"), ("fatal", "exit")),
    ("consumer", Reaction.REJOIN): (("rejoin",), ("fatal", "exit")),
    ("consumer", Reaction.RESET_GENERATION): (("rejoins with member epoch 0",), ("fatal", "exit")),
    ("consumer", Reaction.RESET_MEMBER): (("rejoins with member epoch 0",), ("fatal", "exit")),
}
for _protocol in ("classic", "consumer"):
    DOES[(_protocol, Reaction.REDISCOVER)] = (("rediscover the coordinator", "retry"), ("fatal", "exit"))
    DOES[(_protocol, Reaction.RETRY)] = (("back off", "retry"), ("fatal", "exit"))
    DOES[(_protocol, Reaction.FATAL)] = ((), ("rejoin", "rediscover"))  # + "fatal" or "exit N"

TABLES = {"classic": CLASSIC_REACTIONS, "consumer": CONSUMER_REACTIONS}
TABLE_ROWS = [(protocol, code) for protocol, table in TABLES.items() for code in table]


@pytest.mark.parametrize("protocol, code", TABLE_ROWS)
def test_action_says_what_the_members_reaction_does(protocol, code):
    """Each row of a member's REACTIONS table (coordinator/*/types.py) against the error
    table's action for that code: change one without the other and this fails."""
    reaction = TABLES[protocol][code]
    action = ERRORS[code].action
    must, must_not = DOES[(protocol, reaction)]
    said = f"{ERRORS[code].name} ({protocol} member: {reaction.value}): action {action!r}"
    assert all(phrase in action for phrase in must), f"{said} should say {must}"
    if reaction is Reaction.FATAL:
        assert re.search(r"\bfatal\b|\bexit \d\b", action), f"{said} should say fatal or exit N"
    # words that describe another reaction, unless another table reacts that way to the code
    others = {TABLES[p][code] for p in TABLES if code in TABLES[p]} - {reaction}
    allowed = {w for o in others for w in DOES[(protocol, o)][0] + ("fatal", "exit")}
    wrong = [w for w in must_not if re.search(rf"\b{w}", action) and w not in allowed]
    assert not wrong, f"{said} says {wrong}"


def test_a_code_both_members_treat_differently_names_both():
    for code in set(CLASSIC_REACTIONS) & set(CONSUMER_REACTIONS):
        if CLASSIC_REACTIONS[code] != CONSUMER_REACTIONS[code]:
            action = ERRORS[code].action
            assert "classic" in action and "KIP-848" in action, (ERRORS[code].name, action)


# Codes no REACTIONS table holds: the members handle them as steps (MEMBER_ID_REQUIRED);
# their actions say so in these words.
@pytest.mark.parametrize("code, words", [
    (79, "rejoin at once with the given member id"),
])
def test_actions_outside_the_reaction_tables(code, words):
    assert code not in CLASSIC_REACTIONS and code not in CONSUMER_REACTIONS
    assert words in ERRORS[code].action


def test_group_id_not_found_says_what_commands_and_the_kip848_member_do():
    # the commands map it to "not found"; Kafka 4.4 answers a KIP-848 heartbeat with it
    action = ERRORS[69].action
    assert "exit 5" in action and CONSUMER_REACTIONS[69] is Reaction.FATAL
    assert "its leave: done" in action and 69 in ConsumerMember.LEAVE_GONE


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
