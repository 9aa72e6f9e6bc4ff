"""Generate groupctl/protocol/records/schemas.py from the JSON specs of the coordinator's
records (common/message/*Key.json, *Value.json) inside the lab's kafka-group-coordinator
jar. The output is data in groupctl's spec language (protocol/schema.py), committed, and
checked field by field against the jar by tests/unit/test_record_schemas.py; run this
again when the lab's Kafka version moves:

    PYTHONPATH=. python tools/gen_record_schemas.py > groupctl/protocol/records/schemas.py
"""
from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path
from groupctl.protocol.jsonspec import parse_versions as versions, snake

PRIMITIVES = {"int8": "Int8", "int16": "Int16", "uint16": "Uint16", "int32": "Int32",
              "int64": "Int64", "float64": "Float64", "bool": "Bool", "string": "String",
              "bytes": "Bytes", "uuid": "Uuid", "records": "Records"}


def read_jar_specs(jar: Path) -> dict[str, dict]:
    specs = {}
    with zipfile.ZipFile(jar) as zf:
        for name in zf.namelist():
            if name.startswith("common/message/") and name.endswith(".json"):
                text = "\n".join(line for line in zf.read(name).decode().splitlines()
                                 if not line.lstrip().startswith("//"))
                specs[Path(name).stem] = with_versions(json.loads(text))
    return specs


def with_versions(spec: dict) -> dict:
    """Kafka's generator lets a tagged field leave out "versions" (they are then its
    taggedVersions: StreamsGroupMetadataValue.LastAssignmentConfigs); fill them in."""
    def fill(fields):
        for f in fields:
            if "versions" not in f and "taggedVersions" in f:
                f["versions"] = f["taggedVersions"]
            fill(f.get("fields", ()))

    fill(spec.get("fields", ()))
    for cs in spec.get("commonStructs", ()):
        fill(cs["fields"])
    return spec


def coordinator_jar() -> Path:
    from groupctl.lab.dist import kafka_libs

    jars = sorted(Path(kafka_libs()).glob("kafka-group-coordinator-[0-9]*.jar"))
    if not jars:
        raise SystemExit(f"no kafka-group-coordinator jar in {kafka_libs()}")
    return jars[-1]




class Gen:
    def __init__(self, spec: dict, prefix: str):
        self.common = {cs["name"]: cs["fields"] for cs in spec.get("commonStructs", [])}
        self.prefix = prefix
        self.defs: list[str] = []      # module-level named structs (commonStructs)
        self.named: dict[str, str] = {}

    def struct(self, fields: list, indent: int) -> str:
        pad = "    " * indent
        inner = "".join(f"{pad}    {self.field(f, indent + 1)},\n" for f in fields)
        return f"Struct(\n{inner}{pad})"

    def common_struct(self, name: str) -> str:
        if name not in self.named:
            var = f"_{self.prefix}_{name}".upper()
            self.named[name] = var
            self.defs.append(f"{var} = {self.struct(self.common[name], 0)}\n")
        return self.named[name]

    def type_expr(self, jf: dict, indent: int) -> str:
        t = jf["type"]
        if t.startswith("[]"):
            item = t[2:]
            if item in PRIMITIVES:
                return f"Array({PRIMITIVES[item]})"
            if "fields" in jf:
                return f"Array({self.struct(jf['fields'], indent)})"
            return f"Array({self.common_struct(item)})"
        if t in PRIMITIVES:
            return PRIMITIVES[t]
        return self.struct(jf["fields"], indent) if "fields" in jf else self.common_struct(t)

    def field(self, jf: dict, indent: int) -> str:
        args = [repr(snake(jf["name"])), self.type_expr(jf, indent)]
        lo, hi = versions(jf["versions"])
        if lo:
            args.append(f"since={lo}")
        if hi is not None:
            args.append(f"until={hi}")
        nullable = versions(jf.get("nullableVersions"))
        if nullable is not None:
            args.append("nullable=True" if nullable[0] == lo else f"nullable={nullable[0]}")
        # JSON null is no default at all for Kafka's generator (an array is then empty, a
        # struct default-filled); only the string "null" makes the default null
        if jf.get("default") is not None:
            args.append(f"default={self.default(jf)!r}")
        if "tag" in jf:
            args.append(f"tag={jf['tag']}")
            tagged = versions(jf["taggedVersions"])
            if tagged[0] != lo:
                args.append(f"tagged_since={tagged[0]}")
        return f"Field({', '.join(args)})"

    @staticmethod
    def default(jf: dict):
        t, d = jf["type"], jf.get("default")
        if d == "null":
            return None
        if t in ("int8", "int16", "uint16", "int32", "int64"):
            return d if isinstance(d, int) else int(d, 0)   # the JSON gives "0x7f" or 5
        if t == "float64":
            return float(d)
        if t == "bool":
            return d if isinstance(d, bool) else d == "true"
        return d


HEADER = '''"""The group coordinator's record schemas (`__consumer_offsets`), as data.

GENERATED by tools/gen_record_schemas.py from the JSON specs inside {jar}
(common/message/*Key.json and *Value.json); tests/unit/test_record_schemas.py checks them
field by field against the jar. Do not edit by hand: run the generator again.

RECORD_TYPES maps a record type (the key's int16 prefix, the specs' apiKey) to its
RecordSchema: the key's fields (version 0, never flexible) and the value's fields with
the value versions this Kafka knows and the first flexible one.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..schema import (  # noqa: F401 - every primitive, whether this Kafka uses it or not
    Array, Bool, Bytes, Field, Float64, Int8, Int16, Int32, Int64, Records, String, Struct,
    Uint16, Uuid,
)


@dataclass(frozen=True)
class RecordSchema:
    type: int
    name: str                 # "GroupMetadata": the specs' name without Key / Value
    key: Struct
    value: Struct
    value_versions: tuple[int, int]
    value_flexible_from: int | None

    def value_flexible(self, version: int) -> bool:
        return self.value_flexible_from is not None and version >= self.value_flexible_from

'''


def main() -> None:
    jar = coordinator_jar()
    specs = read_jar_specs(jar)
    out = [HEADER.format(jar=jar.name)]
    entries = []
    keys = sorted((s for s in specs.values() if s.get("type") == "coordinator-key"),
                  key=lambda s: s["apiKey"])
    for key in keys:
        name = key["name"][:-len("Key")]
        value = specs[name + "Value"]
        kg, vg = Gen(key, name + "_key"), Gen(value, name + "_value")
        kexpr, vexpr = kg.struct(key["fields"], 1), vg.struct(value["fields"], 1)
        out += kg.defs + vg.defs
        lo, hi = versions(value["validVersions"])
        flex = versions(value["flexibleVersions"])
        entries.append(
            f"    {key['apiKey']}: RecordSchema(\n        {key['apiKey']}, {name!r},\n"
            f"        key={kexpr.replace(chr(10), chr(10) + '    ')},\n"
            f"        value={vexpr.replace(chr(10), chr(10) + '    ')},\n"
            f"        value_versions=({lo}, {hi}), "
            f"value_flexible_from={flex[0] if flex else None}),\n")
    out.append("\nRECORD_TYPES: dict[int, RecordSchema] = {\n" + "".join(entries) + "}\n")
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
