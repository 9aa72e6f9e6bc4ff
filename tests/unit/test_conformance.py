"""Our message specs against Kafka's own: the JSON message definitions inside the
kafka-clients jar the lab runs (groupctl.lab.dist.kafka_libs()). The specs are generated
from that JSON (tools/gen_codecs.py; test_codecs_current.py checks they are current): this
is the generator's translation checked by a comparison of its own.

For the request and response of every API in groupctl.protocol.messages.APIS this checks
validVersions, flexibleVersions, and field by field (recursing into struct arrays, struct
fields and "commonStructs"): name (snake_case of the JSON name), wire order, type, version
range, nullable versions, tag and tagged versions, and default; and that ours has no field
Kafka does not. The jar is required: without it this test fails, it never skips.
"""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from groupctl.protocol.messages import APIS
from groupctl.protocol.spec import Array, Field, Struct, Type
from groupctl.protocol.types import ZERO_UUID
from groupctl.protocol.jsonspec import parse_versions, snake

# The APIs groupctl speaks, by key, with the JSON file name stem Kafka uses.
EXPECTED_APIS = {
    1: "Fetch", 2: "ListOffsets", 3: "Metadata", 9: "OffsetFetch", 10: "FindCoordinator",
    11: "JoinGroup", 12: "Heartbeat", 13: "LeaveGroup", 14: "SyncGroup",
    15: "DescribeGroups", 16: "ListGroups", 17: "SaslHandshake", 18: "ApiVersions",
    36: "SaslAuthenticate", 68: "ConsumerGroupHeartbeat", 69: "ConsumerGroupDescribe",
    77: "ShareGroupDescribe", 89: "StreamsGroupDescribe", 90: "DescribeShareGroupOffsets",
}

PRIMITIVES = {"int8", "int16", "uint16", "int32", "int64", "float64", "bool", "string",
              "bytes", "uuid", "records"}


# ---- reading the jar ---------------------------------------------------------------------

class JarMissing(Exception):
    pass


def _clients_jar() -> Path:
    try:
        from groupctl.lab.dist import kafka_libs
    except ImportError as exc:  # pragma: no cover - dist.py is part of the project
        raise JarMissing(f"groupctl.lab.dist.kafka_libs is not importable: {exc}") from None
    try:
        libs = kafka_libs()
    except Exception as exc:  # noqa: BLE001 - any failure to resolve is a test failure
        raise JarMissing(f"cannot locate Kafka's jars with kafka_libs(): {exc}") from None
    jars = sorted(Path(libs).glob("kafka-clients-*.jar"))
    if not jars:
        raise JarMissing(f"no kafka-clients-*.jar in {libs}")
    return jars[-1]


def _read_specs() -> dict[str, dict]:
    jar = _clients_jar()
    specs = {}
    with zipfile.ZipFile(jar) as zf:
        for name in zf.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                text = zf.read(name).decode("utf-8")
                # The files carry a licence header and notes as `//` comment lines.
                text = "\n".join(line for line in text.splitlines()
                                 if not line.lstrip().startswith("//"))
                specs[Path(name).stem] = json.loads(text)
    if not specs:
        raise JarMissing(f"{jar} holds no common/message/*.json specs")
    return specs


_SPECS: dict | str | None = None  # the parsed specs, or why they could not be read


def kafka_specs() -> dict[str, dict]:
    """{"JoinGroupRequest": parsed JSON, ...} from common/message/ in the jar, read once.
    Called from each test's body (not a fixture), so a missing jar is a FAILED test, not
    an error, never a skip; and a failed resolution is not retried test after test."""
    global _SPECS
    if _SPECS is None:
        try:
            _SPECS = _read_specs()
        except JarMissing as exc:
            _SPECS = str(exc)
    if isinstance(_SPECS, str):
        pytest.fail(_SPECS)
    return _SPECS


# ---- JSON vocabulary ----------------------------------------------------------------------



