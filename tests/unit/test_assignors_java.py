"""Differential tests: groupctl's assignor ports against the Java client's assignors.

Hypothesis draws group shapes (1-8 members, 1-5 topics, 1-12 partitions, plus a few
groups of 9-40 members; varied subscriptions, static members, racks, previous assignments
with churn for the sticky assignors).  Each test runs all its cases through our port and,
in one batch, through tests/java/AssignorHarness.java (one JVM for the whole module) on
the Kafka jars.  The outputs must be identical: same partitions for every member.

Java and the kafka-clients jar are required: the tests fail (never skip) without them.
Jars come from $GROUPCTL_KAFKA_LIBS, else groupctl.lab.dist.kafka_libs() (the lab's
Maven-resolved cache).  $GROUPCTL_ASSIGNOR_SEED fixes the random seed; $GROUPCTL_ASSIGNOR_CASES
scales the number of cases per test.
"""
from __future__ import annotations

import os
import random
import shutil
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from groupctl.coordinator.assignors import (
    ASSIGNORS,
    AssignmentError,
    MemberSubscription,
)
from groupctl.coordinator.assignors._java import JavaHashSet, hash_order, tp_hash

try:  # shared strategies; tests/unit may or may not be a package
    from .test_assignors import (
        ID_CHARS,
        TOPICS,
        as_dict,
        group_shape,
        racked,
        sticky_group,
    )
except ImportError:
    from test_assignors import (  # type: ignore
        ID_CHARS,
        TOPICS,
        as_dict,
        group_shape,
        racked,
        sticky_group,
    )

HARNESS = Path(__file__).resolve().parents[1] / "java" / "AssignorHarness.java"
SEED = int(os.environ.get("GROUPCTL_ASSIGNOR_SEED", random.randrange(1 << 32)))
SCALE = float(os.environ.get("GROUPCTL_ASSIGNOR_CASES", "1"))



# ---------------------------------------------------------------- the Java side

def _kafka_libs() -> Path:
    if os.environ.get("GROUPCTL_KAFKA_LIBS"):
        return Path(os.environ["GROUPCTL_KAFKA_LIBS"])
    try:
        from groupctl.lab.dist import kafka_libs
    except ImportError:
        return Path("/tmp/kpom/libs")
    try:
        return Path(kafka_libs())
    except Exception as exc:  # noqa: BLE001 - any failure to get the jars fails the tests
        pytest.fail(f"cannot get the Kafka jars ({exc}); set GROUPCTL_KAFKA_LIBS to a libs directory")


class JavaHarness:
    """One long-lived JVM running AssignorHarness; ``run`` sends a batch and parses the answers."""

    def __init__(self, cmd: list[str]):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.batches = 0

    def run(self, lines: Iterable[str]) -> dict[str, Any]:
        self.batches += 1
        token = f"batch{self.batches}"
        payload = "\n".join([*lines, f"sync {token}", ""])
        writer = threading.Thread(target=self._write, args=(payload,), daemon=True)
        writer.start()
        output = []
        for line in self.proc.stdout:
            if line.split() == ["synced", token]:
                break
            output.append(line)
        else:
            raise AssertionError(f"harness died ({self.proc.wait()}):\n{self.proc.stderr.read()[-4000:]}")
        writer.join()
        return parse_output(output)

    def _write(self, payload: str) -> None:
        try:
            self.proc.stdin.write(payload)
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def java() -> Iterable[JavaHarness]:
    binary = shutil.which("java")
    if binary is None:
        pytest.fail("java is not on PATH: the assignor differential tests need Java 17+")
    libs = _kafka_libs()
    if not list(libs.glob("kafka-clients-*.jar")):
        pytest.fail(f"no kafka-clients jar in {libs}: set GROUPCTL_KAFKA_LIBS")
    harness = JavaHarness([binary, "-Dlog4j2.level=OFF", "-cp", f"{libs}/*", str(HARNESS)])
    yield harness
    harness.close()


def _enc(text: str | None) -> str:
    return "-" if text is None else "x" + text.encode("utf-8").hex()


def _dec(token: str) -> str:
    return bytes.fromhex(token[1:]).decode("utf-8")


def parse_output(lines: Iterable[str]) -> dict[str, Any]:
    """{case id: assignment dict | AssignmentError | user data bytes | order list}."""
    results: dict[str, Any] = {}
    current: dict[str, dict[str, list[int]]] | None = None
    for line in lines:
        tokens = line.split()
        if not tokens:
            continue
        kind = tokens[0]
        if kind == "result":
            current = results.setdefault(tokens[1], {})
        elif kind == "m" and current is not None:
            topics = current.setdefault(_dec(tokens[1]), {})
            if len(tokens) > 2:
                topics[_dec(tokens[2])] = [int(p) for p in tokens[3:]]
        elif kind == "end":
            current = None
        elif kind == "error":
            results[tokens[1]] = AssignmentError(_dec(tokens[2]))
        elif kind == "userdata":
            results[tokens[1]] = None if tokens[2] == "-" else bytes.fromhex(tokens[2][1:])
        elif kind == "order":
            results[tokens[1]] = tokens[2:]
    return results


def case_lines(case_id: str, assignor: str, counts: dict[str, int], members: list[MemberSubscription],
               racks: dict[tuple[str, int], set[str]] | None) -> Iterable[str]:
    yield f"case {case_id} {assignor}"
    for topic, count in counts.items():
        yield f"topic {_enc(topic)} {count}"
    for (topic, partition), rs in (racks or {}).items():
        yield " ".join([f"racks {_enc(topic)} {partition}", *(_enc(r) for r in sorted(rs))])
    for m in members:
        data = "-" if m.user_data is None else "x" + m.user_data.hex()
        yield f"member {_enc(m.member_id)} {_enc(m.group_instance_id)} {_enc(m.rack)} {m.generation} {data}"
        yield from (f"sub {_enc(t)}" for t in m.topics)
        yield from (f"own {_enc(t)} {p}" for t, ps in m.owned_partitions.items() for p in ps)
    yield "run"


