"""The coordinator's record schemas (groupctl.protocol.records.schemas) against Kafka's own:
the JSON specs (common/message/*Key.json, *Value.json) inside the lab's
kafka-group-coordinator jar. Every record type the jar has must be ours and no other; key
and value field by field (names, order, types, versions, nullability, tags, defaults) with
the same checker as the client specs (test_conformance.compare_struct); value
validVersions and flexibleVersions. The jar is required: without it this FAILS, never skips.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from groupctl.protocol.records.schemas import RECORD_TYPES

try:  # tests/unit may or may not be a package
    from .test_conformance import compare_struct, parse_versions
except ImportError:
    from test_conformance import compare_struct, parse_versions

_SPECS: dict | str | None = None


def _fill_versions(fields) -> None:
    # Kafka's generator lets a tagged field leave out "versions" (StreamsGroupMetadataValue
    # .LastAssignmentConfigs): they are its taggedVersions.
    for f in fields:
        if "versions" not in f and "taggedVersions" in f:
            f["versions"] = f["taggedVersions"]
        _fill_versions(f.get("fields", ()))


def _read() -> dict:
    from groupctl.lab.dist import kafka_libs

    libs = Path(kafka_libs())
    jars = sorted(libs.glob("kafka-group-coordinator-[0-9]*.jar"))
    if not jars:
        raise FileNotFoundError(f"no kafka-group-coordinator-*.jar in {libs}")
    specs = {}
    with zipfile.ZipFile(jars[-1]) as zf:
        for name in zf.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                text = "\n".join(line for line in zf.read(name).decode().splitlines()
                                 if not line.lstrip().startswith("//"))
                spec = json.loads(text)
                _fill_versions(spec["fields"])
                for cs in spec.get("commonStructs", ()):
                    _fill_versions(cs["fields"])
                specs[Path(name).stem] = spec
    if not specs:
        raise FileNotFoundError(f"{jars[-1]} holds no common/message/*.json")
    return specs


def coordinator_specs() -> dict:
    """Read once; a missing jar is a failed test (in the test's body, never a skip)."""
    global _SPECS
    if _SPECS is None:
        try:
            _SPECS = _read()
        except Exception as exc:  # noqa: BLE001 - any failure to read the jar fails the test
            _SPECS = f"cannot read the kafka-group-coordinator jar's specs: {exc}"
    if isinstance(_SPECS, str):
        pytest.fail(_SPECS)
    return _SPECS


def _jar_types() -> dict[int, str]:
    return {s["apiKey"]: s["name"][:-3] for s in coordinator_specs().values()
            if s["type"] == "coordinator-key"}


def test_every_record_type_of_the_jar_and_no_other():
    assert {t: s.name for t, s in RECORD_TYPES.items()} == _jar_types()
    assert set(RECORD_TYPES) >= set(range(24)) - {9, 18}


# every type 0-23 is checked (the list is fixed so a type missing from ours fails by name)
@pytest.mark.parametrize("rtype", [t for t in range(24) if t not in (9, 18)])
@pytest.mark.parametrize("part", ["key", "value"])
def test_record_schema_matches_kafka(rtype, part):
    specs = coordinator_specs()
    ours = RECORD_TYPES.get(rtype)
    assert ours is not None, f"record type {rtype} is not in RECORD_TYPES"
    js = specs.get(f"{ours.name}{part.capitalize()}")
    assert js is not None, f"{ours.name}{part.capitalize()}.json is not in the jar"
    assert js["apiKey"] == rtype and js["type"] == f"coordinator-{part}"
    problems: list[str] = []
    lo, hi = parse_versions(js["validVersions"])
    flex = parse_versions(js["flexibleVersions"])
    if part == "value":
        if ours.value_versions != (lo, hi):
            problems.append(f"value versions {ours.value_versions} != Kafka's {js['validVersions']}")
        if ours.value_flexible_from != (flex[0] if flex else None):
            problems.append(f"flexible from {ours.value_flexible_from} != Kafka's "
                            f"{js['flexibleVersions']}")
    else:  # a key is read at version 0, never flexible
        assert (lo, hi, flex) == (0, 0, None), js["validVersions"]
    common = {cs["name"]: cs["fields"] for cs in js.get("commonStructs", [])}
    compare_struct(js["fields"], getattr(ours, part), common, js["name"], hi, problems)
    assert not problems, "\n".join(problems)


def test_checker_sees_a_changed_schema():
    """The comparison can fail: a value struct with a field dropped and one retyped."""
    from groupctl.protocol.schema import Field, Int64, Struct

    js = coordinator_specs()["ConsumerGroupMetadataValue"]
    bad = Struct(Field("epoch", Int64))
    problems: list[str] = []
    compare_struct(js["fields"], bad, {}, "ConsumerGroupMetadataValue", 0, problems)
    text = "\n".join(problems)
    assert "missing fields: ['metadata_hash']" in text and "epoch: type int64" in text, text