def in_range(v: int, rng: tuple[int, int | None] | None) -> bool:
    return rng is not None and rng[0] <= v and (rng[1] is None or v <= rng[1])


def expected_default(jf: dict, struct_defaults):
    """The Python value our spec should carry for the JSON field's default."""
    t, d = jf["type"], jf.get("default")
    if isinstance(d, str) and d == "null":
        return None
    if t.startswith("[]"):
        return []
    if t in ("int8", "int16", "uint16", "int32", "int64"):
        return 0 if d is None else int(d, 0) if isinstance(d, str) else int(d)
    if t == "float64":
        return 0.0 if d is None else float(d)
    if t == "bool":
        return False if d is None else (d if isinstance(d, bool) else d == "true")
    if t == "string":
        return "" if d is None else d
    if t == "bytes":
        return b""
    if t == "uuid":
        return ZERO_UUID
    if t == "records":
        return None
    return struct_defaults()  # a struct-valued field: every sub-field at its default


# ---- the comparison -----------------------------------------------------------------------

def compare_struct(json_fields: list, ours: Struct, common: dict, path: str,
                   max_version: int, problems: list) -> None:
    ours_by_name = {f.name: f for f in ours.fields}
    json_names = [snake(jf["name"]) for jf in json_fields]
    extra = [n for n in ours_by_name if n not in json_names]
    if extra:
        problems.append(f"{path}: fields not in Kafka's spec: {extra}")
    missing = [n for n in json_names if n not in ours_by_name]
    if missing:
        problems.append(f"{path}: missing fields: {missing}")
    ours_order = [f.name for f in ours.fields if f.name in json_names]
    if ours_order != [n for n in json_names if n in ours_by_name]:
        problems.append(f"{path}: field order {ours_order} != Kafka's {json_names}")
    for jf in json_fields:
        name = snake(jf["name"])
        f = ours_by_name.get(name)
        if f is not None:
            compare_field(jf, f, common, f"{path}.{name}", max_version, problems)


def compare_field(jf: dict, f: Field, common: dict, path: str, max_version: int,
                  problems: list) -> None:
    if "flexibleVersions" in jf:
        problems.append(f"{path}: per-field flexibleVersions is not supported by our DSL")
    # versions
    rng = parse_versions(jf["versions"])
    if (f.since, f.until) != rng:
        problems.append(f"{path}: versions {f.since}-{f.until} != Kafka's {jf['versions']}")
    # nullable: compare where the field exists
    jnull = parse_versions(jf.get("nullableVersions"))
    top = max(max_version, f.since)
    for v in range(0, top + 1):
        if not f.present(v):
            continue
        if f.nullable_in(v) != in_range(v, jnull):
            problems.append(f"{path}: nullable in v{v} is {f.nullable_in(v)}, Kafka's "
                            f"nullableVersions {jf.get('nullableVersions')}")
            break
    # tags
    jtag = jf.get("tag")
    if f.tag != jtag:
        problems.append(f"{path}: tag {f.tag} != Kafka's {jtag}")
    jtagged = parse_versions(jf.get("taggedVersions"))
    if jtag is not None:
        if jtagged is None or f.tagged_since != jtagged[0] or (
                jtagged[1] is not None and (f.until is None or jtagged[1] < f.until)):
            problems.append(f"{path}: tagged from v{f.tagged_since} != Kafka's "
                            f"taggedVersions {jf.get('taggedVersions')}")
    # type (and recursion into structs)
    t = jf["type"]
    sub_fields = None
    if t.startswith("[]"):
        item = t[2:]
        if not isinstance(f.type, Array):
            problems.append(f"{path}: type {type(f.type).__name__} != Kafka's {t}")
        elif item in PRIMITIVES:
            if f.type.is_struct or f.type.item.name != item:
                problems.append(f"{path}: array item {_type_name(f.type.item)} != Kafka's {item}")
        else:
            if not f.type.is_struct:
                problems.append(f"{path}: array of {_type_name(f.type.item)} != Kafka's {t}")
            else:
                sub_fields = jf.get("fields") or common.get(item)
                sub_struct = f.type.item
    elif t in PRIMITIVES:
        if not isinstance(f.type, Type) or f.type.name != t:
            problems.append(f"{path}: type {_type_name(f.type)} != Kafka's {t}")
    else:  # a struct-valued field
        if not isinstance(f.type, Struct):
            problems.append(f"{path}: type {_type_name(f.type)} != Kafka's struct {t}")
        else:
            sub_fields = jf.get("fields") or common.get(t)
            sub_struct = f.type
    if sub_fields is not None:
        compare_struct(sub_fields, sub_struct, common, path, max_version, problems)
    elif not (t in PRIMITIVES or t[2:] in PRIMITIVES) and isinstance(f.type, (Array, Struct)):
        problems.append(f"{path}: Kafka's struct type {t} is neither inline nor a commonStruct")
    # default
    struct_type = f.type if isinstance(f.type, Struct) else None
    want = expected_default(jf, lambda: struct_type.defaults() if struct_type else {})
    if f.default != want or type(f.default) is not type(want):
        problems.append(f"{path}: default {f.default!r} != Kafka's {jf.get('default')!r} "
                        f"(expected {want!r})")


