"""Harness for `analyze`'s line patterns (groupctl/analytics/patterns.py), run as their
Python `re` twins the way the plain-Python peer (bench/analyze.py) and the Spark
extractor (extract.py) use them: the log4j header, the coordinator / client prefix, then
the first line pattern whose prefix and regex match; the reason's trigger member, the
member id's client and the reason's category.

Regexes document no error: a line matches or it does not. Crashes here are
  - an exception (a bad group number in a pattern's `fields`, say);
  - a line costing more than CPU_BUDGET seconds of CPU (catastrophic backtracking; the
    lines are at most max_len bytes, 4 KiB);
  - a twin that extracts something else than Spark would: Spark runs the patterns with
    java.util.regex, whose \\d \\w \\s are ASCII-only, while Python's `re` on str is
    Unicode-aware; the twin (compiled with patterns.PYTHON_FLAGS, as bench/analyze.py
    does) and the regex with re.ASCII must agree. (Before PYTHON_FLAGS existed the twins
    were plain re.compile: the harness found '\x1d=' in its first 3000 inputs.)
"""
from __future__ import annotations

import re
import time

from .registry import Crash, harness

CPU_BUDGET = 1.0  # seconds of CPU for one line of <= 4 KiB (a linear pass takes ~1 ms)

_COMPILED: dict = {}
_LINES = re.compile(r"\r\n|\r|\n")  # what Spark's text source splits on, not str.splitlines


def _twins(pattern: str):
    from groupctl.analytics.patterns import PYTHON_FLAGS

    pair = _COMPILED.get(pattern)
    if pair is None:
        pair = _COMPILED[pattern] = (re.compile(pattern, PYTHON_FLAGS),
                                     re.compile(pattern, re.ASCII))
    return pair


def _search(pattern: str, text: str):
    """re.search as Spark's rlike / regexp_extract do (find, not match); the Python twin
    (compiled as bench/analyze.py does, with patterns.PYTHON_FLAGS) and java.util.regex's
    classes (re.ASCII) must agree on whether and what they match."""
    twin_re, java_re = _twins(pattern)
    m, a = twin_re.search(text), java_re.search(text)
    if (m is None) != (a is None) or (m is not None and m.groups() != a.groups()):
        raise Crash(f"Python re and java.util.regex (ASCII classes) disagree on {pattern!r} "
                    f"for {text!r}: {m and m.groups()} vs {a and a.groups()}")
    return m


def _classify(msg: str, pats) -> None:
    for p in pats:
        if msg.startswith(p.prefix):
            m = _search(p.regex, msg)
            if m is not None:
                fields = {name: m.group(i) for name, i in p.fields.items()}
                for name in ("generation", "epoch", "members", "duration_ms"):
                    if fields.get(name) is not None:
                        int(fields[name])  # Spark casts these columns to numbers
                for name in ("reason", "member"):
                    if fields.get(name):
                        _reason(fields[name])
                return


def _reason(text: str) -> None:
    from groupctl.analytics import patterns as P

    _search(P.TRIGGER_MEMBER, text)
    _search(P.CLIENT_OF_MEMBER, text)
    for _, rx in P.REASON_KINDS:
        _search(rx, text)


def _broker(line: str) -> None:
    from groupctl.analytics import patterns as P

    m = _search(P.LOG4J_LINE, line)
    if m is None:
        _search(P.BROKER_TRUNCATED, line)
        return
    msg, logger = m.group(3), m.group(4)
    if _search(P.BROKER_LOGGERS, logger):
        pm = _search(P.BROKER_PREFIX, msg)
        if pm is not None:
            int(pm.group(1))
        _classify(msg[pm.end():] if pm else msg, P.BROKER_PATTERNS)


def _java(line: str) -> None:
    from groupctl.analytics import patterns as P

    m = _search(P.LOG4J_LINE, line)
    if m is None:
        _search(P.JAVA_TRUNCATED, line)
        _search(P.JAVA_MULTILINE, line)
        return
    msg = m.group(3)
    if _search(P.JAVA_LOGGERS, m.group(4)):
        pm = _search(P.JAVA_PREFIX, msg)
        _classify(msg[pm.end():] if pm else msg, P.JAVA_PATTERNS)


def _rdkafka(line: str) -> None:
    from groupctl.analytics import patterns as P

    m = _search(P.RDKAFKA_LINE, line)
    if m is not None and m.group(3) in P.RDKAFKA_FACILITIES:
        float(m.group(2))
        _search(r'Group "([^"]+)"', line)
        _classify(m.group(6), P.RDKAFKA_PATTERNS)


def _tokens() -> tuple[str, ...]:
    from groupctl.analytics import patterns as P

    prefixes = {p.prefix for p in (*P.BROKER_PATTERNS, *P.JAVA_PATTERNS, *P.RDKAFKA_PATTERNS)}
    return (*sorted(prefixes), "[2026-11-23 14:47:52,639] INFO ", " WARN ",
            "[GroupCoordinator id=1 topic=__consumer_offsets partition=33] ",
            "[GroupCoordinator 1]: ", "[Consumer clientId=c, groupId=g] ",
            " (org.apache.kafka.coordinator.group.GroupMetadataManager)",
            " (org.apache.kafka.clients.consumer.internals.ConsumerCoordinator)",
            "%7|1795439400.702|JOINGROUP|rdkafka#consumer-1| [thrd:main]: ", "Caused by",
            "\tat ", " (reason: ", ")", "Exception", "\u00a0", "\x1d", "١", "é", "\u2028")


@harness("patterns", documented=(), max_len=4096, smoke_runs=2000, dictionary=_tokens())
def line_patterns(data: bytes) -> None:
    """One log line through the broker, Java-client and librdkafka extraction steps
    (the analyzer reads files as UTF-8 with errors="replace")."""
    from groupctl.analytics import patterns as P

    started = time.thread_time()
    for line in _LINES.split(data.decode("utf-8", "replace")):
        _search(P.LOG4J_START, line)
        _search(P.CONTINUATION, line)
        _broker(line)
        _java(line)
        _rdkafka(line)
    spent = time.thread_time() - started
    if spent > CPU_BUDGET:
        raise Crash(f"{len(data)} bytes cost {spent:.2f} s of CPU (budget {CPU_BUDGET} s)")