# ---------------------------------------------------------------- the comparison

def _collect(strategy, count: int) -> list:
    cases: list = []

    @seed(SEED)
    @settings(max_examples=max(1, int(count * SCALE)), database=None, deadline=None,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def draw_case(case):
        cases.append(case)

    draw_case()
    return cases


def _ours(assignor: str, counts, members, racks):
    try:
        return ASSIGNORS[assignor].assign(counts, members, racks)
    except AssignmentError as exc:
        return exc


def _same(ours, theirs) -> bool:
    if isinstance(ours, AssignmentError) or isinstance(theirs, AssignmentError):
        return isinstance(ours, AssignmentError) and isinstance(theirs, AssignmentError)
    return ours == theirs


def compare_with_java(java, assignor: str, cases: list) -> int:
    lines: list[str] = []
    for i, (counts, members, racks) in enumerate(cases):
        lines.extend(case_lines(str(i), assignor, counts, members, racks))
    theirs = java.run(lines)
    mismatches = []
    for i, (counts, members, racks) in enumerate(cases):
        ours = _ours(assignor, counts, members, racks)
        if not _same(ours, theirs.get(str(i))):
            mismatches.append((sum(counts.values()) + len(members), i, counts, members, racks, ours,
                               theirs.get(str(i))))
    if mismatches:
        _, i, counts, members, racks, ours, theirs = min(mismatches, key=lambda m: m[:2])
        pytest.fail(f"{assignor}: {len(mismatches)}/{len(cases)} cases differ from Java (seed {SEED}); "
                    f"smallest:\ncounts={counts}\nracks={racks}\nmembers={members}\n"
                    f"ours={ours}\njava={theirs}")
    return len(cases)


@pytest.mark.parametrize("assignor", ["range", "roundrobin"])
def test_eager_assignors_match_java(java, assignor):
    shapes = _collect(group_shape(), 300)
    compare_with_java(java, assignor, [(c, m, None) for c, m in shapes])


def test_range_rack_aware_matches_java(java):
    cases = _collect(group_shape().flatmap(racked), 300)
    compare_with_java(java, "range", cases)


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
def test_sticky_assignors_fresh_group_match_java(java, assignor):
    shapes = _collect(group_shape(), 200)
    compare_with_java(java, assignor, [(c, m, None) for c, m in shapes])


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
def test_sticky_assignors_with_previous_assignment_match_java(java, assignor):
    cases = _collect(sticky_group(assignor == "cooperative-sticky", invalid=True), 400)
    compare_with_java(java, assignor, cases)


@pytest.mark.parametrize("assignor", ["sticky", "cooperative-sticky"])
def test_sticky_assignors_rack_aware_match_java(java, assignor):
    cases = _collect(sticky_group(assignor == "cooperative-sticky", with_racks=True, invalid=True), 200)
    compare_with_java(java, assignor, cases)


LARGE = group_shape(members=(9, 40), topics=8, partitions=40)


@pytest.mark.parametrize("assignor", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_large_groups_match_java(java, assignor):
    """Bigger groups: the member HashMap resizes past 12 members, quotas get larger."""
    if assignor in ("range", "roundrobin"):
        cases = [(c, m, None) for c, m in _collect(LARGE, 40)]
    else:
        cases = _collect(sticky_group(assignor == "cooperative-sticky", shape=LARGE), 60)
    compare_with_java(java, assignor, cases)


def test_user_data_matches_java(java):
    partitions = st.lists(st.tuples(st.sampled_from(TOPICS), st.integers(0, 11)), unique=True, max_size=20)
    cases = _collect(st.tuples(st.sampled_from(["sticky", "cooperative-sticky", "range", "roundrobin"]),
                               partitions, st.integers(-1, 1000)), 200)
    lines = []
    for i, (assignor, parts, gen) in enumerate(cases):
        lines.append(f"userdata {i} {assignor} {gen}")
        lines.extend(f"part {_enc(t)} {p}" for t, p in parts)
        lines.append("run")
    theirs = java.run(lines)
    for i, (assignor, parts, gen) in enumerate(cases):
        assert ASSIGNORS[assignor].user_data(as_dict(parts), gen) == theirs[str(i)], (assignor, parts, gen)


def test_hash_orders_match_java(java):
    keys = _collect(st.lists(st.text(ID_CHARS, min_size=0, max_size=8), max_size=120), 60)
    ops = _collect(st.lists(st.tuples(st.booleans(), st.sampled_from(TOPICS), st.integers(0, 40)),
                            max_size=150), 60)
    lines = []
    for i, ks in enumerate(keys):
        lines += [f"hashorder k{i}", *(f"key {_enc(k)}" for k in ks), "run"]
    for i, seq in enumerate(ops):
        lines += [f"tpset s{i}", *(f"{'add' if a else 'del'} {_enc(t)} {p}" for a, t, p in seq), "run"]
    theirs = java.run(lines)
    for i, ks in enumerate(keys):
        assert [_enc(k) for k in hash_order(ks)] == theirs[f"k{i}"], ks
    for i, seq in enumerate(ops):
        table: JavaHashSet = JavaHashSet(tp_hash)
        for add, t, p in seq:
            table.add((t, p)) if add else table.discard((t, p))
        assert [f"{_enc(t)}/{p}" for t, p in table] == theirs[f"s{i}"], seq
