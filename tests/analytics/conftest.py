"""Fixtures for the analyze tests: ONE local SparkSession for the whole pytest session
(starting a JVM costs seconds), the log fixtures under tests/fixtures/analyze/, and the
pipeline's result over all of them, computed once.

    spark           session: local[2], quiet, UTC
    fixture_dir     tests/fixtures/analyze (real Kafka 4.3 / client lines, 3.x lines
                    written from the 3.x format strings, damaged lines)
    fixture_inputs  Inputs over every fixture file (the mixed run)
    fixture_result  {table: rows} of that run (load.rows), plus "events" rows
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
                               str(FIXTURES / "kafka3-server.log.gz")],
                  client_logs=[str(FIXTURES / "java-consumer.log"),
                               str(FIXTURES / "rdkafka-consumer.log")],
                  events=[str(FIXTURES / "probe.ndjson"), str(FIXTURES / "probe-damaged.ndjson")])


@pytest.fixture(scope="session")
def fixture_result(spark, fixture_inputs):
    from groupctl.analytics import load
    from groupctl.analytics.pipeline import analyze

    tables = analyze(spark, fixture_inputs)
    result = {name: load.rows(df) for name, df in tables.named().items()}
    result["events"] = load.rows(tables.events)
    tables.release()
    return result