def _type_name(t) -> str:
    if isinstance(t, Type):
        return t.name
    if isinstance(t, Struct):
        return "struct"
    if isinstance(t, Array):
        return "[]" + _type_name(t.item)
    return repr(t)


# ---- tests --------------------------------------------------------------------------------

def test_every_expected_api_is_registered():
    assert {k: a.name for k, a in APIS.items()} == EXPECTED_APIS


def test_jar_is_the_lab_version():
    from groupctl.lab.dist import DEFAULT_KAFKA_VERSION
    kafka_specs()
    assert _clients_jar().name == f"kafka-clients-{DEFAULT_KAFKA_VERSION}.jar"


@pytest.mark.parametrize("direction", ["request", "response"])
@pytest.mark.parametrize("key", sorted(EXPECTED_APIS))
def test_spec_matches_kafka(key, direction):
    api = APIS[key]
    spec_name = f"{EXPECTED_APIS[key]}{direction.capitalize()}"
    js = kafka_specs().get(spec_name)
    assert js is not None, f"{spec_name}.json is not in the kafka-clients jar"
    assert js["apiKey"] == api.key
    assert js["type"] == direction
    problems = []
    lo, hi = parse_versions(js["validVersions"])
    if (api.min_version, api.max_version) != (lo, hi):
        problems.append(f"versions {api.min_version}-{api.max_version} != Kafka's "
                        f"validVersions {js['validVersions']}")
    flex = parse_versions(js["flexibleVersions"])
    if api.flexible_from != (flex[0] if flex else None):
        problems.append(f"flexible_from {api.flexible_from} != Kafka's flexibleVersions "
                        f"{js['flexibleVersions']}")
    common = {cs["name"]: cs["fields"] for cs in js.get("commonStructs", [])}
    struct = api.request if direction == "request" else api.response
    compare_struct(js["fields"], struct, common, spec_name, hi, problems)
    assert not problems, "\n".join(problems)


def test_comparison_catches_differences():
    """The checker itself: a spec that differs from Kafka's in each way is reported."""
    from groupctl.protocol.spec import Int32, Int64, String
    js = kafka_specs()["HeartbeatRequest"]
    bad = Struct(
        Field("group_id", String),
        Field("generation_id", Int64),                       # wrong type
        Field("member_id", String, since=1),                 # wrong versions
        Field("group_instance_id", String, since=3),         # not nullable, default ""
        Field("extra", Int32),                               # not in Kafka's
    )
    problems = []
    compare_struct(js["fields"], bad, {}, "HeartbeatRequest", 4, problems)
    text = "\n".join(problems)
    for needle in ("not in Kafka's spec: ['extra']", "generation_id: type int64",
                   "member_id: versions 1-None", "group_instance_id: nullable",
                   "group_instance_id: default"):
        assert needle in text, text
