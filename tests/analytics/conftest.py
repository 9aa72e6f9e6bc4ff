"""Fixtures for the analyze tests: ONE local SparkSession for the whole pytest session
(starting a JVM costs seconds), the log fixtures under tests/fixtures/analyze/, and the
pipeline's result over all of them, computed once.

    spark           session: local[2], quiet, UTC
    fixture_dir     tests/fixtures/analyze (real Kafka 4.3 / client lines, 3.x lines
                    written from the 3.x format strings, damaged lines)
    fixture_inputs  Inputs over every fixture file (the mixed run)
    fixture_result  {table: rows} of that run (load.rows), plus "events" rows, and "ready":
                    (name, the same table as returned, phases done) per table handed early
"""
from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "analyze"


@pytest.fixture(scope="session")
def spark():
    from groupctl.analytics.session import build_session

    session = build_session("local[2]")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def fixture_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def fixture_inputs():
    from groupctl.analytics.pipeline import Inputs

    return Inputs(broker_logs=[str(FIXTURES / "kafka4-server.log"),
                               str(FIXTURES / "kafka3-server.log.gz"),
                               str(FIXTURES / "kafka4-groups-server.log")],
                  client_logs=[str(FIXTURES / "java-consumer.log"),
                               str(FIXTURES / "rdkafka-consumer.log"),
                               str(FIXTURES / "java848-consumer.log")],
                  events=[str(FIXTURES / "probe.ndjson"), str(FIXTURES / "probe-damaged.ndjson")])


@pytest.fixture(scope="session")
def fixture_result(spark, fixture_inputs):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import Phases, analyze

    phases, handed = Phases(), []

    def ready(name, table):   # what the CLI's TableWriter gets early, and when
        handed.append((name, table, [done[0] for done in phases.done]))

    tables = analyze(spark, fixture_inputs, phases=phases, ready=ready)
    result = {name: load.rows(df) for name, df in tables.named().items()}
    result["events"] = load.rows(tables.events)
    result["ready"] = [(name, table is tables.planned[name], done)
                       for name, table, done in handed]
    tables.release()
    return result
